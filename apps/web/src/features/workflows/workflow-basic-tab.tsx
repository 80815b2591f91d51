import type { Application, AppStatus, Visibility } from "@promptmint/contracts";
import { Card, CardBody } from "../../components/ui/card";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";
import { embedVisibilityHint } from "../../lib/embed-hint";
import { formatCents, priceChangeHint } from "../../lib/format";
import { centsOrZero, type WorkflowEditorErrors, type WorkflowEditorValues } from "./workflow-editor-values";
import { STATUS_OPTIONS, VISIBILITY_OPTIONS } from "./workflow-options";

export function WorkflowBasicTab({
  application,
  values,
  errors,
  onChange,
}: {
  /** The saved app: its price now and any announced increase. */
  application: Application;
  values: WorkflowEditorValues;
  errors: WorkflowEditorErrors;
  onChange: (changes: Partial<WorkflowEditorValues>) => void;
}) {
  return (
    <Card>
      <CardBody className="space-y-5">
        <div className="grid gap-5 sm:grid-cols-2">
          <TextField
            label="Application Name"
            required
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
          placeholder="Describe what your workflow does..."
          value={values.description}
          error={errors.description}
          onChange={(event) => onChange({ description: event.target.value })}
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
