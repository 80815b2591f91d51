import type {
  Application,
  CreateApplication,
  CreateApplicationSchema,
  PromptConfig,
  SavePromptApplication,
  UpdateApplication,
} from "@promptmint/contracts";
import { and, desc, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import { type Database, queryRows } from "../../db/client.ts";
import {
  type ApplicationRow,
  applications,
  creators,
  invocations,
  prompts,
  users,
} from "../../db/schema/index.ts";
import { databaseErrorOf } from "../../lib/database-errors.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { forgetLookups, lookupCache } from "../../lib/lookup-cache.ts";
import { maskSecret, type SecretBox } from "../../lib/secrets.ts";
import { appNotSuspended } from "../admin/suspensions.ts";
import { forgetApplication, rebuildOwnerUsers } from "../analytics/rollups.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { settleSubscribersOfArchivedApp, stopCardRenewals } from "../billing/archive-refunds.ts";
import { accountFor } from "../billing/postings.ts";
import { priceFields, scheduledPriceCents, setPrice } from "../billing/price-changes.ts";
import type { StripeGateway } from "../billing/stripe-gateway.ts";
import { refuseUncoveredPrice } from "../prompts/cost-guard.ts";
import { promptVersionOf } from "../prompts/load-prompt.ts";
import {
  createInitialPrompt,
  refusePublishingUnevaluated,
  refuseStarterPrice,
  updatePromptConfig,
} from "../prompts/prompts.service.ts";
import { findVersion } from "../releases/versions.ts";
import { createInitialWorkflow, duplicateWorkflow } from "../workflows/workflows.service.ts";

/** lowercase; runs of non-alphanumerics become one hyphen; no leading/trailing hyphen. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 50)
    .replace(/-+$/g, "");
  return slug || "app";
}

export function toApplication(row: ApplicationRow, creatorName: string, secrets: SecretBox): Application {
  let providerConfig: Application["provider_config"] = null;
  if (row.type === "workflow") {
    let masked = "";
    if (row.providerApiKeyEncrypted) {
      try {
        masked = maskSecret(secrets.decrypt(row.providerApiKeyEncrypted));
      } catch {
        masked = "••••";
      }
    }
    providerConfig = { app_id: row.providerAppId ?? "", api_key: masked };
  }
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    type: row.type,
    interaction_mode: row.interactionMode,
    visibility: row.visibility,
    status: row.status,
    ...priceFields(row),
    provider_config: providerConfig,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    creator_name: creatorName,
    allow_tools: row.allowTools,
  };
}

/** Why a workflow app cannot allow tools: its provider runs its own model and tools. */
const TOOLS_NEED_A_PROMPT =
  "can only be true on prompt applications: a workflow runs its provider's own model and tools";

/**
 * The name shown as an app's creator: the creator profile's display name, else the user's, else
 * the username. For queries joining `users` and (left) `creators`.
 */
export const creatorNameColumn = sql<string>`coalesce(nullif(${creators.displayName}, ''), nullif(${users.displayName}, ''), ${users.username})`;

export async function creatorNameFor(db: Database, userId: string): Promise<string> {
  const [row] = await db
    .select({ name: creatorNameColumn })
    .from(users)
    .leftJoin(creators, eq(creators.userId, users.id))
    .where(eq(users.id, userId))
    .limit(1);
  return row?.name ?? "";
}

export async function listOwnApplications(db: Database, owner: LocalUser): Promise<ApplicationRow[]> {
  return db
    .select()
    .from(applications)
    .where(and(eq(applications.ownerId, owner.id), isNull(applications.archivedAt)))
    .orderBy(desc(applications.createdAt));
}

/** The owner's app by slug; anyone else gets the same 404 as for a missing app. */
export async function getOwnApplication(
  db: Database,
  owner: LocalUser,
  slug: string,
): Promise<ApplicationRow> {
  const [row] = await db
    .select()
    .from(applications)
    .where(
      and(eq(applications.slug, slug), eq(applications.ownerId, owner.id), isNull(applications.archivedAt)),
    )
    .limit(1);
  if (!row) throw notFound("Application");
  return row;
}

/** An app by slug, for anyone; an archived (deleted) or suspended app is not found. */
export async function findApplicationBySlug(db: Database, slug: string): Promise<ApplicationRow | undefined> {
  const [row] = await db
    .select()
    .from(applications)
    .where(and(eq(applications.slug, slug), isNull(applications.archivedAt), appNotSuspended))
    .limit(1);
  return row;
}

/** findApplicationBySlug for the paid path: served from the lookup cache (see lib/lookup-cache.ts). */
export async function findApplicationBySlugCached(
  db: Database,
  slug: string,
): Promise<ApplicationRow | undefined> {
  return lookupCache<ApplicationRow>(db, "applications").get(slug, () => findApplicationBySlug(db, slug));
}

/** At most `limit` apps neither archived nor suspended that meet `condition`. */
export function openApplicationsWhere(
  db: Database,
  condition: SQL | undefined,
  limit: number,
): Promise<ApplicationRow[]> {
  return db
    .select()
    .from(applications)
    .where(and(isNull(applications.archivedAt), appNotSuspended, condition))
    .limit(limit);
}

/**
 * Start-up (warm-up.ts): the apps called since `since` (their daily rollups), up to `limit`, put in
 * the lookup cache as findApplicationBySlugCached would have. Answers them.
 */
export async function preloadRecentApplications(
  db: Database,
  since: Date,
  limit: number,
): Promise<ApplicationRow[]> {
  const cache = lookupCache<ApplicationRow>(db, "applications");
  const generation = cache.generation;
  const rows = await openApplicationsWhere(
    db,
    sql`${applications.id} in (select s.application_id from app_daily_stats s
      where s.day >= ${since.toISOString().slice(0, 10)}::date)`,
    limit,
  );
  for (const row of rows) cache.put(row.slug, row, generation);
  return rows;
}

export async function createApplication(
  db: Database,
  secrets: SecretBox,
  owner: LocalUser,
  input: z.output<typeof CreateApplicationSchema>,
  /** Set for a creator's request: a prompt app's price must cover its starter settings (issue 32). */
  options: { feePercent?: number } = {},
): Promise<ApplicationRow> {
  if (input.type === "prompt" && options.feePercent !== undefined)
    refuseStarterPrice(input.price_cents, options.feePercent);
  if (input.type === "workflow") {
    const missing: Record<string, string> = {};
    if (!input.provider_config?.app_id)
      missing["provider_config.app_id"] = "is required for workflow applications";
    if (!input.provider_config?.api_key)
      missing["provider_config.api_key"] = "is required for workflow applications";
    if (Object.keys(missing).length > 0) throw invalidFields(missing);
  } else if (input.provider_config) {
    throw invalidFields({ provider_config: "is only allowed for workflow applications" });
  }
  if (input.allow_tools && input.type !== "prompt") throw invalidFields({ allow_tools: TOOLS_NEED_A_PROMPT });
  const values = {
    ownerId: owner.id,
    name: input.name,
    description: input.description,
    type: input.type,
    interactionMode: input.interaction_mode,
    visibility: input.visibility,
    priceCents: input.price_cents,
    allowTools: input.allow_tools,
    providerAppId: input.type === "workflow" ? (input.provider_config?.app_id ?? null) : null,
    providerApiKeyEncrypted:
      input.type === "workflow" && input.provider_config
        ? secrets.encrypt(input.provider_config.api_key)
        : null,
  };
  return db.transaction(async (tx) => {
    const row = await insertWithUniqueSlug(tx as unknown as Database, values, input.slug);
    // The creator's earnings account, which the first close of a hold of the app posts to: made
    // now, so that close does not fail its guard first and make it (billing/holds.ts closeHold).
    await accountFor(tx as unknown as Database, "earnings", owner.id);
    if (row.type === "prompt") await createInitialPrompt(tx as unknown as Database, row.id);
    else if (input.provider_config) {
      await createInitialWorkflow(tx as unknown as Database, secrets, row.id, {
        appId: input.provider_config.app_id,
        apiKey: input.provider_config.api_key,
      });
    }
    return row;
  });
}

type NewApplication = Omit<typeof applications.$inferInsert, "slug">;

/** An explicit slug must be free (409); a derived one gets -2, -3, … on collision. */
async function insertWithUniqueSlug(
  db: Database,
  values: NewApplication,
  explicitSlug?: string,
): Promise<ApplicationRow> {
  if (explicitSlug) {
    const [row] = await db
      .insert(applications)
      .values({ ...values, slug: explicitSlug })
      .onConflictDoNothing()
      .returning();
    if (!row)
      throw new AppError("conflict", `The slug '${explicitSlug}' is already taken`, {
        fields: { slug: "is already taken" },
      });
    return row;
  }
  const base = slugify(values.name);
  const taken = await db
    .select({ slug: applications.slug })
    .from(applications)
    .where(sql`${applications.slug} = ${base} or ${applications.slug} ~ ${`^${base}-[0-9]+$`}`);
  const used = new Set(taken.map((row) => row.slug));
  for (let n = 1; n < 1000; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (used.has(candidate)) continue;
    const [row] = await db
      .insert(applications)
      .values({ ...values, slug: candidate })
      .onConflictDoNothing()
      .returning();
    if (row) return row;
  }
  throw new AppError("conflict", "Could not find a free slug for this name");
}

/**
 * How long a raised price of this app must be announced: none while no one but its owner can call
 * it and no one else ever has (a draft being prepared), else `priceNoticeMs`. An app that was
 * called by others keeps the notice even while it is a draft, so taking it offline for a moment
 * cannot skip it.
 */
async function noticeFor(db: Database, app: ApplicationRow, priceNoticeMs: number): Promise<number> {
  const callableByOthers = app.status === "live" && app.visibility !== "private";
  if (callableByOthers) return priceNoticeMs;
  const [calledByOthers] = await db
    .select({ id: invocations.id })
    .from(invocations)
    .where(
      and(
        eq(invocations.applicationId, app.id),
        sql`${invocations.callerUserId} is distinct from ${app.ownerId}`,
      ),
    )
    .limit(1);
  return calledByOthers ? priceNoticeMs : 0;
}

/** A raised `price_cents` is announced and charged only after its notice (billing/price-changes.ts). */
export async function updateApplication(
  db: Database,
  app: ApplicationRow,
  input: UpdateApplication,
  {
    priceNoticeMs,
    feePercent,
    priceJudgedWithPrompt = false,
  }: {
    priceNoticeMs: number;
    feePercent: number;
    /** The prompt saved next in the same transaction runs the price guard (savePromptApplication). */
    priceJudgedWithPrompt?: boolean;
  },
): Promise<ApplicationRow> {
  if (input.interaction_mode && app.type !== "prompt") {
    throw invalidFields({ interaction_mode: "can only be changed on prompt applications" });
  }
  if (input.allow_tools && app.type !== "prompt") throw invalidFields({ allow_tools: TOOLS_NEED_A_PROMPT });
  const price =
    input.price_cents !== undefined
      ? setPrice(app, input.price_cents, {
          now: new Date(),
          noticeMs: await noticeFor(db, app, priceNoticeMs),
        })
      : undefined;
  // The price guard (docs/decisions/026): a new price, and publishing, of a prompt app on the
  // platform's keys. An edit that changes neither (a name, the visibility, taking it offline) is
  // never refused for a price set before: the seeded or older app stays editable (issue 32).
  // A form sends every field back: a price or a status it echoes unchanged is not a new choice.
  const judged =
    (input.price_cents !== undefined && input.price_cents !== scheduledPriceCents(app)) ||
    (input.status === "live" && app.status !== "live");
  if (app.type === "prompt" && judged && !priceJudgedWithPrompt) {
    await refuseUncoveredPrice(db, {
      app,
      feePercent,
      priceCents: price ? scheduledPriceCents(price) : undefined,
    });
  }
  // Publishing releases the production version to callers: the eval gate judges it (decision 059).
  // Save & Publish judges the version it saves instead (updatePromptConfig).
  if (input.status === "live" && app.status !== "live" && !priceJudgedWithPrompt)
    await refusePublishingUnevaluated(db, app);
  const changes = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.visibility !== undefined ? { visibility: input.visibility } : {}),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(price ?? {}),
    ...(input.interaction_mode !== undefined ? { interactionMode: input.interaction_mode } : {}),
    ...(input.allow_tools !== undefined ? { allowTools: input.allow_tools } : {}),
  };
  if (Object.keys(changes).length === 0) return app;
  const [row] = await db
    .update(applications)
    .set({ ...changes, updatedAt: new Date() })
    .where(eq(applications.id, app.id))
    .returning();
  if (!row) throw notFound("Application");
  forgetLookups(db, "applications");
  return row;
}

