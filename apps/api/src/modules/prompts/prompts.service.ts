import {
  type IoSchema,
  IoSchemaSchema,
  type PromptConfig,
  type PromptLabel,
  type PromptVersion,
  type StarterPrice,
  type TestConfigRequestSchema,
  type TestConfigResponse,
  type UpdatePromptConfig,
} from "@promptmint/contracts";
import { eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, applications, prompts } from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { invalidPatterns, validateAgainstSchema } from "../../lib/input-schema.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import { type LabelActor, labelsOf } from "../releases/labels.ts";
import { type RestoreInput, releaseProduction } from "../releases/release-kinds.ts";
import {
  type AppVersionRow,
  authorNames,
  insertNextVersion as insertAppVersion,
  insertFirstVersion,
  lockApp,
} from "../releases/versions.ts";
import {
  belowFloorMessage,
  priceFloor,
  refuseCreatorKeysWithoutKey,
  refuseUncoveredPrice,
} from "./cost-guard.ts";
import { refuseUnevaluatedRelease } from "./eval-gate.ts";
import {
  LATEST,
  loadPrompt,
  type PromptSettings,
  promptPayloadOf,
  promptVersionOf,
  type VersionContent,
  type VersionRow,
} from "./load-prompt.ts";
import { detectVariables, renderTemplate, TemplateError } from "./template.ts";

type PromptRow = typeof prompts.$inferSelect;

/**
 * SPEC §9's prompt editor defaults, so a new app opens in the editor with a model among its options
 * (gpt4, claude3, gemini, mixtral). The builder saves its own model settings over these.
 */
export const NEW_PROMPT_SETTINGS = {
  model: "gpt4",
  maxTokens: 1000,
  temperature: 0.7,
  topP: 1,
  frequencyPenalty: 0,
  presencePenalty: 0,
} as const;

/** A new prompt app answers straight away: one required `query` input, passed to the model as is. */
const STARTER_VERSION = {
  systemPrompt: "You are a helpful assistant.",
  promptTemplate: "{{query}}",
  inputSchema: {
    type: "object",
    properties: { query: { type: "string", description: "What to ask" } },
    required: ["query"],
    additionalProperties: false,
  } satisfies IoSchema,
};

/** The worst case and lowest price of a new prompt app as it starts (NEW_PROMPT_SETTINGS, STARTER_VERSION). */
export function starterPriceFloor(feePercent: number): StarterPrice {
  const { minimumCents, worst } = priceFloor(
    {
      ...NEW_PROMPT_SETTINGS,
      systemPrompt: STARTER_VERSION.systemPrompt,
      promptTemplate: STARTER_VERSION.promptTemplate,
      inputSchema: STARTER_VERSION.inputSchema,
      outputSchema: null,
    },
    feePercent,
  );
  return {
    model: NEW_PROMPT_SETTINGS.model,
    max_tokens: NEW_PROMPT_SETTINGS.maxTokens,
    fee_percent: feePercent,
    worst_case_micros: Math.ceil(worst.micros),
    min_price_cents: minimumCents,
    message: minimumCents === null ? null : belowFloorMessage(minimumCents, worst, feePercent),
  };
}

/**
 * Creating a prompt app is refused (400 naming `price_cents`) at a price its starter settings
 * cannot cover on the platform's keys, with the same sentence Save & Publish would give (issue 32).
 */
export function refuseStarterPrice(priceCents: number, feePercent: number): void {
  const floor = starterPriceFloor(feePercent);
  if (floor.min_price_cents === null || priceCents >= floor.min_price_cents) return;
  const message = floor.message ?? "";
  throw new AppError("bad_request", message, { fields: { price_cents: message } });
}

export async function createInitialPrompt(
  db: Database,
  applicationId: string,
  from?: PromptRow,
  fromVersion?: VersionRow,
  changelog = "Initial version",
  authorId: string | null = null,
): Promise<void> {
  const [prompt] = await db
    .insert(prompts)
    .values({ applicationId, ...(from ? { modelKeys: from.modelKeys } : {}) })
    .returning();
  if (!prompt) throw new Error("prompt insert returned nothing");
  const settings = fromVersion ? settingsOf(fromVersion) : NEW_PROMPT_SETTINGS;
  const payload = promptPayloadOf({
    systemPrompt: fromVersion?.systemPrompt ?? STARTER_VERSION.systemPrompt,
    promptTemplate: fromVersion?.promptTemplate ?? STARTER_VERSION.promptTemplate,
    inputSchema: fromVersion?.inputSchema ?? STARTER_VERSION.inputSchema,
    outputSchema: fromVersion?.outputSchema ?? null,
    ...settings,
  });
  await insertFirstVersion(db, applicationId, "prompt", payload, {
    authorId: authorId ?? fromVersion?.authorId ?? null,
    changelog,
  });
}

