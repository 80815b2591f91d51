import type {
  Application,
  AppStatus,
  ConfigSchema,
  UpdateApplication,
  UpdateWorkflowConfig,
  Visibility,
  WorkflowConfig,
  WorkflowProvider,
} from "@promptmint/contracts";
import type { NumberLimits } from "../../components/ui/number-field";
import { scheduledPriceCents } from "../../lib/format";
import type { WorkflowTestRequest } from "./api/test-workflow-config";

export type ProviderSlug = WorkflowProvider["slug"];
export type ConfigProperty = ConfigSchema["properties"][string];
type ProviderConfigValues = WorkflowConfig["provider_config"];

/** A provider field while typed: text for strings and numbers, a flag for booleans. */
export type ProviderFieldValues = Record<string, string | boolean>;

/** What the workflow editor edits; the limits stay text while typed. */
export interface WorkflowEditorValues {
  name: string;
  status: AppStatus;
  description: string;
  visibility: Visibility;
  price_cents: number;
  provider: ProviderSlug | "";
  provider_config: ProviderFieldValues;
  timeout_seconds: string;
  max_iterations: string;
  enable_logging: boolean;
}

/** Messages by field: `name`, `timeout_seconds`, ... and `provider_config.{key}` for provider fields. */
export type WorkflowEditorErrors = Record<string, string>;

export const BASIC_FIELDS: ReadonlySet<string> = new Set([
  "name",
  "status",
  "description",
  "visibility",
  "price_cents",
]);

/**
 * SPEC §2: secrets, and strings whose title says password or key, are typed unseen. Token and
 * secret too: the server stores (and masks) those titles as secrets as well.
 */
export function isMaskedProperty(property: ConfigProperty): boolean {
  return (
    property.type === "string" &&
    (property.secret === true || /password|key|token|secret/i.test(property.title))
  );
}

export function isRequiredProperty(schema: ConfigSchema, key: string): boolean {
  return schema.required.includes(key);
}

/** The form values of a provider's fields: the stored ones when given, else the schema's defaults. */
export function providerFieldValuesOf(
  provider: Pick<WorkflowProvider, "config_schema"> | null | undefined,
  stored: ProviderConfigValues = {},
): ProviderFieldValues {
  const values: ProviderFieldValues = {};
  for (const [key, property] of Object.entries(provider?.config_schema.properties ?? {})) {
    const value = stored[key] ?? property.default;
    if (property.type === "boolean") values[key] = value === true || value === "true";
    else values[key] = value === undefined ? "" : String(value);
  }
  return values;
}

export function editorValuesOf(application: Application, config: WorkflowConfig): WorkflowEditorValues {
  return {
    name: application.name,
    status: application.status,
    description: application.description,
    visibility: application.visibility,
    // The price the creator set (an announced increase included): saving it again changes nothing.
    price_cents: scheduledPriceCents(application),
    provider: config.provider?.slug ?? "",
    provider_config: providerFieldValuesOf(config.provider, config.provider_config),
    timeout_seconds: String(config.timeout_seconds),
    max_iterations: String(config.max_iterations),
    enable_logging: config.enable_logging,
  };
}

/**
 * The values the API stores: numbers as numbers, empty entries left out. Masked secrets go back
 * exactly as they came, which tells the server to keep the stored secret.
 */
export function providerConfigOf(schema: ConfigSchema, fields: ProviderFieldValues): ProviderConfigValues {
  const config: ProviderConfigValues = {};
  for (const [key, property] of Object.entries(schema.properties)) {
    const value = fields[key];
    if (property.type === "boolean") {
      config[key] = value === true;
      continue;
    }
    const text = typeof value === "string" ? value.trim() : "";
    if (text === "") continue;
    config[key] = property.type === "number" ? Number(text) : text;
  }
  return config;
}

/** The API's limits (UpdateWorkflowConfigSchema), as the inputs carry them. */
export const WORKFLOW_LIMITS = {
  timeout_seconds: { min: 1, max: 900, step: 1 },
  max_iterations: { min: 1, max: 100, step: 1 },
} as const satisfies Record<string, NumberLimits>;

function wholeNumberProblem(text: string, { min, max }: NumberLimits): string | undefined {
  const value = Number(text);
  if (text.trim() === "" || !Number.isInteger(value) || value < min || value > max) {
    return `Must be a whole number between ${min} and ${max}`;
  }
  return undefined;
}

/** Problems to fix before saving; the limits are the API's (UpdateWorkflowConfigSchema). */
export function validateWorkflowEditor(
  values: WorkflowEditorValues,
  schema: ConfigSchema | undefined,
): WorkflowEditorErrors {
  const errors: WorkflowEditorErrors = {};
  if (values.name.trim() === "") errors.name = "Application name is required";
  if (values.price_cents < 0) errors.price_cents = "Must be at least 0";
  for (const [key, property] of Object.entries(schema?.properties ?? {})) {
    const value = values.provider_config[key];
    const text = typeof value === "string" ? value.trim() : "";
    if (property.type === "boolean") continue;
    if (text === "" && isRequiredProperty(schema as ConfigSchema, key)) {
      errors[`provider_config.${key}`] = `${property.title} is required`;
    } else if (property.type === "number" && text !== "" && !Number.isFinite(Number(text))) {
      errors[`provider_config.${key}`] = `${property.title} must be a number`;
    }
  }
  const timeout = wholeNumberProblem(values.timeout_seconds, WORKFLOW_LIMITS.timeout_seconds);
  if (timeout) errors.timeout_seconds = timeout;
  const iterations = wholeNumberProblem(values.max_iterations, WORKFLOW_LIMITS.max_iterations);
  if (iterations) errors.max_iterations = iterations;
  return errors;
}

export function applicationUpdateOf(values: WorkflowEditorValues): UpdateApplication {
  return {
    name: values.name.trim(),
    description: values.description,
    status: values.status,
    visibility: values.visibility,
    price_cents: values.price_cents,
  };
}

/**
 * SPEC §7: provider with its settings and the limits; no provider until one is chosen. `note` is
 * the creator's note of what changed (the new version's changelog), none when left empty.
 */
export function workflowUpdateOf(
  values: WorkflowEditorValues,
  schema: ConfigSchema | undefined,
  note = "",
): UpdateWorkflowConfig {
  const limits = {
    timeout_seconds: Number(values.timeout_seconds),
    max_iterations: Number(values.max_iterations),
    enable_logging: values.enable_logging,
    ...(note.trim() ? { changelog: note.trim() } : {}),
  };
  if (values.provider === "" || !schema) return limits;
  return {
    provider: values.provider,
    provider_config: providerConfigOf(schema, values.provider_config),
    ...limits,
  };
}

export function testRequestOf(
  values: WorkflowEditorValues,
  schema: ConfigSchema | undefined,
): WorkflowTestRequest {
  return {
    ...(values.provider === "" ? {} : { provider: values.provider }),
    provider_config: schema ? providerConfigOf(schema, values.provider_config) : {},
  };
}