/**
 * Save & Publish (docs/decisions/036): the app's settings, status included, and its prompt in one
 * transaction, so a refused prompt (a malformed template, an unknown model) leaves the app as it
 * was instead of live with its old prompt. The price guard judges once, the prompt being written
 * against the price being set: the prompt step runs it on the updated app.
 */
export async function savePromptApplication(
  db: Database,
  app: ApplicationRow,
  input: SavePromptApplication,
  options: {
    priceNoticeMs: number;
    feePercent: number;
    knownModels: ReadonlySet<string>;
    actorId?: string;
  },
): Promise<{ application: ApplicationRow; prompt: PromptConfig }> {
  const saved = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const application = await updateApplication(t, app, input.application, {
      ...options,
      priceJudgedWithPrompt: true,
    });
    // Whether callers get the saved version at once is judged by the app as it was: a draft's save
    // (published by this one or not) takes production, a live app's only with `promote`.
    const prompt = await updatePromptConfig(t, application, input.prompt, options.knownModels, {
      ...options,
      liveBefore: app.status === "live",
    });
    return { application, prompt };
  });
  forgetLookups(db, "applications", "prompts");
  return saved;
}

/**
 * Deletes an app, or archives it when it has money history (holds, model cost holds, charged
 * calls, subscriptions, plan payments): those rows and the app they name stay, and its subscribers are settled
 * (billing/archive-refunds.ts, docs/decisions/023). Answers which of the two happened.
 */
