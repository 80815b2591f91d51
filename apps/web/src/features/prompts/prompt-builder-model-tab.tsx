import { BUILDER_SETTING_LIMITS, ModelSettingsFields } from "../../components/ui/model-settings-fields";
import { useModelCatalog } from "./api/list-models";
import { BUILDER_MODELS, modelOptionsOf } from "./model-options";
import {
  BUILDER_MODEL_SETTINGS,
  type PromptBuilderErrors,
  type PromptBuilderValues,
} from "./prompt-builder-values";

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
  return (
    <ModelSettingsFields
      modelOptions={modelOptionsOf(BUILDER_MODELS, catalog.data, values.model)}
      values={values}
      errors={errors}
      onChange={onChange}
      settings={BUILDER_MODEL_SETTINGS}
      limits={BUILDER_SETTING_LIMITS}
    />
  );
}
