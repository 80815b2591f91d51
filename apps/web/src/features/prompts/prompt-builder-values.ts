import type {
  Application,
  AppStatus,
  CreateApplication,
  ModelKeysMode,
  PromptConfig,
  UpdateApplication,
  UpdatePromptConfig,
  Visibility,
} from "@promptmint/contracts";
import { SLUG_PATTERN } from "@promptmint/contracts";
import {
  BUILDER_SETTING_LIMITS,
  type ModelNumberSetting,
  type ModelSettingsValues,
  modelSettingsOf,
  modelSettingsProblems,
} from "../../components/ui/model-settings-fields";
import { scheduledPriceCents } from "../../lib/format";
import { fieldsOf, hasFieldProblems, type SchemaField, schemaOf } from "./schema-fields";

/**
 * Everything the prompt builder edits; numbers stay text while typed and are read on save. Of the
 * model settings, presence_penalty is not on the builder's Model tab (SPEC) and is kept as loaded.
 */
export interface PromptBuilderValues extends ModelSettingsValues {
  name: string;
  slug: string;
  description: string;
  status: AppStatus;
  visibility: Visibility;
  /** Dollars, e.g. "1.00". */
  price: string;
  /** Whose model keys calls use (docs/decisions/026), as in the editor. */
  model_keys: ModelKeysMode;
  system_prompt: string;
  prompt_template: string;
  input_fields: SchemaField[];
  output_fields: SchemaField[];
}

export type PromptBuilderField =
  | Exclude<keyof PromptBuilderValues, "input_fields" | "output_fields">
  | "schema";
export type PromptBuilderErrors = Partial<Record<PromptBuilderField, string>>;

/** SPEC §9: a new builder prompt. */
export function newPromptBuilderValues(): PromptBuilderValues {
  return {
    name: "",
    slug: "",
    description: "",
    status: "draft",
    visibility: "private",
    price: "1.00",
    model_keys: "platform",
    system_prompt: "",
    prompt_template: "",
    input_fields: [],
    output_fields: [],
    model: "gpt-4-turbo",
    temperature: "0.7",
    max_tokens: "2048",
    top_p: "1",
    frequency_penalty: "0",
    presence_penalty: "0",
  };
}

export function builderValuesOf(application: Application, config: PromptConfig): PromptBuilderValues {
  // The latest version, as the editor: what was saved last, not only what callers get (decision 057).
  const version = config.latest_version;
  return {
    name: application.name,
    slug: application.slug,
    description: application.description,
    status: application.status,
    visibility: application.visibility,
    // The price the creator set (an announced increase included): saving it again changes nothing.
    price: (scheduledPriceCents(application) / 100).toFixed(2),
    model_keys: config.model_keys,
    system_prompt: version.system_prompt,
    prompt_template: version.prompt_template,
    input_fields: fieldsOf(version.input_schema),
    output_fields: fieldsOf(version.output_schema),
    model: version.model,
    temperature: String(version.temperature),
    max_tokens: String(version.max_tokens),
    top_p: String(version.top_p),
    frequency_penalty: String(version.frequency_penalty),
    presence_penalty: String(version.presence_penalty),
  };
}

/** SPEC §5: the price is typed in dollars and stored in cents, rounded. */
export function centsOfDollars(text: string): number {
  const dollars = Number(text);
  return Number.isFinite(dollars) && text.trim() !== "" ? Math.round(dollars * 100) : Number.NaN;
}

/**
 * SPEC §5's save checks (whitespace-only counts as empty), then what the API would refuse.
 * The three SPEC messages come first, in SPEC's order.
 */
export function validatePromptBuilder(values: PromptBuilderValues, creating: boolean): PromptBuilderErrors {
  const errors: PromptBuilderErrors = {};
  if (values.name.trim() === "") errors.name = "Prompt name is required";
  if (values.system_prompt.trim() === "") errors.system_prompt = "System prompt is required";
  if (values.prompt_template.trim() === "") errors.prompt_template = "User prompt template is required";
  if (creating) {
    if (values.slug.trim() === "") errors.slug = "URL slug is required";
    else if (!SLUG_PATTERN.test(values.slug)) {
      errors.slug = "Use lowercase letters, digits and single hyphens";
    }
  }
  const cents = centsOfDollars(values.price);
  if (Number.isNaN(cents) || cents < 1) errors.price = "Price must be at least $0.01";
  Object.assign(errors, modelSettingsProblems(values, BUILDER_MODEL_SETTINGS, BUILDER_SETTING_LIMITS));
  if (hasFieldProblems(values.input_fields) || hasFieldProblems(values.output_fields)) {
    errors.schema = "Fix the schema field names before saving";
  }
  for (const key of Object.keys(errors) as PromptBuilderField[]) {
    if (errors[key] === undefined) delete errors[key];
  }
  return errors;
}

/** `POST /app/` for a new builder prompt: a prompt app with the builder's slug. */
export function createRequestOf(values: PromptBuilderValues): CreateApplication {
  return {
    name: values.name.trim(),
    slug: values.slug,
    description: values.description,
    type: "prompt",
    interaction_mode: "completion",
    visibility: values.visibility,
    price_cents: centsOfDollars(values.price),
  };
}

export function applicationUpdateOf(values: PromptBuilderValues): UpdateApplication {
  return {
    name: values.name.trim(),
    description: values.description,
    status: values.status,
    visibility: values.visibility,
    price_cents: centsOfDollars(values.price),
  };
}

/**
 * `PATCH /app/{slug}/prompt/`: the prompts, schemas and current model settings. `promote` releases
 * the saved version to a live app's callers (Save & Publish); without it a live app's save is a
 * new version its callers do not get until it is promoted (docs/decisions/057).
 */
export function promptUpdateOf(values: PromptBuilderValues, promote = false): UpdatePromptConfig {
  const output = schemaOf(values.output_fields);
  return {
    ...modelSettingsOf(values),
    model_keys: values.model_keys,
    system_prompt: values.system_prompt,
    prompt_template: values.prompt_template,
    input_schema: schemaOf(values.input_fields),
    output_schema: Object.keys(output.properties).length > 0 ? output : null,
    ...(promote ? { promote: true } : {}),
  };
}

/** SPEC §2: the builder's Model tab, in its order. */
export const BUILDER_MODEL_SETTINGS: readonly ModelNumberSetting[] = [
  "temperature",
  "max_tokens",
  "top_p",
  "frequency_penalty",
];

/** Which tab shows a field, so a failed save can open it. */
export function tabOfField(field: PromptBuilderField): PromptBuilderTab {
  if (field === "schema") return "schema";
  if (["model", "temperature", "max_tokens", "top_p", "frequency_penalty"].includes(field)) return "model";
  return "basic";
}

export type PromptBuilderTab = "basic" | "schema" | "model" | "preview";
