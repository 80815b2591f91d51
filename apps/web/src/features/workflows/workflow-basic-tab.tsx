import type { Application } from "@promptmint/contracts";
import { BasicSettingsFields } from "../../components/ui/basic-settings-fields";
import { Card, CardBody } from "../../components/ui/card";
import { editorPriceProps } from "../../components/ui/price-field";
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
          price={editorPriceProps(application, values.price_cents, errors.price_cents, (price_cents) =>
            onChange({ price_cents }),
          )}
        />
      </CardBody>
    </Card>
  );
}
