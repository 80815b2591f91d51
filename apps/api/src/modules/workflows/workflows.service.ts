import type {
  UpdateWorkflowConfig,
  WorkflowConfig,
  WorkflowProvider,
  WorkflowTestResponse,
  WorkflowVersion,
} from "@promptmint/contracts";
import { WORKFLOW_DEFAULTS } from "@promptmint/contracts";
import { eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, applications, workflowProviders, workflows } from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { type LabelActor, labelsOf } from "../releases/labels.ts";
import { type RestoreInput, releaseProduction } from "../releases/release-kinds.ts";
import {
  type AppVersionRow,
  findVersion,
  insertNextVersion as insertAppVersion,
  insertFirstVersion,
  lockApp,
} from "../releases/versions.ts";
import { maskConfig, type SealedConfig, sealConfig, unsealConfig } from "./provider-config.ts";
import { DIFY_CLOUD_URL } from "./providers/dify.ts";
import type { ConfigValues, WorkflowProviderAdapter } from "./providers/provider.ts";
import { findProvider, WORKFLOW_PROVIDERS } from "./providers/registry.ts";
import {
  type WorkflowVersionRow as VersionRow,
  type WorkflowRow,
  workflowPayloadOf,
  workflowVersionOf,
} from "./workflow-payload.ts";

/** Mirrors the provider registry into the database (stable ids for the API). */
export async function seedWorkflowProviders(db: Database): Promise<void> {
  for (const provider of WORKFLOW_PROVIDERS) {
    const values = {
      name: provider.name,
      description: provider.description,
      configSchema: provider.configSchema,
      supportsStreaming: provider.supportsStreaming,
    };
    await db
      .insert(workflowProviders)
      .values({ slug: provider.slug, ...values })
      .onConflictDoUpdate({ target: workflowProviders.slug, set: values });
  }
}

export async function listProviders(db: Database): Promise<WorkflowProvider[]> {
  const rows = await db.select().from(workflowProviders);
  const ids = new Map(rows.map((row) => [row.slug, row.id]));
  return WORKFLOW_PROVIDERS.filter((p) => ids.has(p.slug)).map((p) => toProvider(p, ids.get(p.slug) ?? ""));
}

function toProvider(provider: WorkflowProviderAdapter, id: string): WorkflowProvider {
  return {
    id,
    slug: provider.slug,
    name: provider.name,
    description: provider.description,
    config_schema: provider.configSchema,
    supports_streaming: provider.supportsStreaming,
  };
}

/** A new workflow app starts on Dify with the App ID and API key given at creation. */
export async function createInitialWorkflow(
  db: Database,
  secrets: SecretBox,
  applicationId: string,
  seed: { appId: string; apiKey: string },
) {
  const dify = findProvider("dify") as WorkflowProviderAdapter;
  const config = sealConfig(
    dify,
    { base_url: DIFY_CLOUD_URL, api_key: seed.apiKey, app_type: "chat", app_id: seed.appId },
    null,
    secrets,
    { requireAll: true },
  );
  const [workflow] = await db
    .insert(workflows)
    .values({ applicationId, providerSlug: "dify", providerConfig: config, ...defaultsRow() })
    .returning();
  if (!workflow) throw new Error("workflow insert returned nothing");
  const [owner] = await db
    .select({ id: applications.ownerId })
    .from(applications)
    .where(eq(applications.id, applicationId));
  await insertFirstVersion(db, applicationId, "workflow", workflowPayloadOf(snapshot(workflow)), {
    authorId: owner?.id ?? null,
    changelog: "Initial version",
  });
}

const defaultsRow = () => ({
  timeoutSeconds: WORKFLOW_DEFAULTS.timeout_seconds,
  maxIterations: WORKFLOW_DEFAULTS.max_iterations,
  enableLogging: WORKFLOW_DEFAULTS.enable_logging,
});
const snapshot = (
  row: Pick<
    WorkflowRow,
    "providerSlug" | "providerConfig" | "timeoutSeconds" | "maxIterations" | "enableLogging"
  >,
) => ({
  providerSlug: row.providerSlug,
  providerConfig: row.providerConfig as Record<string, unknown>,
  timeoutSeconds: row.timeoutSeconds,
  maxIterations: row.maxIterations,
  enableLogging: row.enableLogging,
});