function settingsOf(version: PromptSettings): PromptSettings {
  return {
    model: version.model,
    temperature: version.temperature,
    maxTokens: version.maxTokens,
    topP: version.topP,
    frequencyPenalty: version.frequencyPenalty,
    presencePenalty: version.presencePenalty,
  };
}

/** A version as the API shows it, with the labels pointing at it and its author's name. */
export function toVersion(
  row: VersionRow,
  activeId: string | null,
  labels: readonly Pick<PromptLabel, "name" | "version">[] = [],
  authorName: string | null = null,
): PromptVersion {
  return {
    id: row.id,
    version: row.version,
    system_prompt: row.systemPrompt,
    prompt_template: row.promptTemplate,
    input_schema: IoSchemaSchema.parse(row.inputSchema),
    output_schema: row.outputSchema ? IoSchemaSchema.parse(row.outputSchema) : null,
    changelog: row.changelog,
    created_at: row.createdAt.toISOString(),
    is_active: row.id === activeId,
    model: row.model,
    temperature: row.temperature,
    max_tokens: row.maxTokens,
    top_p: row.topP,
    frequency_penalty: row.frequencyPenalty,
    presence_penalty: row.presencePenalty,
    author_name: authorName,
    labels: labels.filter((label) => label.version === row.version).map((label) => label.name),
  };
}

/**
 * The editor's view of a prompt app: the latest version's settings (what the editor edits), the
 * version callers get (`production`) and every label (docs/decisions/057).
 */
export async function getPromptConfig(db: Database, app: ApplicationRow): Promise<PromptConfig> {
  const production = await loadPrompt(db, app);
  const latest = await loadPrompt(db, app, { label: LATEST });
  const labels = await labelsOf(db, app.id);
  const authors = await authorNames(db, [production.active.authorId, latest.active.authorId]);
  const { prompt } = latest;
  return {
    id: prompt.id,
    application_slug: app.slug,
    model: prompt.model,
    model_keys: prompt.modelKeys,
    temperature: prompt.temperature,
    max_tokens: prompt.maxTokens,
    top_p: prompt.topP,
    frequency_penalty: prompt.frequencyPenalty,
    presence_penalty: prompt.presencePenalty,
    current_version: latest.active.version,
    active_version: toVersion(
      production.active,
      prompt.productionVersionId,
      labels,
      authors.get(production.active.authorId ?? "") ?? null,
    ),
    latest_version: toVersion(
      latest.active,
      prompt.productionVersionId,
      labels,
      authors.get(latest.active.authorId ?? "") ?? null,
    ),
    production_version: production.active.version,
    labels,
  };
}

/**
 * Saves the editor's prompt (docs/decisions/057): any change of template, system prompt, schemas
 * or model settings is a new immutable version (with its author and changelog), and the `latest`
 * label with it. Callers keep their version: `production` moves to the new one only when asked
 * (`promote`) or while the app is not live (nobody calls it yet). Whose keys (`model_keys`) is the
 * app's, saved in place. The price guard judges the saved version; a promotion is gated too.
 */
