import type { ReactNode } from "react";
import { NumberField, type NumberLimits, rangeProblem } from "./number-field";
import { SelectField, type SelectOption } from "./select-field";

// The model settings of a prompt app as the prompt builder and the prompt editor show them
// (SPEC §2): one section, so a label, a limit or a hint is fixed once for both.

export interface ModelSettingsValues {
  model: string;
  temperature: string;
  max_tokens: string;
  top_p: string;
  frequency_penalty: string;
  presence_penalty: string;
}

/** The settings as the API takes them: numbers, not the fields' texts. */
export function modelSettingsOf(values: ModelSettingsValues) {
  return {
    model: values.model,
    temperature: Number(values.temperature),
    max_tokens: Number(values.max_tokens),
    top_p: Number(values.top_p),
    frequency_penalty: Number(values.frequency_penalty),
    presence_penalty: Number(values.presence_penalty),
  };
}

export type ModelNumberSetting = Exclude<keyof ModelSettingsValues, "model">;
export type ModelSettingsErrors = Partial<Record<keyof ModelSettingsValues, string>>;

/** SPEC §5: the prompt editor's limits. */
export const MODEL_SETTING_LIMITS: Readonly<Record<ModelNumberSetting, NumberLimits>> = {
  temperature: { min: 0, max: 2, step: 0.1 },
  max_tokens: { min: 1, max: 8192, step: 1 },
  top_p: { min: 0, max: 1, step: 0.05 },
  frequency_penalty: { min: 0, max: 1, step: 0.05 },
  presence_penalty: { min: 0, max: 1, step: 0.05 },
};

/** SPEC §5: the builder's frequency penalty is wider; its other limits are the editor's. */
export const BUILDER_SETTING_LIMITS: Readonly<Record<ModelNumberSetting, NumberLimits>> = {
  ...MODEL_SETTING_LIMITS,
  frequency_penalty: { min: -2, max: 2, step: 0.1 },
};

const SETTINGS: Readonly<Record<ModelNumberSetting, { label: string; about: string }>> = {
  temperature: { label: "Temperature", about: "higher is more creative" },
  max_tokens: { label: "Max Tokens", about: "the longest answer" },
  top_p: { label: "Top P", about: "nucleus sampling" },
  frequency_penalty: { label: "Frequency Penalty", about: "positive values discourage repetition" },
  presence_penalty: { label: "Presence Penalty", about: "positive values encourage new topics" },
};

/** The message for each listed setting outside its limits (max tokens must also be whole). */
export function modelSettingsProblems(
  values: Partial<ModelSettingsValues>,
  settings: readonly ModelNumberSetting[],
  limits: Readonly<Record<ModelNumberSetting, NumberLimits>> = MODEL_SETTING_LIMITS,
): ModelSettingsErrors {
  const problems: ModelSettingsErrors = {};
  for (const setting of settings) {
    const problem = rangeProblem(values[setting] ?? "", limits[setting], setting === "max_tokens");
    if (problem) problems[setting] = problem;
  }
  return problems;
}

/**
 * The model (with `beside` it, the editor's model keys) and the listed number settings, in the
 * order the screen lists them, each with its limits as input attributes and as a hint.
 */
export function ModelSettingsFields({
  modelOptions,
  values,
  errors,
  onChange,
  settings,
  limits = MODEL_SETTING_LIMITS,
  beside,
}: {
  modelOptions: readonly SelectOption[];
  values: Pick<ModelSettingsValues, "model"> & Partial<ModelSettingsValues>;
  errors: ModelSettingsErrors;
  onChange: (changes: Partial<ModelSettingsValues>) => void;
  settings: readonly ModelNumberSetting[];
  limits?: Readonly<Record<ModelNumberSetting, NumberLimits>>;
  beside?: ReactNode;
}) {
  return (
    <div className="space-y-5">
      <div className="grid gap-5 sm:grid-cols-2">
        <SelectField
          label="Model"
          className={beside ? undefined : "sm:col-span-2"}
          options={modelOptions}
          value={values.model}
          error={errors.model}
          onChange={(event) => onChange({ model: event.target.value })}
        />
        {beside}
      </div>
      <div className="grid gap-5 sm:grid-cols-2 lg:grid-cols-3">
        {settings.map((setting) => {
          const { min, max } = limits[setting];
          return (
            <NumberField
              key={setting}
              label={SETTINGS[setting].label}
              {...limits[setting]}
              value={values[setting] ?? ""}
              error={errors[setting]}
              hint={`${min} to ${max}: ${SETTINGS[setting].about}.`}
              onChange={(event) => onChange({ [setting]: event.target.value })}
            />
          );
        })}
      </div>
    </div>
  );
}
