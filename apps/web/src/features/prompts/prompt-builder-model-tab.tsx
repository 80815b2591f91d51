import { useMemo } from "react";
import { BUILDER_SETTING_LIMITS, ModelSettingsFields } from "../../components/ui/model-settings-fields";
import { useModelCatalog } from "../../lib/models-query";
import { ModelCostPanel } from "./model-cost-panel";
import { ModelKeysField } from "./model-keys-field";
import { BUILDER_MODELS, modelOptionsOf } from "./model-options";
import {
  BUILDER_MODEL_SETTINGS,
  centsOfDollars,
  type PromptBuilderErrors,
  type PromptBuilderValues,
} from "./prompt-builder-values";
import { schemaOf } from "./schema-fields";

export function PromptBuilderModelTab({
  values,
  errors,
  onChange,
}: {
  values: PromptBuilderValues;
  errors: PromptBuilderErrors;
  onChange: (changes: Partial<PromptBuilderValues>) => void;
}) {
  const catalog = useModelCatalog();
  // The same margin as the editor's, from the builder's own fields (price typed in dollars).
  const costSettings = useMemo(() => {
    const output = schemaOf(values.output_fields);
    return {
      model: values.model,
      model_keys: values.model_keys,
      max_tokens: values.max_tokens,
      price_cents: centsOfDollars(values.price),
      system_prompt: values.system_prompt,
      prompt_template: values.prompt_template,
      input_schema: schemaOf(values.input_fields),
      output_schema: Object.keys(output.properties).length > 0 ? output : null,
    };
  }, [values]);
  return (
    <div className="space-y-6">
      <ModelSettingsFields
        modelOptions={modelOptionsOf(BUILDER_MODELS, catalog.data, values.model)}
        values={values}
        errors={errors}
        onChange={onChange}
        settings={BUILDER_MODEL_SETTINGS}
        limits={BUILDER_SETTING_LIMITS}
        beside={
          <ModelKeysField
            model={values.model}
            value={values.model_keys}
            onChange={(model_keys) => onChange({ model_keys })}
          />
        }
      />
      <ModelCostPanel settings={costSettings} />
    </div>
  );
}
