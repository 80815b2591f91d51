import type { IoSchema } from "@promptmint/contracts";
import { useState } from "react";
import { BasicSettingsFields, BUILDER_VISIBILITY_OPTIONS } from "../../components/ui/basic-settings-fields";
import { TextField } from "../../components/ui/text-field";
import type { PromptBuilderErrors, PromptBuilderValues } from "./prompt-builder-values";
import { slugFromName } from "./prompt-slug";
import { TemplateEditor } from "./template-editor";

const VARIABLE_HINT = "Type {{ to insert a variable from the input schema; hover a variable for its details.";

/** The two templates a prompt app sends the model, system first. */
const TEMPLATES = [
  {
    name: "system_prompt",
    label: "System Prompt",
    placeholder: "You are a helpful assistant that...",
    minHeight: undefined,
  },
  {
    name: "prompt_template",
    label: "User Prompt Template",
    placeholder: "Write a blog post about {{topic}}.",
    minHeight: "10rem",
  },
] as const;

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
      <BasicSettingsFields
        values={values}
        errors={errors}
        onChange={(changes) =>
          onChange(
            changes.name !== undefined && creating && !slugEdited
              ? { ...changes, slug: slugFromName(changes.name) }
              : changes,
          )
        }
        nameLabel="Prompt Name"
        namePlaceholder="Blog Post Writer"
        descriptionPlaceholder="What does this prompt do?"
        visibilityOptions={BUILDER_VISIBILITY_OPTIONS}
        slug={
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
        }
        price={{
          // SPEC §5: dollars here, cents on the other screens.
          unit: "dollars",
          min: 0.01,
          required: true,
          value: values.price,
          error: errors.price,
          onChange: (event) => onChange({ price: event.target.value }),
        }}
      />
      {TEMPLATES.map(({ name, label, placeholder, minHeight }) => (
        <TemplateEditor
          key={name}
          label={label}
          value={values[name]}
          onChange={(template) => onChange({ [name]: template })}
          inputSchema={inputSchema}
          error={errors[name]}
          placeholder={placeholder}
          hint={VARIABLE_HINT}
          minHeight={minHeight}
        />
      ))}
    </div>
  );
}
