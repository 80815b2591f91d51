import { createHash, randomBytes } from "node:crypto";
import {
  type ApiKey,
  type CreateApiKey,
  type CreatedApiKey,
  isUuid,
  type UpdateApiKey,
} from "@promptmint/contracts";
import { and, desc, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { lockUserRow } from "../../db/row-locks.ts";
import { apiKeys, organizationMembers, users } from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { forgetLookups, lookupCache } from "../../lib/lookup-cache.ts";
import { userSuspended } from "../admin/suspensions.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { currentKeySpend } from "../billing/call-payment/key-reservations.ts";
import type { ActingMember } from "../organizations/membership.ts";

const KEY_PREFIX = "pm_";
const MAX_KEYS_PER_USER = 50;

export const hashApiKey = (key: string) => createHash("sha256").update(key).digest("hex");
export const looksLikeApiKey = (token: string) => token.startsWith(KEY_PREFIX);

type ApiKeyRow = typeof apiKeys.$inferSelect;
type KeyOptions = Omit<UpdateApiKey, "name">;

/** The slugs of the apps a key may call, by id; an app deleted since is simply gone from the list. */
const allowedSlugsOf = sql<string[] | null>`(
  select coalesce(array_agg(a.slug order by a.slug), '{}') from applications a
  where a.id = any(${apiKeys.allowedAppIds}))`;

async function toApiKeys(db: Database, rows: ApiKeyRow[]): Promise<ApiKey[]> {
  const ids = rows.map((row) => row.id);
  const makerIds = [...new Set(rows.flatMap((row) => (row.createdBy ? [row.createdBy] : [])))];
  const [spend, slugs, makers] = await Promise.all([
    currentKeySpend(db, ids),
    ids.length === 0
      ? []
      : db.select({ id: apiKeys.id, slugs: allowedSlugsOf }).from(apiKeys).where(inArray(apiKeys.id, ids)),
    makerIds.length === 0
      ? []
      : db
          .select({ id: users.id, displayName: users.displayName, username: users.username })
          .from(users)
          .where(inArray(users.id, makerIds)),
  ]);
  const slugsById = new Map(slugs.map((row) => [row.id, row.slugs]));
  const makerNames = new Map(makers.map((maker) => [maker.id, maker.displayName || maker.username]));
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    spend_limit_cents: row.spendLimitCents,
    limit_reset: row.limitReset,
    expires_at: row.expiresAt?.toISOString() ?? null,
    allowed_apps: row.allowedAppIds ? (slugsById.get(row.id) ?? []) : null,
    spent_micros: spend.get(row.id)?.spentMicros ?? 0,
    period_resets_at: spend.get(row.id)?.resetsAt ?? null,
    made_by: row.createdBy ? { user_id: row.createdBy, name: makerNames.get(row.createdBy) ?? "" } : null,
  }));
}

export async function listApiKeys(db: Database, user: LocalUser): Promise<ApiKey[]> {
  const rows = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.userId, user.id), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt));
  return toApiKeys(db, rows);
}

/**
 * A key's options as columns, checked: an expiry must be in the future, and every allowed app
 * must be one the user may call (the same rule as a call; an app they may not call is unknown,
 * so a key cannot reveal that a private app exists). An empty allow-list means any app.
 */
async function optionColumns(db: Database, user: LocalUser, options: KeyOptions) {
  const columns: Partial<Pick<ApiKeyRow, "spendLimitCents" | "limitReset" | "expiresAt" | "allowedAppIds">> =
    {};
  if (options.spend_limit_cents !== undefined) columns.spendLimitCents = options.spend_limit_cents;
  if (options.limit_reset !== undefined) columns.limitReset = options.limit_reset;
  if (options.expires_at !== undefined) {
    const at = options.expires_at === null ? null : new Date(options.expires_at);
    if (at && at.getTime() <= Date.now()) throw invalidFields({ expires_at: "must be in the future" });
    columns.expiresAt = at;
  }
  if (options.allowed_apps !== undefined) {
    const slugs = [...new Set(options.allowed_apps ?? [])];
    const ids: string[] = [];
    for (const slug of slugs) {
      const app = await findCallableApp(db, slug, user).catch((error) => {
        if (error instanceof AppError && error.code === "not_found") return undefined;
        throw error;
      });
      if (!app) throw invalidFields({ allowed_apps: `names an unknown app: ${slug}` });
      ids.push(app.id);
    }
    columns.allowedAppIds = ids.length > 0 ? ids : null;
  }
  return columns;
}

