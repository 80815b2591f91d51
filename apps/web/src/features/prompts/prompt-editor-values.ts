import type {
  Application,
  AppStatus,
  InteractionMode,
  IoSchema,
  ModelKeysMode,
  PromptConfig,
  TestConfigRequest,
  UpdateApplication,
  UpdatePromptConfig,
  Visibility,
} from "@promptmint/contracts";
import { IoSchemaSchema } from "@promptmint/contracts";
import {
  type ModelNumberSetting,
  modelSettingsOf,
  modelSettingsProblems,
} from "../../components/ui/model-settings-fields";
import { scheduledPriceCents } from "../../lib/format";
import { sampleInputsOf } from "../../lib/template-variables";
import { centsOfDollars } from "./prompt-builder-values";

/** What the prompt editor edits; model numbers stay text while typed. */
export interface PromptEditorValues {
  name: string;
  status: AppStatus;
  description: string;
  interaction_mode: InteractionMode;
  /** Callers may pass tools to the model (docs/decisions/053). */
  allow_tools: boolean;
  visibility: Visibility;
  /** Dollars, as typed, e.g. "1.50": the builder's unit, so both screens of an app read alike. */
  price: string;
  model: string;
  /** Whose model keys calls use (docs/decisions/026). */
  model_keys: ModelKeysMode;
  max_tokens: string;
  temperature: string;
  top_p: string;
  frequency_penalty: string;
  presence_penalty: string;
  system_prompt: string;
  prompt_template: string;
  /** The last valid schemas; the editors' text may be mid-edit and invalid. */
  input_schema: IoSchema;
  output_schema: IoSchema | null;
}

export type PromptEditorField = keyof PromptEditorValues;
export type PromptEditorErrors = Partial<Record<PromptEditorField, string>>;

export function editorValuesOf(application: Application, config: PromptConfig): PromptEditorValues {
  return {
    name: application.name,
    status: application.status,
    description: application.description,
    interaction_mode: application.interaction_mode,
    allow_tools: application.allow_tools,
    visibility: application.visibility,
    // The price the creator set (an announced increase included): saving it again changes nothing.
    price: (scheduledPriceCents(application) / 100).toFixed(2),
    ...promptValuesOf(config),
  };
}

/**
 * The prompt half of the values: the latest version, which is what the editor edits (a live app's
 * callers keep getting production until it is promoted, docs/decisions/057).
 */
export function promptValuesOf(config: PromptConfig) {
  const latest = config.latest_version;
  return {
    model: config.model,
    model_keys: config.model_keys,
    max_tokens: String(config.max_tokens),
    temperature: String(config.temperature),
    top_p: String(config.top_p),
    frequency_penalty: String(config.frequency_penalty),
    presence_penalty: String(config.presence_penalty),
    system_prompt: latest.system_prompt,
    prompt_template: latest.prompt_template,
    input_schema: latest.input_schema,
    output_schema: latest.output_schema,
  };
}

export function schemaText(schema: IoSchema | null): string {
  return schema ? JSON.stringify(schema, null, 2) : "";
}

/**
 * SPEC §2: invalid JSON edits are silently ignored. Text that is a valid schema (or empty, for
 * the optional output schema) is the new value; anything else is `undefined`, i.e. ignored.
 */
export function schemaFromText(text: string, optional: boolean): IoSchema | null | undefined {
  if (text.trim() === "" || text.trim() === "null") return optional ? null : undefined;
  try {
    const parsed = IoSchemaSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** SPEC §2: the editor's model settings, in its order. */
export const EDITOR_MODEL_SETTINGS: readonly ModelNumberSetting[] = [
  "max_tokens",
  "temperature",
  "top_p",
  "frequency_penalty",
  "presence_penalty",
];

/** The editor's price, in dollars like the builder's; 0 (free to call) is allowed here as before. */
function priceProblem(price: string): string | undefined {
  const cents = centsOfDollars(price);
  if (Number.isNaN(cents)) return "Enter the price in dollars, e.g. 1.50";
  return cents < 0 ? "Price must be $0.00 or more" : undefined;
}

/** SPEC §5: the editor's limits. */
export function validatePromptEditor(values: PromptEditorValues): PromptEditorErrors {
  const checks: PromptEditorErrors = {
    price: priceProblem(values.price),
    ...modelSettingsProblems(values, EDITOR_MODEL_SETTINGS),
  };
  return Object.fromEntries(Object.entries(checks).filter(([, message]) => message !== undefined));
}

export function editorApplicationUpdateOf(values: PromptEditorValues): UpdateApplication {
  return {
    name: values.name,
    description: values.description,
    status: values.status,
    visibility: values.visibility,
    price_cents: centsOfDollars(values.price),
    interaction_mode: values.interaction_mode,
    allow_tools: values.allow_tools,
  };
}

/**
 * SPEC §7: the model settings with the template and both schemas, and the creator's note of what
 * changed (the new version's changelog; none when left empty, shown as "No note").
 */
export function editorPromptUpdateOf(values: PromptEditorValues, note = ""): UpdatePromptConfig {
  return {
    ...modelSettingsOf(values),
    model_keys: values.model_keys,
    system_prompt: values.system_prompt,
    prompt_template: values.prompt_template,
    input_schema: values.input_schema,
    output_schema: values.output_schema,
    ...(note.trim() ? { changelog: note.trim() } : {}),
  };
}

/** SPEC §7: the template and model settings, with sample values for the schema's inputs. */
export function editorTestRequestOf(values: PromptEditorValues): TestConfigRequest {
  return {
    prompt_template: values.prompt_template,
    system_prompt: values.system_prompt,
    ...modelSettingsOf(values),
    input_schema: values.input_schema,
    test_inputs: sampleInputsOf(values.input_schema),
  };
}
