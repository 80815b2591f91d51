import type { ConfigSchema } from "@promptmint/contracts";
import { invalidFields } from "../../lib/errors.ts";
import { maskSecret, type SecretBox } from "../../lib/secrets.ts";
import type { ConfigValues, WorkflowProviderAdapter } from "./providers/provider.ts";

/** How provider_config is stored: plain values, and secrets as ciphertext plus their last 4 characters. */
export type SealedSecret = { $secret: string; last4: string };
export type SealedConfig = Record<string, string | number | boolean | SealedSecret>;

const isSealed = (value: unknown): value is SealedSecret =>
  typeof value === "object" && value !== null && "$secret" in value;

export function isSecretField(schema: ConfigSchema, key: string): boolean {
  const property = schema.properties[key];
  return Boolean(property?.secret) || /password|key|token|secret/i.test(property?.title ?? "");
}

/** Values as responses show them: every secret masked. */
export function maskConfig(sealed: SealedConfig): ConfigValues {
  return Object.fromEntries(
    Object.entries(sealed).map(([key, value]) => [key, isSealed(value) ? `••••${value.last4}` : value]),
  );
}

/** Values the adapter uses, secrets decrypted. Never leaves the server. */
export function unsealConfig(sealed: SealedConfig, secrets: SecretBox): ConfigValues {
  return Object.fromEntries(
    Object.entries(sealed).map(([key, value]) => [
      key,
      isSealed(value) ? secrets.decrypt(value.$secret) : value,
    ]),
  );
}

/**
 * Checks submitted values against the provider's schema (400 naming `provider_config.<field>`),
 * fills defaults, and seals secrets. A secret sent back as its mask keeps the stored one.
 */
export function sealConfig(
  provider: WorkflowProviderAdapter,
  submitted: ConfigValues,
  previous: SealedConfig | null,
  secrets: SecretBox,
  options: { requireAll: boolean },
): SealedConfig {
  const schema = provider.configSchema;
  const problems: Record<string, string> = {};
  const sealed: SealedConfig = {};
  for (const key of Object.keys(submitted)) {
    if (!(key in schema.properties))
      problems[`provider_config.${key}`] = `is not a setting of ${provider.name}`;
  }
  for (const [key, property] of Object.entries(schema.properties)) {
    const field = `provider_config.${key}`;
    let value = submitted[key];
    if (value === undefined || value === "") value = property.default;
    if (value === undefined || value === "") {
      if (options.requireAll && schema.required.includes(key)) problems[field] = "is required";
      continue;
    }
    if (
      property.type === "number" &&
      typeof value === "string" &&
      value.trim() !== "" &&
      !Number.isNaN(Number(value))
    )
      value = Number(value);
    if (property.type === "boolean" && (value === "true" || value === "false")) value = value === "true";
    if (typeof value !== property.type) {
      problems[field] = `must be a ${property.type}`;
      continue;
    }
    if (property.enum && !property.enum.includes(String(value))) {
      problems[field] = `must be one of: ${property.enum.join(", ")}`;
      continue;
    }
    if (property.format === "uri" && !/^https?:\/\/[^\s]+$/i.test(String(value))) {
      problems[field] = "must be an http or https URL";
      continue;
    }
    if (typeof value === "string" && value.length > 2000) {
      problems[field] = "must be at most 2000 characters";
      continue;
    }
    if (isSecretField(schema, key) && typeof value === "string") {
      const stored = previous?.[key];
      sealed[key] =
        isSealed(stored) && value === `••••${stored.last4}`
          ? stored
          : { $secret: secrets.encrypt(value), last4: value.slice(-4) };
      if (!isSealed(stored) && value.startsWith("••••"))
        problems[field] = "is masked but no secret is stored; enter the real value";
      continue;
    }
    sealed[key] = value;
  }
  if (Object.keys(problems).length > 0) throw invalidFields(problems);
  return sealed;
}

export { maskSecret };