export async function updatePromptConfig(
  db: Database,
  app: ApplicationRow,
  input: UpdatePromptConfig,
  knownModels: ReadonlySet<string>,
  options: { feePercent: number; actorId?: string | null; liveBefore?: boolean },
): Promise<PromptConfig> {
  const problems: Record<string, string> = {};
  if (input.model !== undefined && !knownModels.has(input.model)) problems.model = `is not a known model`;
  if (input.prompt_template !== undefined)
    problems.prompt_template = templateProblem(input.prompt_template) ?? "";
  if (input.system_prompt !== undefined) problems.system_prompt = templateProblem(input.system_prompt) ?? "";
  if (input.input_schema) Object.assign(problems, invalidPatterns(input.input_schema, "input_schema"));
  if (input.output_schema) Object.assign(problems, invalidPatterns(input.output_schema, "output_schema"));
  for (const key of Object.keys(problems)) if (!problems[key]) delete problems[key];
  if (Object.keys(problems).length > 0) throw invalidFields(problems);

  const saved = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    // Concurrent saves of one prompt take turns: each reads the one before it.
    await lockApp(t, app.id);
    const current = await loadPrompt(t, app, { label: LATEST });
    const next = {
      systemPrompt: input.system_prompt ?? current.active.systemPrompt,
      promptTemplate: input.prompt_template ?? current.active.promptTemplate,
      inputSchema: input.input_schema ?? current.active.inputSchema,
      outputSchema: input.output_schema !== undefined ? input.output_schema : current.active.outputSchema,
      model: input.model ?? current.active.model,
      temperature: input.temperature ?? current.active.temperature,
      maxTokens: input.max_tokens ?? current.active.maxTokens,
      topP: input.top_p ?? current.active.topP,
      frequencyPenalty: input.frequency_penalty ?? current.active.frequencyPenalty,
      presencePenalty: input.presence_penalty ?? current.active.presencePenalty,
    };
    const changed = versionDiffers(current.active, next);
    const modelKeys = input.model_keys ?? current.prompt.modelKeys;

    // Whose keys, and the price guard (docs/decisions/026), judged on the values about to be written.
    const costSettings = {
      model: next.model,
      modelKeys,
      maxTokens: next.maxTokens,
      systemPrompt: next.systemPrompt,
      promptTemplate: next.promptTemplate,
      inputSchema: parseIoSchema(next.inputSchema),
      outputSchema: parseIoSchema(next.outputSchema),
    };
    await refuseCreatorKeysWithoutKey(t, app.ownerId, costSettings);
    await refuseUncoveredPrice(t, { app, feePercent: options.feePercent, settings: costSettings });

    const version = changed
      ? await insertNextVersion(t, app.id, {
          ...next,
          authorId: options.actorId ?? null,
          changelog: input.changelog ?? "",
        })
      : current.active;
    await t
      .update(prompts)
      .set({ modelKeys, updatedAt: new Date() })
      .where(eq(prompts.id, current.prompt.id));
    const live = options.liveBefore ?? app.status === "live";
    // Save & Publish of a draft (`app` is the app as this request leaves it): the version saved is
    // what callers get once it commits, so the eval gate judges it as it judges a release.
    const publishing = !live && app.status === "live";
    if (input.promote || !live)
      await promoteVersion(
        t,
        app,
        version,
        {
          id: options.actorId ?? null,
          reason: input.promote ? input.changelog || "Saved and promoted" : "Saved before the app went live",
        },
        { gated: live || publishing, publishing },
      );
    await t.update(applications).set({ updatedAt: new Date() }).where(eq(applications.id, app.id));
    return getPromptConfig(t, app);
  });
  forgetLookups(db, "applications", "prompts");
  return saved;
}

function versionDiffers(a: VersionContent, b: VersionContent): boolean {
  return (
    a.systemPrompt !== b.systemPrompt ||
    a.promptTemplate !== b.promptTemplate ||
    JSON.stringify(a.inputSchema) !== JSON.stringify(b.inputSchema) ||
    JSON.stringify(a.outputSchema) !== JSON.stringify(b.outputSchema) ||
    a.model !== b.model ||
    a.temperature !== b.temperature ||
    a.maxTokens !== b.maxTokens ||
    a.topP !== b.topP ||
    a.frequencyPenalty !== b.frequencyPenalty ||
    a.presencePenalty !== b.presencePenalty
  );
}

/**
 * Moves `production` to a version inside the caller's transaction: what callers get changes at
 * commit. Every promotion passes through here (a save that promotes, a label move, an experiment's
 * winner), so the release gate is in one place: an app that requires a passing eval run refuses a
 * version without one (409, docs/decisions/059). `gated: false` only for the automatic promotion
 * of an app that is not live (nobody calls it). `publishing`: the app goes live with this version,
 * judged even if it is production already (refusePublishingUnevaluated for a publish on its own).
 */
export function promoteVersion(
  tx: Database,
  app: ApplicationRow,
  version: VersionRow,
  actor: LabelActor,
  options: { gated?: boolean; publishing?: boolean } = {},
): Promise<boolean> {
  return releaseProduction(tx, app, version, actor, options);
}

/**
 * Publishing a prompt app (draft to live) releases its `production` version to callers: the same
 * eval gate as a promotion judges it (docs/decisions/059), so requiring a passing run cannot be
 * got round by saving a draft, whose saves move `production` ungated, and then publishing it.
 */
export async function refusePublishingUnevaluated(db: Database, app: ApplicationRow): Promise<void> {
  if (app.type !== "prompt") return;
  const loaded = await loadPrompt(db, app).catch(() => null);
  if (loaded) await refuseUnevaluatedRelease(db, loaded.prompt, loaded.active, { publishing: true });
}