export async function deleteApplication(
  db: Database,
  app: ApplicationRow,
  billing: { stripe: StripeGateway | undefined; feePercent: number },
): Promise<"deleted" | "archived"> {
  const outcome = (await hasMoneyHistory(db, app.id))
    ? await archiveApplication(db, app, billing)
    : await eraseApplication(db, app).catch(async (error) => {
        // A paid call or a subscribe committed meanwhile: its row restricts the delete.
        if (databaseErrorOf(error)?.code !== "23503") throw error;
        return archiveApplication(db, app, billing);
      });
  forgetLookups(db, "applications", "prompts");
  return outcome;
}

async function hasMoneyHistory(db: Database, applicationId: string): Promise<boolean> {
  const [row] = await queryRows<{ found: boolean }>(
    db,
    sql`select exists (select 1 from holds where application_id = ${applicationId})
          -- A call's model cost held from its creator's wallet (decision 062) is money history too.
          or exists (select 1 from model_cost_holds where application_id = ${applicationId})
          or exists (select 1 from invocations where application_id = ${applicationId} and charged_cents > 0)
          or exists (select 1 from subscriptions where application_id = ${applicationId})
          or exists (select 1 from payments p join packages k on k.id = p.package_id
                     where k.application_id = ${applicationId}) as found`,
  );
  return row?.found === true;
}

