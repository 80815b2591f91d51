import {
  type IoSchema,
  IoSchemaSchema,
  type PromptConfig,
  type PromptVersion,
  type StarterPrice,
  type TestConfigRequestSchema,
  type TestConfigResponse,
  type UpdatePromptConfig,
} from "@promptmint/contracts";
import { and, desc, eq, max } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, applications, prompts, promptVersions } from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import {
  belowFloorMessage,
  priceFloor,
  promptCostSettings,
  refuseCreatorKeysWithoutKey,
  refuseUncoveredPrice,
} from "./cost-guard.ts";
import { invalidPatterns, validateAgainstSchema } from "./input-schema.ts";
import { type LoadedPrompt, loadPrompt } from "./load-prompt.ts";
import { detectVariables, renderTemplate, TemplateError } from "./template.ts";

type PromptRow = typeof prompts.$inferSelect;
type VersionRow = typeof promptVersions.$inferSelect;

/**
 * SPEC §9's prompt editor defaults, so a new app opens in the editor with a model among its options
 * (gpt4, claude3, gemini, mixtral). The builder saves its own model settings over these.
 */
export const NEW_PROMPT_SETTINGS = { model: "gpt4", maxTokens: 1000 } as const;

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
): Promise<void> {
  const [prompt] = await db
    .insert(prompts)
    .values({
      applicationId,
      ...(from
        ? {
            model: from.model,
            temperature: from.temperature,
            maxTokens: from.maxTokens,
            topP: from.topP,
            frequencyPenalty: from.frequencyPenalty,
            presencePenalty: from.presencePenalty,
            modelKeys: from.modelKeys,
          }
        : NEW_PROMPT_SETTINGS),
    })
    .returning();
  if (!prompt) throw new Error("prompt insert returned nothing");
  const [version] = await db
    .insert(promptVersions)
    .values({
      promptId: prompt.id,
      version: 1,
      systemPrompt: fromVersion?.systemPrompt ?? STARTER_VERSION.systemPrompt,
      promptTemplate: fromVersion?.promptTemplate ?? STARTER_VERSION.promptTemplate,
      inputSchema: fromVersion?.inputSchema ?? STARTER_VERSION.inputSchema,
      outputSchema: fromVersion?.outputSchema ?? null,
      changelog,
    })
    .returning();
  await db.update(prompts).set({ activeVersionId: version?.id }).where(eq(prompts.id, prompt.id));
}

function toVersion(row: VersionRow, activeId: string | null): PromptVersion {
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
  };
}

export function toPromptConfig(app: ApplicationRow, { prompt, active }: LoadedPrompt): PromptConfig {
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
    current_version: active.version,
    active_version: toVersion(active, prompt.activeVersionId),
  };
}

/**
 * Saves model settings in place; a change to the template, system prompt or schemas creates a
 * new immutable version (with its changelog) and makes it active.
 */
export async function updatePromptConfig(
  db: Database,
  app: ApplicationRow,
  input: UpdatePromptConfig,
  knownModels: ReadonlySet<string>,
  { feePercent }: { feePercent: number },
): Promise<LoadedPrompt> {
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
    await t.select({ id: prompts.id }).from(prompts).where(eq(prompts.applicationId, app.id)).for("update");
    const current = await loadPrompt(t, app);
    const settings = {
      ...(input.model !== undefined ? { model: input.model } : {}),
      ...(input.model_keys !== undefined ? { modelKeys: input.model_keys } : {}),
      ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
      ...(input.max_tokens !== undefined ? { maxTokens: input.max_tokens } : {}),
      ...(input.top_p !== undefined ? { topP: input.top_p } : {}),
      ...(input.frequency_penalty !== undefined ? { frequencyPenalty: input.frequency_penalty } : {}),
      ...(input.presence_penalty !== undefined ? { presencePenalty: input.presence_penalty } : {}),
    };
    const next = {
      systemPrompt: input.system_prompt ?? current.active.systemPrompt,
      promptTemplate: input.prompt_template ?? current.active.promptTemplate,
      inputSchema: input.input_schema ?? current.active.inputSchema,
      outputSchema: input.output_schema !== undefined ? input.output_schema : current.active.outputSchema,
    };
    const contentChanged =
      next.systemPrompt !== current.active.systemPrompt ||
      next.promptTemplate !== current.active.promptTemplate ||
      JSON.stringify(next.inputSchema) !== JSON.stringify(current.active.inputSchema) ||
      JSON.stringify(next.outputSchema) !== JSON.stringify(current.active.outputSchema);

    // Whose keys, and the price guard (docs/decisions/026), judged on the values about to be written.
    const costSettings = {
      model: settings.model ?? current.prompt.model,
      modelKeys: settings.modelKeys ?? current.prompt.modelKeys,
      maxTokens: settings.maxTokens ?? current.prompt.maxTokens,
      systemPrompt: next.systemPrompt,
      promptTemplate: next.promptTemplate,
      inputSchema: parseIoSchema(next.inputSchema),
      outputSchema: parseIoSchema(next.outputSchema),
    };
    await refuseCreatorKeysWithoutKey(t, app.ownerId, costSettings);
    await refuseUncoveredPrice(t, { app, feePercent, settings: costSettings });

    let activeVersionId = current.prompt.activeVersionId;
    if (contentChanged) {
      const version = await insertNextVersion(t, current.prompt.id, {
        ...next,
        changelog: input.changelog ?? "",
      });
      activeVersionId = version.id;
    }
    await t
      .update(prompts)
      .set({ ...settings, activeVersionId, updatedAt: new Date() })
      .where(eq(prompts.id, current.prompt.id));
    await t.update(applications).set({ updatedAt: new Date() }).where(eq(applications.id, app.id));
    return loadPrompt(t, app);
  });
  forgetLookups(db, "applications", "prompts");
  return saved;
}