/**
 * The full key exists only in this response; the database keeps its SHA-256. The cap is checked
 * under the user's row lock, so concurrent creations cannot pass it.
 */
export async function createApiKey(
  db: Database,
  user: LocalUser,
  input: CreateApiKey,
  /** An organization's key: the member making it (it works while they may call for it, decision 084). */
  maker: ActingMember | null = null,
): Promise<CreatedApiKey> {
  if (user.kind === "organization" && maker?.organizationId !== user.id)
    throw new AppError("forbidden", "An organization's key is made by one of its members");
  const key = `${KEY_PREFIX}${randomBytes(24).toString("base64url")}`;
  const { name, ...options } = input;
  const columns = await optionColumns(db, user, options);
  const row = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await lockUserRow(t, user.id);
    const [{ n } = { n: 0 }] = await t
      .select({ n: sql<number>`count(*)::int` })
      .from(apiKeys)
      .where(and(eq(apiKeys.userId, user.id), isNull(apiKeys.revokedAt)));
    if (n >= MAX_KEYS_PER_USER)
      throw new AppError("conflict", `You already have ${MAX_KEYS_PER_USER} active keys; revoke one first`);
    const [created] = await t
      .insert(apiKeys)
      .values({
        userId: user.id,
        name,
        prefix: key.slice(0, 10),
        keyHash: hashApiKey(key),
        createdBy: maker?.userId ?? null,
        ...columns,
      })
      .returning();
    return created;
  });
  if (!row) throw new Error("api key insert returned nothing");
  const [created] = await toApiKeys(db, [row]);
  return { ...(created as ApiKey), key };
}

/**
 * Changes a key's name or options (only the fields given; null clears an option). This process
 * applies the change to the next call at once; other processes within the key lookup's TTL
 * (lib/lookup-cache.ts), except a lowered spend limit, which the reservation reads from the row.
 */
export async function updateApiKey(
  db: Database,
  user: LocalUser,
  id: string,
  input: UpdateApiKey,
): Promise<ApiKey> {
  if (!isUuid(id)) throw notFound("API key");
  if (Object.keys(input).length === 0)
    throw invalidFields({
      body: "must name at least one of name, spend_limit_cents, limit_reset, expires_at, allowed_apps",
    });
  const { name, ...options } = input;
  const columns = { ...(name === undefined ? {} : { name }), ...(await optionColumns(db, user, options)) };
  const [row] = await db
    .update(apiKeys)
    .set(columns)
    .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, user.id), isNull(apiKeys.revokedAt)))
    .returning();
  if (!row) throw notFound("API key");
  forgetLookups(db, "apiKeys");
  const [updated] = await toApiKeys(db, [row]);
  return updated as ApiKey;
}

export async function revokeApiKey(db: Database, user: LocalUser, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound("API key");
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, user.id), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (!row) throw notFound("API key");
  forgetLookups(db, "apiKeys");
}

/**
 * Revokes every key of a user at once (their account changed hands: a password reset was the first
 * proof of its address, docs/decisions/041). Answers how many; every process drops its cached copies.
 */
export async function revokeEveryApiKey(db: Database, userId: string): Promise<number> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (rows.length > 0) forgetLookups(db, "apiKeys");
  return rows.length;
}

/** What a call made with a key may do (decision 035): carried by the request (authenticate.ts). */
export interface KeyScope {
  keyId: string;
  spendLimitCents: number | null;
  expiresAt: Date | null;
  /** Null: any app. */
  allowedAppIds: string[] | null;
  allowedSlugs: string[] | null;
  /**
   * An organization's key: its maker's membership as it is now (null when they are no longer a
   * member); a person's key: null (decision 084).
   */
  maker: ActingMember | null;
}

