import type { ModelInfo } from "@promptmint/contracts";

export type ProviderName = "openai" | "anthropic" | "google" | "mistral";

export interface CatalogModel {
  id: string;
  label: string;
  provider: ProviderName | "sandbox";
  /** The vendor's model id. */
  vendorModel: string;
}

/**
 * Every model an app may name. SPEC's builder names and editor aliases first, then current ones.
 * With OPENAI_BASE_URL set, "openai" models go to that OpenAI-compatible server instead.
 */
export const MODEL_CATALOG: readonly CatalogModel[] = [
  { id: "gpt-4-turbo", label: "GPT-4 Turbo", provider: "openai", vendorModel: "gpt-4-turbo" },
  { id: "gpt-4", label: "GPT-4", provider: "openai", vendorModel: "gpt-4" },
  {
    id: "claude-3-opus",
    label: "Claude 3 Opus",
    provider: "anthropic",
    vendorModel: "claude-3-opus-20240229",
  },
  {
    id: "claude-3-sonnet",
    label: "Claude 3 Sonnet",
    provider: "anthropic",
    vendorModel: "claude-3-sonnet-20240229",
  },
  {
    id: "claude-3-haiku",
    label: "Claude 3 Haiku",
    provider: "anthropic",
    vendorModel: "claude-3-haiku-20240307",
  },
  { id: "gemini-pro", label: "Gemini Pro", provider: "google", vendorModel: "gemini-1.5-pro" },
  { id: "gpt4", label: "GPT-4 (alias)", provider: "openai", vendorModel: "gpt-4" },
  {
    id: "claude3",
    label: "Claude 3 (alias)",
    provider: "anthropic",
    vendorModel: "claude-3-5-sonnet-latest",
  },
  { id: "gemini", label: "Gemini (alias)", provider: "google", vendorModel: "gemini-2.5-flash" },
  { id: "mixtral", label: "Mixtral 8x22B", provider: "mistral", vendorModel: "open-mixtral-8x22b" },
  { id: "gpt-4o", label: "GPT-4o", provider: "openai", vendorModel: "gpt-4o" },
  { id: "gpt-4o-mini", label: "GPT-4o mini", provider: "openai", vendorModel: "gpt-4o-mini" },
  { id: "gpt-4.1", label: "GPT-4.1", provider: "openai", vendorModel: "gpt-4.1" },
  {
    id: "claude-sonnet-4-5",
    label: "Claude Sonnet 4.5",
    provider: "anthropic",
    vendorModel: "claude-sonnet-4-5",
  },
  {
    id: "claude-haiku-4-5",
    label: "Claude Haiku 4.5",
    provider: "anthropic",
    vendorModel: "claude-haiku-4-5",
  },
  { id: "gemini-2.5-pro", label: "Gemini 2.5 Pro", provider: "google", vendorModel: "gemini-2.5-pro" },
  { id: "gemini-2.5-flash", label: "Gemini 2.5 Flash", provider: "google", vendorModel: "gemini-2.5-flash" },
  { id: "mistral-large", label: "Mistral Large", provider: "mistral", vendorModel: "mistral-large-latest" },
  { id: "sandbox", label: "Sandbox (echo, offline)", provider: "sandbox", vendorModel: "sandbox" },
];

export const ENV_VAR_FOR_PROVIDER: Record<ProviderName, string> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  google: "GOOGLE_GENERATIVE_AI_API_KEY",
  mistral: "MISTRAL_API_KEY",
};

export const KNOWN_MODEL_IDS: ReadonlySet<string> = new Set(MODEL_CATALOG.map((model) => model.id));

export function findModel(id: string): CatalogModel | undefined {
  return MODEL_CATALOG.find((model) => model.id === id);
}

export function describeModels(
  configured: (provider: ProviderName) => boolean,
  openaiCompatible: boolean,
): ModelInfo[] {
  return MODEL_CATALOG.map((model) => ({
    id: model.id,
    label: model.label,
    provider: model.provider === "openai" && openaiCompatible ? "openai-compatible" : model.provider,
    configured: model.provider === "sandbox" ? true : configured(model.provider),
    env_var: model.provider === "sandbox" ? null : ENV_VAR_FOR_PROVIDER[model.provider],
  }));
}
