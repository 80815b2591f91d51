import type { Application, AppStatus, InteractionMode, Visibility } from "@promptmint/contracts";
import { Card, CardBody } from "../../components/ui/card";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";
import { embedVisibilityHint } from "../../lib/embed-hint";
import { formatCents, priceChangeHint } from "../../lib/format";
import { centsOrZero, type PromptEditorErrors, type PromptEditorValues } from "./prompt-editor-values";

const STATUS_OPTIONS = [
  { value: "draft", label: "Draft" },
  { value: "live", label: "Live" },
  { value: "archived", label: "Archived" },
];

const MODE_OPTIONS = [
  { value: "completion", label: "Text Completion - Single input/output" },
  { value: "chat", label: "Chat Conversation - Multi-turn dialogue" },
];

const VISIBILITY_OPTIONS = [
  { value: "private", label: "Private" },
  { value: "public", label: "Public" },
  { value: "embed", label: "Embed" },
];

export function PromptEditorBasicTab({
  application,
  values,
  errors,
  onChange,
}: {
  /** The saved app: its price now and any announced increase. */
  application: Application;
  values: PromptEditorValues;
  errors: PromptEditorErrors;
  onChange: (changes: Partial<PromptEditorValues>) => void;
}) {
  return (
    <Card>
      <CardBody className="space-y-5">
        <div className="grid gap-5 sm:grid-cols-2">
          <TextField
            label="Application Name"
            value={values.name}
            error={errors.name}
            onChange={(event) => onChange({ name: event.target.value })}
          />
          <SelectField
            label="Status"
            options={STATUS_OPTIONS}
            value={values.status}
            error={errors.status}
            onChange={(event) => onChange({ status: event.target.value as AppStatus })}
          />
        </div>
        <TextareaField
          label="Description"
          rows={3}
          value={values.description}
          error={errors.description}
          onChange={(event) => onChange({ description: event.target.value })}
        />
        <SelectField
          label="Interaction Mode"
          options={MODE_OPTIONS}
          value={values.interaction_mode}
          error={errors.interaction_mode}
          hint="This setting affects the frontend app template and API interface."
          onChange={(event) => onChange({ interaction_mode: event.target.value as InteractionMode })}
        />
        <div className="grid gap-5 sm:grid-cols-2">
          <SelectField
            label="Visibility"
            options={VISIBILITY_OPTIONS}
            value={values.visibility}
            error={errors.visibility}
            hint={embedVisibilityHint(values.visibility)}
            onChange={(event) => onChange({ visibility: event.target.value as Visibility })}
          />
          <TextField
            label="Price per Call (cents)"
            type="number"
            inputMode="numeric"
            min={0}
            step={1}
            value={String(values.price_cents)}
            error={errors.price_cents}
            hint={[`${formatCents(values.price_cents)} per call`, priceChangeHint(application, " per call")]
              .filter(Boolean)
              .join(". ")}
            onChange={(event) => onChange({ price_cents: centsOrZero(event.target.value) })}
          />
        </div>
      </CardBody>
    </Card>
  );
}
