import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, type AppVersionRow, appVersions, prompts } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import type { VersionPin } from "../releases/pins.ts";
import { pinnedVersion, versionNotFound } from "../releases/versions.ts";

/** A prompt app's prompt row, with the id of the version `production` points at (app_labels). */
export type PromptRow = typeof prompts.$inferSelect & { productionVersionId: string | null };

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

export {
  describePin,
  isVersionShaped,
  LATEST,
  PRODUCTION,
  parseVersionPin,
  type VersionPin,
} from "../releases/pins.ts";

/**
 * A prompt version's payload as stored in `app_versions.payload` (docs/decisions/075): the
 * template, the schemas (json: their property order is kept) and the model settings.
 */
export const PromptPayloadSchema = z.object({
  system_prompt: z.string(),
  prompt_template: z.string(),
  input_schema: z.unknown(),
  output_schema: z.unknown().nullable(),
  model: z.string(),
  temperature: z.number(),
  max_tokens: z.number().int(),
  top_p: z.number(),
  frequency_penalty: z.number(),
  presence_penalty: z.number(),
});
export type PromptPayload = z.infer<typeof PromptPayloadSchema>;

/** A prompt version as the prompt code reads it: the store's row with its payload laid out. */
export interface VersionRow {
  id: string;
  applicationId: string;
  version: number;
  systemPrompt: string;
  promptTemplate: string;
  inputSchema: unknown;
  outputSchema: unknown;
  model: string;
  temperature: number;
  maxTokens: number;
  topP: number;
  frequencyPenalty: number;
  presencePenalty: number;
  authorId: string | null;
  changelog: string;
  createdAt: Date;
}

/** What a prompt version holds (its payload), in the prompt code's names. */
export type VersionContent = Omit<
  VersionRow,
  "id" | "applicationId" | "version" | "authorId" | "changelog" | "createdAt"
>;

/** A stored version read as a prompt's (its payload checked against the prompt payload's type). */
export function promptVersionOf(row: AppVersionRow): VersionRow {
  const p = PromptPayloadSchema.parse(row.payload);
  return {
    id: row.id,
    applicationId: row.applicationId,
    version: row.version,
    systemPrompt: p.system_prompt,
    promptTemplate: p.prompt_template,
    inputSchema: p.input_schema,
    outputSchema: p.output_schema ?? null,
    model: p.model,
    temperature: p.temperature,
    maxTokens: p.max_tokens,
    topP: p.top_p,
    frequencyPenalty: p.frequency_penalty,
    presencePenalty: p.presence_penalty,
    authorId: row.authorId,
    changelog: row.changelog,
    createdAt: row.createdAt,
  };
}

/** The payload a prompt version is stored with. */
export function promptPayloadOf(content: VersionContent): PromptPayload {
  return {
    system_prompt: content.systemPrompt,
    prompt_template: content.promptTemplate,
    input_schema: content.inputSchema,
    output_schema: content.outputSchema ?? null,
    model: content.model,
    temperature: content.temperature,
    max_tokens: content.maxTokens,
    top_p: content.topP,
    frequency_penalty: content.frequencyPenalty,
    presence_penalty: content.presencePenalty,
  };
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

/**
 * The app's prompt at `production`, or at the version or label a caller pinned (404 naming it).
 * One query: the prompt joined to the version the pin names (releases/versions.ts pinnedVersion),
 * with the id of the version `production` points at.
 */
export async function loadPrompt(db: Database, app: ApplicationRow, pin?: VersionPin): Promise<LoadedPrompt> {
  if (app.type !== "prompt") throw notFound("Prompt");
  const [row] = await db
    .select({
      prompt: prompts,
      active: appVersions,
      productionVersionId: sql<
        string | null
      >`(select l.version_id from app_labels l where l.application_id = ${prompts.applicationId} and l.name = 'production')`,
    })
    .from(prompts)
    .innerJoin(appVersions, pinnedVersion(prompts.applicationId, pin))
    .where(eq(prompts.applicationId, app.id))
    .limit(1);
  if (!row) {
    if (!pin) throw notFound("Prompt");
    throw versionNotFound(pin);
  }
  return withSettings(
    { ...row.prompt, productionVersionId: row.productionVersionId },
    promptVersionOf(row.active),
  );
}
