import { createHash, randomBytes } from "node:crypto";
import type { ApiKey, CreatedApiKey } from "@promptmint/contracts";
import { and, desc, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { lockUserRow } from "../../db/row-locks.ts";
import { apiKeys, users } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import { forgetLookups, lookupCache } from "../../lib/lookup-cache.ts";
import { userSuspended } from "../admin/suspensions.ts";
import type { LocalUser } from "../auth/auth.service.ts";

const KEY_PREFIX = "pm_";
const MAX_KEYS_PER_USER = 50;

export const hashApiKey = (key: string) => createHash("sha256").update(key).digest("hex");
export const looksLikeApiKey = (token: string) => token.startsWith(KEY_PREFIX);

type ApiKeyRow = typeof apiKeys.$inferSelect;

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
  };
}

export async function listApiKeys(db: Database, user: LocalUser): Promise<ApiKey[]> {
  const rows = await db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.userId, user.id), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt));
  return rows.map(toApiKey);
}

/**
 * The full key exists only in this response; the database keeps its SHA-256. The cap is checked
 * under the user's row lock, so concurrent creations cannot pass it.
 */
export async function createApiKey(db: Database, user: LocalUser, name: string): Promise<CreatedApiKey> {
  const key = `${KEY_PREFIX}${randomBytes(24).toString("base64url")}`;
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
      .values({ userId: user.id, name, prefix: key.slice(0, 10), keyHash: hashApiKey(key) })
      .returning();
    return created;
  });
  if (!row) throw new Error("api key insert returned nothing");
  return { ...toApiKey(row), key };
}

export async function revokeApiKey(db: Database, user: LocalUser, id: string): Promise<void> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw notFound("API key");
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, id), eq(apiKeys.userId, user.id), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (!row) throw notFound("API key");
  forgetLookups(db, "apiKeys");
}

interface KeyOwner {
  user: LocalUser;
  keyId: string;
  lastUsedAt: Date | null;
  /** The operator suspended the key's user (modules/admin/suspensions.ts). */
  suspended: boolean;
}

/** The active user behind a key, or undefined for an unknown or revoked key. */
export async function findUserByApiKey(
  db: Database,
  key: string,
): Promise<{ user: LocalUser; keyId: string; suspended: boolean } | undefined> {
  const row = await lookupCache<KeyOwner>(db, "apiKeys").get(hashApiKey(key), async () => {
    const [found] = await db
      .select({
        user: users,
        keyId: apiKeys.id,
        lastUsedAt: apiKeys.lastUsedAt,
        suspended: userSuspended(users.id),
      })
      .from(apiKeys)
      .innerJoin(users, eq(users.id, apiKeys.userId))
      .where(and(eq(apiKeys.keyHash, hashApiKey(key)), isNull(apiKeys.revokedAt)))
      .limit(1);
    return found;
  });
  if (!row) return undefined;
  // last_used_at is informational: written at most once a minute per key, off the request's path.
  const staleBefore = new Date(Date.now() - 60_000);
  if (!row.lastUsedAt || row.lastUsedAt < staleBefore) {
    row.lastUsedAt = new Date();
    db.update(apiKeys)
      .set({ lastUsedAt: row.lastUsedAt })
      .where(
        and(eq(apiKeys.id, row.keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, staleBefore))),
      )
      .catch(() => {});
  }
  return { user: row.user, keyId: row.keyId, suspended: row.suspended };
}