export async function loadWorkflow(db: Database, app: ApplicationRow): Promise<WorkflowRow> {
  if (app.type !== "workflow") throw notFound("Workflow");
  const [row] = await db.select().from(workflows).where(eq(workflows.applicationId, app.id)).limit(1);
  if (!row) throw notFound("Workflow");
  return row;
}

/**
 * loadWorkflow, locked until the transaction ends: concurrent saves of one workflow take turns,
 * so each reads the one before it and gets the next version number.
 */
async function loadWorkflowForUpdate(tx: Database, applicationId: string): Promise<WorkflowRow> {
  const [row] = await tx
    .select()
    .from(workflows)
    .where(eq(workflows.applicationId, applicationId))
    .limit(1)
    .for("update");
  if (!row) throw notFound("Workflow");
  return row;
}

export async function toWorkflowConfig(
  db: Database,
  app: ApplicationRow,
  row: WorkflowRow,
): Promise<WorkflowConfig> {
  const provider = row.providerSlug ? findProvider(row.providerSlug) : undefined;
  const [providerRow] = provider
    ? await db
        .select({ id: workflowProviders.id })
        .from(workflowProviders)
        .where(eq(workflowProviders.slug, provider.slug))
    : [];
  return {
    id: row.id,
    application_slug: app.slug,
    provider: provider ? toProvider(provider, providerRow?.id ?? "") : null,
    provider_config: maskConfig(row.providerConfig as SealedConfig),
    timeout_seconds: row.timeoutSeconds,
    max_iterations: row.maxIterations,
    enable_logging: row.enableLogging,
    ...(await releaseState(db, row)),
  };
}

/** The latest version's number, `production`'s, and every label (docs/decisions/060). */
async function releaseState(db: Database, row: WorkflowRow) {
  const labels = await labelsOf(db, row.applicationId);
  const production = labels.find((label) => label.name === "production")?.version ?? 1;
  const latest = labels.find((label) => label.name === "latest")?.version ?? production;
  return { current_version: latest, production_version: production, labels };
}

/**
 * Saves the editor's settings (docs/decisions/060): any change is a new immutable version (with
 * its author and changelog) and the `latest` label with it; secrets sent as their mask are kept.
 * Callers keep their version: `production` moves to the saved one only when asked (`promote`) or
 * while the app is not live (nobody calls it yet).
 */
export async function updateWorkflowConfig(
  db: Database,
  secrets: SecretBox,
  app: ApplicationRow,
  input: UpdateWorkflowConfig,
  options: { actorId?: string | null } = {},
): Promise<WorkflowRow> {
  const saved = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    if (app.type !== "workflow") throw notFound("Workflow");
    await lockApp(t, app.id);
    const current = await loadWorkflowForUpdate(t, app.id);
    const providerSlug = input.provider ?? current.providerSlug;
    const provider = providerSlug ? findProvider(providerSlug) : undefined;
    let providerConfig = current.providerConfig as SealedConfig;
    if (input.provider_config !== undefined || input.provider !== undefined) {
      if (!provider) throw invalidFields({ provider: "choose a provider first" });
      const switching = providerSlug !== current.providerSlug;
      const submitted = input.provider_config ?? (switching ? {} : maskConfig(providerConfig));
      providerConfig = sealConfig(provider, submitted, switching ? null : providerConfig, secrets, {
        requireAll: true,
      });
    }
    const next = {
      providerSlug: providerSlug ?? null,
      providerConfig,
      timeoutSeconds: input.timeout_seconds ?? current.timeoutSeconds,
      maxIterations: input.max_iterations ?? current.maxIterations,
      enableLogging: input.enable_logging ?? current.enableLogging,
    };
    const changed = JSON.stringify(snapshot(next)) !== JSON.stringify(snapshot(current));
    const version = changed
      ? await insertNextVersion(t, app.id, {
          ...next,
          authorId: options.actorId ?? null,
          changelog: input.changelog ?? "",
        })
      : await latestVersionOf(t, app.id);
    if (changed)
      await t
        .update(workflows)
        .set({ ...next, updatedAt: new Date() })
        .where(eq(workflows.id, current.id));
    if (input.promote || app.status !== "live")
      await promoteWorkflowVersion(t, app, version, {
        id: options.actorId ?? null,
        reason: input.promote ? input.changelog || "Saved and promoted" : "Saved before the app went live",
      });
    const [row] = await t.select().from(workflows).where(eq(workflows.id, current.id));
    if (!row) throw notFound("Workflow");
    return row;
  });
  forgetLookups(db, "applications");
  return saved;
}

