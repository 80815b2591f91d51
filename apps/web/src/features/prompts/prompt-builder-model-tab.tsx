import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { useModelCatalog } from "./api/list-models";
import { BUILDER_MODELS, modelOptionsOf } from "./model-options";
import type { PromptBuilderErrors, PromptBuilderValues } from "./prompt-builder-values";

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
    <div className="grid gap-5 sm:grid-cols-2">
      <SelectField
        label="Model"
        className="sm:col-span-2"
        options={modelOptionsOf(BUILDER_MODELS, catalog.data, values.model)}
        value={values.model}
        error={errors.model}
        onChange={(event) => onChange({ model: event.target.value })}
      />
      <TextField
        label="Temperature"
        type="number"
        inputMode="decimal"
        min={0}
        max={2}
        step={0.1}
        value={values.temperature}
        error={errors.temperature}
        hint="0 to 2: higher is more creative."
        onChange={(event) => onChange({ temperature: event.target.value })}
      />
      <TextField
        label="Max Tokens"
        type="number"
        inputMode="numeric"
        min={1}
        max={8192}
        step={1}
        value={values.max_tokens}
        error={errors.max_tokens}
        hint="1 to 8192: the longest answer."
        onChange={(event) => onChange({ max_tokens: event.target.value })}
      />
      <TextField
        label="Top P"
        type="number"
        inputMode="decimal"
        min={0}
        max={1}
        step={0.05}
        value={values.top_p}
        error={errors.top_p}
        hint="0 to 1: nucleus sampling."
        onChange={(event) => onChange({ top_p: event.target.value })}
      />
      <TextField
        label="Frequency Penalty"
        type="number"
        inputMode="decimal"
        min={-2}
        max={2}
        step={0.1}
        value={values.frequency_penalty}
        error={errors.frequency_penalty}
        hint="-2 to 2: positive values discourage repetition."
        onChange={(event) => onChange({ frequency_penalty: event.target.value })}
      />
    </div>
  );
}
