import type { Application } from "@promptmint/contracts";
import { BasicSettingsFields } from "../../components/ui/basic-settings-fields";
import { Card, CardBody } from "../../components/ui/card";
import { centsOfEntry } from "../../components/ui/price-field";
import { priceChangeHint } from "../../lib/format";
import type { WorkflowEditorErrors, WorkflowEditorValues } from "./workflow-editor-values";

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
      <CardBody>
        <BasicSettingsFields
          values={values}
          errors={errors}
          onChange={onChange}
          descriptionPlaceholder="Describe what your workflow does..."
          price={{
            unit: "cents",
            min: 0,
            value: String(values.price_cents),
            error: errors.price_cents,
            note: priceChangeHint(application, " per call"),
            onChange: (event) => onChange({ price_cents: centsOfEntry(event.target.value) }),
          }}
        />
      </CardBody>
    </Card>
  );
}