/** The next version of a workflow; called under its row lock, so concurrent saves get consecutive numbers. */
async function insertNextVersion(
  tx: Database,
  applicationId: string,
  {
    authorId,
    changelog,
    ...content
  }: ReturnType<typeof snapshot> & Pick<VersionRow, "authorId" | "changelog">,
): Promise<VersionRow> {
  return workflowVersionOf(
    await insertAppVersion(tx, applicationId, "workflow", workflowPayloadOf(content), {
      authorId,
      changelog,
    }),
  );
}

async function latestVersionOf(db: Database, applicationId: string): Promise<VersionRow> {
  const row = await findVersion(db, applicationId, { label: "latest" });
  if (!row) throw notFound("Workflow version");
  return workflowVersionOf(row);
}

/**
 * Moves `production` to a version inside the caller's transaction: what callers get changes at
 * commit. Every promotion of a workflow passes through here (a save or restore that promotes, a
 * label move, a rollback); the app's own provider fields (its App ID and masked key) follow.
 */
export function promoteWorkflowVersion(
  tx: Database,
  app: ApplicationRow,
  version: VersionRow,
  actor: LabelActor,
): Promise<boolean> {
  return releaseProduction(tx, app, version, actor, { gated: false });
}

/** The app's own provider_config (SPEC's App ID + masked key) follows the version at `production`. */
export async function syncApplicationProviderFields(
  db: Database,
  app: ApplicationRow,
  version: Pick<VersionRow, "providerSlug" | "providerConfig">,
) {
  const provider = version.providerSlug ? findProvider(version.providerSlug) : undefined;
  const config = version.providerConfig as SealedConfig;
  if (!provider) return;
  const secretKey = Object.keys(config).find((key) => typeof config[key] === "object");
  const secret = secretKey ? (config[secretKey] as { $secret: string }).$secret : null;
  const appId = String(config.app_id ?? config.chatflow_id ?? config.webhook_url ?? config.url ?? "");
  await db
    .update(applications)
    .set({ providerAppId: appId, providerApiKeyEncrypted: secret, updatedAt: new Date() })
    .where(eq(applications.id, app.id));
}

/** The adapter and a version's decrypted settings, for a call. */
export function resolveProvider(
  row: Pick<VersionRow, "providerSlug" | "providerConfig">,
  secrets: SecretBox,
): { provider: WorkflowProviderAdapter; config: ConfigValues } {
  const provider = row.providerSlug ? findProvider(row.providerSlug) : undefined;
  if (!provider)
    throw new AppError("unavailable", "This workflow application has no provider configured yet");
  return { provider, config: unsealConfig(row.providerConfig as SealedConfig, secrets) };
}

/**
 * Test Config: asks the provider whether the submitted settings work, without running a production
 * workflow where the provider offers a way (masks resolve to stored secrets). A setting that is
 * wrong answers 400 naming the field.
 */
