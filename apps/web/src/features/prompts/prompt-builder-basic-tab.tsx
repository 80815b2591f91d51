import type { AppStatus, IoSchema, Visibility } from "@promptmint/contracts";
import { useState } from "react";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";
import type { PromptBuilderErrors, PromptBuilderValues } from "./prompt-builder-values";
import { slugFromName } from "./prompt-slug";
import { TemplateEditor } from "./template-editor";

const STATUS_OPTIONS = [
  { value: "draft", label: "Draft" },
  { value: "live", label: "Live" },
  { value: "archived", label: "Archived" },
];

const VISIBILITY_OPTIONS = [
  { value: "private", label: "Private" },
  { value: "public", label: "Public" },
  { value: "embed", label: "Embeddable" },
];

const VARIABLE_HINT = "Type {{ to insert a variable from the input schema; hover a variable for its details.";

export function PromptBuilderBasicTab({
  values,
  errors,
  creating,
  inputSchema,
  onChange,
}: {
  values: PromptBuilderValues;
  errors: PromptBuilderErrors;
  creating: boolean;
  inputSchema: IoSchema;
  onChange: (changes: Partial<PromptBuilderValues>) => void;
}) {
  // The slug follows the name until it is edited by hand.
  const [slugEdited, setSlugEdited] = useState(false);

  return (
    <div className="space-y-6">
      <div className="grid gap-5 sm:grid-cols-2">
        <TextField
          label="Prompt Name"
          required
          placeholder="Blog Post Writer"
          value={values.name}
          error={errors.name}
          onChange={(event) => {
            const name = event.target.value;
            onChange(creating && !slugEdited ? { name, slug: slugFromName(name) } : { name });
          }}
        />
        <TextField
          label="URL Slug"
          required
          disabled={!creating}
          placeholder="blog-post-writer"
          spellCheck={false}
          autoComplete="off"
          value={values.slug}
          error={errors.slug}
          hint={
            creating
              ? "Generated from the name; it names your API endpoint."
              : "Cannot be changed after creation"
          }
          onChange={(event) => {
            setSlugEdited(true);
            onChange({ slug: event.target.value });
          }}
        />
      </div>
      <TextareaField
        label="Description"
        rows={3}
        placeholder="What does this prompt do?"
        value={values.description}
        error={errors.description}
        onChange={(event) => onChange({ description: event.target.value })}
      />
      <div className="grid gap-5 sm:grid-cols-3">
        <SelectField
          label="Status"
          options={STATUS_OPTIONS}
          value={values.status}
          error={errors.status}
          onChange={(event) => onChange({ status: event.target.value as AppStatus })}
        />
        <SelectField
          label="Visibility"
          options={VISIBILITY_OPTIONS}
          value={values.visibility}
          error={errors.visibility}
          onChange={(event) => onChange({ visibility: event.target.value as Visibility })}
        />
        <TextField
          label="Price per Call (USD)"
          type="number"
          inputMode="decimal"
          min={0.01}
          step={0.01}
          required
          value={values.price}
          error={errors.price}
          // SPEC §9 takes dollars here and cents on the other screens: say what it is in cents.
          hint={centsHint(values.price)}
          onChange={(event) => onChange({ price: event.target.value })}
        />
      </div>
      <TemplateEditor
        label="System Prompt"
        value={values.system_prompt}
        onChange={(system_prompt) => onChange({ system_prompt })}
        inputSchema={inputSchema}
        error={errors.system_prompt}
        placeholder="You are a helpful assistant that..."
        hint={VARIABLE_HINT}
      />
      <TemplateEditor
        label="User Prompt Template"
        value={values.prompt_template}
        onChange={(prompt_template) => onChange({ prompt_template })}
        inputSchema={inputSchema}
        error={errors.prompt_template}
        placeholder="Write a blog post about {{topic}}."
        hint={VARIABLE_HINT}
        minHeight="10rem"
      />
    </div>
  );
}

/** The price typed in dollars, as the cents it is charged in ("= 5¢ per call"). */
function centsHint(price: string): string | undefined {
  const dollars = Number(price);
  if (!price.trim() || !Number.isFinite(dollars) || dollars <= 0) return undefined;
  return `= ${Math.round(dollars * 100)}¢ per call`;
}