async function insertNextVersion(
  db: Database,
  promptId: string,
  content: Pick<VersionRow, "systemPrompt" | "promptTemplate" | "inputSchema" | "outputSchema" | "changelog">,
): Promise<VersionRow> {
  // Under the prompt's row lock, so concurrent saves get consecutive version numbers.
  await db.select({ id: prompts.id }).from(prompts).where(eq(prompts.id, promptId)).for("update");
  const [latest] = await db
    .select({ n: max(promptVersions.version) })
    .from(promptVersions)
    .where(eq(promptVersions.promptId, promptId));
  const [version] = await db
    .insert(promptVersions)
    .values({ promptId, version: (latest?.n ?? 0) + 1, ...content })
    .returning();
  if (!version) throw new Error("version insert returned nothing");
  return version;
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

/** The prompt with this id, if the user owns its application. */
async function getOwnPromptById(
  db: Database,
  owner: LocalUser,
  promptId: string,
): Promise<{ app: ApplicationRow; prompt: PromptRow }> {
  if (!/^[0-9a-f-]{36}$/i.test(promptId)) throw notFound("Prompt");
  const [row] = await db
    .select({ app: applications, prompt: prompts })
    .from(prompts)
    .innerJoin(applications, eq(applications.id, prompts.applicationId))
    .where(and(eq(prompts.id, promptId), eq(applications.ownerId, owner.id)))
    .limit(1);
  if (!row) throw notFound("Prompt");
  return row;
}

export async function listVersions(
  db: Database,
  owner: LocalUser,
  promptId: string,
): Promise<PromptVersion[]> {
  const { prompt } = await getOwnPromptById(db, owner, promptId);
  const rows = await db
    .select()
    .from(promptVersions)
    .where(eq(promptVersions.promptId, prompt.id))
    .orderBy(desc(promptVersions.version));
  return rows.map((row) => toVersion(row, prompt.activeVersionId));
}

/** Restoring never rewrites history: the chosen version's content becomes a new latest version. */
export async function restoreVersion(
  db: Database,
  owner: LocalUser,
  promptId: string,
  versionId: string,
  changelog: string | undefined,
  { feePercent }: { feePercent: number },
): Promise<{ app: ApplicationRow; loaded: LoadedPrompt }> {
  const { app, prompt } = await getOwnPromptById(db, owner, promptId);
  const [source] = /^[0-9a-f-]{36}$/i.test(versionId)
    ? await db
        .select()
        .from(promptVersions)
        .where(and(eq(promptVersions.id, versionId), eq(promptVersions.promptId, prompt.id)))
        .limit(1)
    : [];
  if (!source) throw notFound("Prompt version");
  // The restored template is judged by the price guard like a saved one (docs/decisions/026).
  await refuseUncoveredPrice(db, {
    app,
    feePercent,
    settings: await promptCostSettings(db, app, {
      systemPrompt: source.systemPrompt,
      promptTemplate: source.promptTemplate,
      inputSchema: parseIoSchema(source.inputSchema),
      outputSchema: parseIoSchema(source.outputSchema),
    }),
  });
  const loaded = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const version = await insertNextVersion(t, prompt.id, {
      systemPrompt: source.systemPrompt,
      promptTemplate: source.promptTemplate,
      inputSchema: source.inputSchema,
      outputSchema: source.outputSchema,
      changelog: changelog ?? `Restored version ${source.version}`,
    });
    await t
      .update(prompts)
      .set({ activeVersionId: version.id, updatedAt: new Date() })
      .where(eq(prompts.id, prompt.id));
    return loadPrompt(t, app);
  });
  forgetLookups(db, "prompts");
  return { app, loaded };
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
