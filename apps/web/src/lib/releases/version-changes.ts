import type { PromptVersion, WorkflowVersion } from "@promptmint/contracts";
import { formatDuration } from "../format";
import { type AppVersion, isPromptVersion } from "./versions";

/** One setting of two versions side by side, as the diff and the promote dialog show it. */
export interface SettingRow {
  key: string;
  label: string;
  from: string;
  to: string;
  changed: boolean;
  /** A secret (a provider's API key): its values are never shown, only whether it changed. */
  secret: boolean;
}

/** The model settings a prompt version carries, in the order the editor shows them. */
export const PROMPT_SETTINGS = [
  ["model", "Model"],
  ["max_tokens", "Max tokens"],
  ["temperature", "Temperature"],
  ["top_p", "Top P"],
  ["frequency_penalty", "Frequency penalty"],
  ["presence_penalty", "Presence penalty"],
] as const satisfies readonly (readonly [keyof PromptVersion, string])[];

/** The server returns a secret masked ('••••' + its last 4): such a value is never shown. */
export function isMaskedSecret(value: unknown): boolean {
  return typeof value === "string" && value.startsWith("••••");
}

const shown = (value: unknown) => (value === undefined || value === "" ? "—" : String(value));

function promptRows(from: PromptVersion, to: PromptVersion): SettingRow[] {
  return PROMPT_SETTINGS.map(([key, label]) => ({
    key,
    label,
    from: shown(from[key]),
    to: shown(to[key]),
    changed: from[key] !== to[key],
    secret: false,
  }));
}

/**
 * A workflow version's settings: provider, each provider configuration field (a secret as
 * changed/unchanged only), timeout, iterations and logging.
 */
function workflowRows(from: WorkflowVersion, to: WorkflowVersion): SettingRow[] {
  const row = (key: string, label: string, a: unknown, b: unknown): SettingRow => ({
    key,
    label,
    from: shown(a),
    to: shown(b),
    changed: a !== b,
    secret: false,
  });
  const fields = [
    ...new Set([...Object.keys(from.provider_config), ...Object.keys(to.provider_config)]),
  ].sort();
  const config = fields.map((field): SettingRow => {
    const a = from.provider_config[field];
    const b = to.provider_config[field];
    if (isMaskedSecret(a) || isMaskedSecret(b)) {
      const changed = a !== b;
      return {
        key: `provider_config.${field}`,
        label: field,
        from: a === undefined ? "not set" : "secret",
        to: changed ? "changed" : "unchanged",
        changed,
        secret: true,
      };
    }
    return row(`provider_config.${field}`, field, a, b);
  });
  return [
    row("provider", "Provider", from.provider ?? "none", to.provider ?? "none"),
    ...config,
    {
      ...row("timeout_seconds", "Timeout", from.timeout_seconds, to.timeout_seconds),
      from: formatDuration(from.timeout_seconds * 1000),
      to: formatDuration(to.timeout_seconds * 1000),
    },
    row("max_iterations", "Max iterations", from.max_iterations, to.max_iterations),
    {
      ...row("enable_logging", "Logging", from.enable_logging, to.enable_logging),
      from: from.enable_logging ? "on" : "off",
      to: to.enable_logging ? "on" : "off",
    },
  ];
}

/** The settings of two versions of the same app, row by row. */
export function settingRows(from: AppVersion, to: AppVersion): SettingRow[] {
  if (isPromptVersion(from) && isPromptVersion(to)) return promptRows(from, to);
  if (!isPromptVersion(from) && !isPromptVersion(to)) return workflowRows(from, to);
  return [];
}

/** The settings that differ, in words: `Model gpt-4o → claude-3-haiku`, `api_key changed`. */
export function settingChanges(from: AppVersion, to: AppVersion): string[] {
  return settingRows(from, to)
    .filter((row) => row.changed)
    .map((row) => (row.secret ? `${row.label} changed` : `${row.label} ${row.from} → ${row.to}`));
}