export async function testWorkflowConfig(
  db: Database,
  options: {
    secrets: SecretBox;
    fetch: SafeFetch;
    app: ApplicationRow;
    provider?: string;
    providerConfig: ConfigValues;
  },
): Promise<WorkflowTestResponse> {
  const current = await loadWorkflow(db, options.app);
  const slug = options.provider ?? current.providerSlug;
  const provider = slug ? findProvider(slug) : undefined;
  if (!provider)
    return {
      success: false,
      message: "Choose a provider first",
      error: "No provider selected",
      app_info: null,
    };
  try {
    const previous = slug === current.providerSlug ? (current.providerConfig as SealedConfig) : null;
    const submitted =
      Object.keys(options.providerConfig).length > 0
        ? options.providerConfig
        : previous
          ? maskConfig(previous)
          : {};
    const sealed = sealConfig(provider, submitted, previous, options.secrets, { requireAll: true });
    const result = await provider.test({
      config: unsealConfig(sealed, options.secrets),
      fetch: options.fetch,
      timeoutMs: Math.min(current.timeoutSeconds, 30) * 1000,
    });
    return { success: true, message: result.message, error: null, app_info: result.appInfo };
  } catch (error) {
    // A setting that is wrong is refused by name (400); the provider failing the test is its result.
    if (!(error instanceof AppError) || error.fields) throw error;
    return { success: false, message: error.message, error: error.message, app_info: null };
  }
}

export function toVersion(
  row: VersionRow,
  production: number,
  labels: readonly { name: string; version: number }[],
  authorName: string | null,
): WorkflowVersion {
  return {
    id: row.id,
    version: row.version,
    provider: row.providerSlug,
    provider_config: maskConfig(row.providerConfig as SealedConfig),
    timeout_seconds: row.timeoutSeconds,
    max_iterations: row.maxIterations,
    enable_logging: row.enableLogging,
    changelog: row.changelog,
    created_at: row.createdAt.toISOString(),
    is_active: row.version === production,
    author_name: authorName,
    labels: labels.filter((label) => label.version === row.version).map((label) => label.name),
  };
}

/**
 * Restoring never rewrites history: the chosen version's settings become a new latest version,
 * which takes `production` as a save would (only with `promote`, or before the app is live). A
 * rollback of what callers get is a move of `production` (moveLabel), not a restore. The route
 * and the ownership check are releases' (versions.routes.ts); this is the workflow kind's save path.
 */
export async function restoreWorkflowVersion(
  db: Database,
  app: ApplicationRow,
  stored: AppVersionRow,
  input: RestoreInput,
): Promise<WorkflowConfig> {
  const source = workflowVersionOf(stored);
  const row = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await lockApp(t, app.id);
    const workflow = await loadWorkflowForUpdate(t, app.id);
    const version = await insertNextVersion(t, app.id, {
      ...snapshot(source),
      authorId: input.authorId,
      changelog: input.changelog,
    });
    await t
      .update(workflows)
      .set({ ...snapshot(source), updatedAt: new Date() })
      .where(eq(workflows.id, workflow.id));
    if (input.promote || app.status !== "live")
      await promoteWorkflowVersion(t, app, version, {
        id: input.authorId,
        reason: `Restored version ${source.version}`,
      });
    const [updated] = await t.select().from(workflows).where(eq(workflows.id, workflow.id));
    return updated as WorkflowRow;
  });
  forgetLookups(db, "applications");
  return toWorkflowConfig(db, app, row);
}

export async function duplicateWorkflow(
  db: Database,
  fromApplicationId: string,
  toApplicationId: string,
  changelog: string,
): Promise<void> {
  const [source] = await db
    .select()
    .from(workflows)
    .where(eq(workflows.applicationId, fromApplicationId))
    .limit(1);
  if (!source) return;
  const [copy] = await db
    .insert(workflows)
    .values({ applicationId: toApplicationId, ...snapshot(source) })
    .returning();
  if (copy)
    await insertFirstVersion(db, toApplicationId, "workflow", workflowPayloadOf(snapshot(source)), {
      authorId: null,
      changelog,
    });
}
