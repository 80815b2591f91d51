import type { Application, InteractionMode } from "@promptmint/contracts";
import { BasicSettingsFields } from "../../components/ui/basic-settings-fields";
import { Card, CardBody } from "../../components/ui/card";
import { SelectField } from "../../components/ui/select-field";
import { SwitchField } from "../../components/ui/switch-field";
import { priceChangeHint } from "../../lib/format";
import type { PromptEditorErrors, PromptEditorValues } from "./prompt-editor-values";

const MODE_OPTIONS = [
  { value: "completion", label: "Text Completion - Single input/output" },
  { value: "chat", label: "Chat Conversation - Multi-turn dialogue" },
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
      <CardBody>
        <BasicSettingsFields
          values={values}
          errors={errors}
          onChange={onChange}
          price={{
            // Dollars, as in the Prompt Builder of the same app (issue 32): one unit on both screens.
            unit: "dollars",
            min: 0,
            value: values.price,
            error: errors.price,
            note: priceChangeHint(application, " per call"),
            onChange: (event) => onChange({ price: event.target.value }),
          }}
        >
          <SelectField
            label="Interaction Mode"
            options={MODE_OPTIONS}
            value={values.interaction_mode}
            error={errors.interaction_mode}
            hint="This setting affects the frontend app template and API interface."
            onChange={(event) => onChange({ interaction_mode: event.target.value as InteractionMode })}
          />
          <SwitchField
            label="Allow tools"
            description="Callers may pass tools (function calling) to the model through the OpenAI API, for agents' tool loops; each model call of a loop is one paid call."
            checked={values.allow_tools}
            onChange={(allow_tools) => onChange({ allow_tools })}
          />
        </BasicSettingsFields>
      </CardBody>
    </Card>
  );
}