/** An app without money history goes entirely, its free calls and its share of the rollups with it. */
async function eraseApplication(db: Database, app: ApplicationRow): Promise<"deleted"> {
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await forgetApplication(t, app);
    await t
      .delete(invocations)
      .where(and(eq(invocations.applicationId, app.id), eq(invocations.chargedCents, 0)));
    await t.delete(applications).where(eq(applications.id, app.id));
    await rebuildOwnerUsers(t, app.ownerId);
  });
  return "deleted";
}

/**
 * Archives an app: gone for everyone (every lookup skips archived apps; a call to its slug is a
 * 404), its rows kept. The row is locked against subscribes (which lock it to share) but not
 * against the paid path's key-share checks: calls already admitted finish and are paid.
 */
async function archiveApplication(
  db: Database,
  app: ApplicationRow,
  billing: { stripe: StripeGateway | undefined; feePercent: number },
): Promise<"archived"> {
  await stopCardRenewals(db, app, billing.stripe);
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const now = new Date();
    const [row] = await t
      .select({ id: applications.id })
      .from(applications)
      .where(and(eq(applications.id, app.id), isNull(applications.archivedAt)))
      .for("no key update");
    if (!row) return;
    await t
      .update(applications)
      .set({ archivedAt: now, status: "archived", updatedAt: now })
      .where(eq(applications.id, app.id));
    await settleSubscribersOfArchivedApp(t, app, { now, feePercent: billing.feePercent });
  });
  return "archived";
}

/** A draft copy named "… (copy)" with its own slug and, for prompt apps, the latest prompt version. */
export async function duplicateApplication(db: Database, app: ApplicationRow): Promise<ApplicationRow> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const { id: _id, slug: _slug, createdAt: _c, updatedAt: _u, ...rest } = app;
    const copy = await insertWithUniqueSlug(t, {
      ...rest,
      name: `${app.name} (copy)`.slice(0, 100),
      status: "draft",
    });
    if (app.type === "prompt") {
      const [prompt] = await t.select().from(prompts).where(eq(prompts.applicationId, app.id)).limit(1);
      // The copy starts from what its creator last saved (`latest`), not only what callers get.
      const latest = prompt ? await findVersion(t, app.id, { label: "latest" }) : undefined;
      const active = latest ? promptVersionOf(latest) : undefined;
      await createInitialPrompt(t, copy.id, prompt, active, `Duplicated from ${app.slug}`);
    } else {
      await duplicateWorkflow(t, app.id, copy.id, `Duplicated from ${app.slug}`);
    }
    return copy;
  });
}

export type { CreateApplication };
