import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, promptLabels, prompts, promptVersions } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";

type PromptRow = typeof prompts.$inferSelect;
type VersionRow = typeof promptVersions.$inferSelect;

/** A version's model settings (migration 0040): part of the version, as its template is. */
export type PromptSettings = Pick<
  VersionRow,
  "model" | "temperature" | "maxTokens" | "topP" | "frequencyPenalty" | "presencePenalty"
>;

/**
 * A prompt app's prompt with one of its versions: what every reader of a prompt starts from (the
 * gateway, the price guard, the editor, evals). `prompt` carries that version's model settings,
 * so a reader never mixes one version's template with another's model. Kept apart from
 * prompts.service.ts, which writes prompts and calls the price guard (cost-guard.ts), so that the
 * guard can read a prompt without a cycle.
 */
export interface LoadedPrompt {
  prompt: PromptRow & PromptSettings;
  active: VersionRow;
}

/**
 * Which version a call asks for (docs/decisions/057): a label (`production`, `staging`, the
 * creator's own) or a version number. None means `production`, or an experiment's arm.
 */
export type VersionPin = { label: string } | { version: number };

export const PRODUCTION = "production";
/** The newest version: set by every save, never moved by hand (prompts/labels.ts). */
export const LATEST = "latest";
const LABEL_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;

/** What reads as a version number: `v12`, `V12` or `12`, and the malformed `v0`, `v-1`, `v01`, `-3`. */
const VERSION_SHAPED = /^v?-?\d+$/i;
/** A version as it must be written: from 1, no leading zeros, `v` (or `V`) optional. */
const VERSION_NUMBER = /^v?([1-9]\d{0,8})$/i;
const PIN_RULE =
  "must be a version (v12; versions start at v1, written without leading zeros) or a label (production, staging, …)";

/**
 * A pin as callers write it (docs/decisions/057, 072): `v12`, `V12` or `12` for a version, else a
 * label name. Anything shaped like a version number is read as one, never as a label: `v0`, `v-1`,
 * `v01`, `0` are a 400 naming `field` (versions start at 1 and are written without leading zeros),
 * as is anything neither a version nor a label name. Undefined for an empty value.
 */
export function parseVersionPin(value: string | undefined | null, field: string): VersionPin | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  const numbered = VERSION_NUMBER.exec(text);
  if (numbered) return { version: Number(numbered[1]) };
  if (VERSION_SHAPED.test(text))
    throw new AppError(
      "bad_request",
      `Invalid request: ${field} pins version '${text}', and versions start at v1 and are written without leading zeros (v1, v12)`,
      { fields: { [field]: PIN_RULE } },
    );
  if (LABEL_PATTERN.test(text)) return { label: text };
  throw new AppError("bad_request", `Invalid request: ${field} ${PIN_RULE}`, {
    fields: { [field]: PIN_RULE },
  });
}

/** Whether a label name would be read as a version by parseVersionPin (`v0`, `v12`): no label may have it. */
export function isVersionShaped(name: string): boolean {
  return VERSION_SHAPED.test(name);
}

export function describePin(pin: VersionPin): string {
  return "version" in pin ? `v${pin.version}` : pin.label;
}

export function withSettings(prompt: PromptRow, version: VersionRow): LoadedPrompt {
  return {
    prompt: {
      ...prompt,
      model: version.model,
      temperature: version.temperature,
      maxTokens: version.maxTokens,
      topP: version.topP,
      frequencyPenalty: version.frequencyPenalty,
      presencePenalty: version.presencePenalty,
    },
    active: version,
  };
}

/** The app's prompt at `production`, or at the version or label a caller pinned (404 naming it). */
export async function loadPrompt(db: Database, app: ApplicationRow, pin?: VersionPin): Promise<LoadedPrompt> {
  if (app.type !== "prompt") throw notFound("Prompt");
  const join =
    !pin || ("label" in pin && pin.label === PRODUCTION)
      ? eq(promptVersions.id, prompts.activeVersionId)
      : "version" in pin
        ? and(eq(promptVersions.promptId, prompts.id), eq(promptVersions.version, pin.version))
        : pin.label === LATEST
          ? and(
              eq(promptVersions.promptId, prompts.id),
              eq(
                promptVersions.version,
                sql`(select max(v.version) from prompt_versions v where v.prompt_id = ${prompts.id})`,
              ),
            )
          : undefined;
  const [row] = join
    ? await db
        .select({ prompt: prompts, active: promptVersions })
        .from(prompts)
        .innerJoin(promptVersions, join)
        .where(eq(prompts.applicationId, app.id))
        .limit(1)
    : await db
        .select({ prompt: prompts, active: promptVersions })
        .from(prompts)
        .innerJoin(
          promptLabels,
          and(eq(promptLabels.promptId, prompts.id), eq(promptLabels.name, (pin as { label: string }).label)),
        )
        .innerJoin(promptVersions, eq(promptVersions.id, promptLabels.versionId))
        .where(eq(prompts.applicationId, app.id))
        .limit(1);
  if (!row) {
    if (!pin) throw notFound("Prompt");
    throw new AppError(
      "version_not_found",
      `This app has no ${"version" in pin ? "version" : "label"} ${describePin(pin)}`,
    );
  }
  return withSettings(row.prompt, row.active);
}