/** What the price guard judges for a version: its own settings and the app's keys. */
export async function versionCostSettings(db: Database, app: ApplicationRow, version: VersionRow) {
  const { prompt } = await loadPrompt(db, app);
  return {
    model: version.model,
    modelKeys: prompt.modelKeys,
    maxTokens: version.maxTokens,
    systemPrompt: version.systemPrompt,
    promptTemplate: version.promptTemplate,
    inputSchema: parseIoSchema(version.inputSchema),
    outputSchema: parseIoSchema(version.outputSchema),
  };
}

/** The prompt's next version (numbered under the app's row lock: releases/versions.ts). */
async function insertNextVersion(
  db: Database,
  applicationId: string,
  { changelog, authorId, ...content }: VersionContent & Pick<VersionRow, "changelog" | "authorId">,
): Promise<VersionRow> {
  return promptVersionOf(
    await insertAppVersion(db, applicationId, "prompt", promptPayloadOf(content), { authorId, changelog }),
  );
}

function parseIoSchema(value: unknown): IoSchema | null {
  const parsed = IoSchemaSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

function templateProblem(template: string): string | undefined {
  try {
    detectVariables(template);
    return undefined;
  } catch (error) {
    return error instanceof TemplateError ? error.message : "is not a valid template";
  }
}

/**
 * Restoring never rewrites history: the chosen version's content (settings included) becomes a
 * new latest version, which takes `production` as a save would (docs/decisions/057). A rollback
 * of what callers get is a move of `production` (moveLabel), not a restore. The route and the
 * ownership check are releases' (versions.routes.ts); this is the prompt kind's save path.
 */
export async function restorePromptVersion(
  db: Database,
  app: ApplicationRow,
  stored: AppVersionRow,
  input: RestoreInput,
): Promise<PromptConfig> {
  const source = promptVersionOf(stored);
  // The restored version is judged by the price guard like a saved one (docs/decisions/026).
  await refuseUncoveredPrice(db, {
    app,
    feePercent: input.feePercent,
    settings: await versionCostSettings(db, app, source),
  });
  const config = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await lockApp(t, app.id);
    const version = await insertNextVersion(t, app.id, {
      ...settingsOf(source),
      systemPrompt: source.systemPrompt,
      promptTemplate: source.promptTemplate,
      inputSchema: source.inputSchema,
      outputSchema: source.outputSchema,
      authorId: input.authorId,
      changelog: input.changelog,
    });
    await t.update(prompts).set({ updatedAt: new Date() }).where(eq(prompts.applicationId, app.id));
    if (input.promote || app.status !== "live")
      await promoteVersion(
        t,
        app,
        version,
        { id: input.authorId, reason: `Restored version ${source.version}` },
        { gated: app.status === "live" },
      );
    return getPromptConfig(t, app);
  });
  forgetLookups(db, "prompts");
  return config;
}

/** Renders a template with sample inputs; never throws for a bad template, it reports it (a bad schema is a 400). */
export function testPromptConfig(
  input: z.infer<typeof TestConfigRequestSchema>,
): Omit<TestConfigResponse, "run"> {
  // A pattern RE2 cannot run is refused by name, as when the schema is saved.
  const badPatterns = input.input_schema ? invalidPatterns(input.input_schema, "input_schema") : {};
  if (Object.keys(badPatterns).length > 0) throw invalidFields(badPatterns);
  let detected: string[] = [];
  try {
    detected = detectVariables(input.prompt_template);
    if (input.system_prompt) detectVariables(input.system_prompt);
    let values = input.test_inputs as Record<string, unknown>;
    if (input.input_schema) {
      const checked = validateAgainstSchema(input.input_schema, values, "test_inputs");
      const problems = Object.entries(checked.problems);
      if (problems.length > 0) {
        const error = problems.map(([field, problem]) => `${field} ${problem}`).join("; ");
        return {
          success: false,
          message: `Test inputs do not match the input schema: ${error}`,
          error,
          rendered_template: null,
          detected_variables: detected,
        };
      }
      values = checked.values;
    }
    const rendered = renderTemplate(input.prompt_template, values);
    return {
      success: true,
      message: `Template is valid: ${detected.length} variable${detected.length === 1 ? "" : "s"} filled`,
      error: null,
      rendered_template: rendered,
      detected_variables: detected,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : "Template could not be rendered";
    return { success: false, message, error: message, rendered_template: null, detected_variables: detected };
  }
}