interface KeyOwner {
  user: LocalUser;
  scope: KeyScope;
  lastUsedAt: Date | null;
  /** The operator suspended the key's user (modules/admin/suspensions.ts). */
  suspended: boolean;
}

/** The key lookup's columns, from `api_keys` joined to its user; one row per key. */
function selectKeyOwners(db: Database) {
  return db
    .select({
      keyHash: apiKeys.keyHash,
      user: users,
      keyId: apiKeys.id,
      spendLimitCents: apiKeys.spendLimitCents,
      expiresAt: apiKeys.expiresAt,
      allowedAppIds: apiKeys.allowedAppIds,
      allowedSlugs: allowedSlugsOf,
      lastUsedAt: apiKeys.lastUsedAt,
      suspended: userSuspended(users.id),
      makerId: apiKeys.createdBy,
      makerRole: organizationMembers.role,
      makerBudgetCents: organizationMembers.monthlyBudgetCents,
    })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .leftJoin(
      organizationMembers,
      and(
        eq(organizationMembers.organizationId, apiKeys.userId),
        eq(organizationMembers.userId, apiKeys.createdBy),
      ),
    );
}

function toKeyOwner(found: Awaited<ReturnType<typeof selectKeyOwners>>[number]): KeyOwner {
  const { user, lastUsedAt, suspended, keyHash: _, makerId, makerRole, makerBudgetCents, ...scope } = found;
  const maker =
    makerId && makerRole
      ? { organizationId: user.id, userId: makerId, role: makerRole, monthlyBudgetCents: makerBudgetCents }
      : null;
  return {
    user,
    lastUsedAt,
    suspended,
    scope: { ...scope, allowedSlugs: scope.allowedAppIds ? (scope.allowedSlugs ?? []) : null, maker },
  };
}

/** The active user behind a key and what the key may do, or undefined for an unknown or revoked key. */
export async function findUserByApiKey(
  db: Database,
  key: string,
): Promise<{ user: LocalUser; scope: KeyScope; suspended: boolean } | undefined> {
  const keyHash = hashApiKey(key);
  const row = await lookupCache<KeyOwner>(db, "apiKeys").get(keyHash, async () => {
    const [found] = await selectKeyOwners(db)
      .where(and(eq(apiKeys.keyHash, keyHash), isNull(apiKeys.revokedAt)))
      .limit(1);
    return found && toKeyOwner(found);
  });
  if (!row) return undefined;
  // last_used_at is informational: written at most once a minute per key, off the request's path.
  const staleBefore = new Date(Date.now() - 60_000);
  if (!row.lastUsedAt || row.lastUsedAt < staleBefore) {
    row.lastUsedAt = new Date();
    db.update(apiKeys)
      .set({ lastUsedAt: row.lastUsedAt })
      .where(
        and(
          eq(apiKeys.id, row.scope.keyId),
          or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, staleBefore)),
        ),
      )
      .catch(() => {});
  }
  return { user: row.user, scope: row.scope, suspended: row.suspended };
}

/**
 * Start-up (warm-up.ts): the keys used since `since`, most recent first, up to `limit`, put in the
 * lookup cache as findUserByApiKey would have, so a restart does not make their next calls read
 * them again. Answers how many, and their owners' ids.
 */
export async function preloadRecentKeys(
  db: Database,
  since: Date,
  limit: number,
): Promise<{ keys: number; ownerIds: string[] }> {
  const cache = lookupCache<KeyOwner>(db, "apiKeys");
  const generation = cache.generation;
  const rows = await selectKeyOwners(db)
    .where(and(isNull(apiKeys.revokedAt), sql`${apiKeys.lastUsedAt} >= ${since.toISOString()}`))
    .orderBy(desc(apiKeys.lastUsedAt))
    .limit(limit);
  for (const row of rows) cache.put(row.keyHash, toKeyOwner(row), generation);
  return { keys: rows.length, ownerIds: [...new Set(rows.map((row) => row.user.id))] };
}
