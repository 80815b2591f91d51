import { and, eq, inArray, or, sql } from "drizzle-orm";
import { EMBEDDED_ISSUER_KEY } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import { oidcPayloads, users } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import type { VerifiedToken } from "./token-verifier.ts";

/**
 * Access tokens end with the session they came from, not only at their expiry:
 * - a token of the embedded issuer names its grant (`grant_id`); once the grant is revoked
 *   (sign-out, end-session, refresh-token revocation) the token is refused;
 * - any issuer's token issued before the user's `sessions_valid_after` (set at sign-out) is refused.
 *
 * Both are read through a cache of at most SESSION_CHECK_TTL_MS: this process forgets it on every
 * revocation it makes (`forgetSessionChecks`), so here a revoked token is refused at once; another
 * API process may accept it for at most that long.
 */
export const SESSION_CHECK_TTL_MS = 2_000;
const MAX_ENTRIES = 10_000;

interface Cache {
  /** Grant id → when its "still alive" answer expires. */
  grants: Map<string, number>;
  /** issuer + subject → sign-out time (ms, 0 when never) and when that answer expires. */
  users: Map<string, { validAfterMs: number; expires: number }>;
  generation: number;
}

const caches = new WeakMap<Database, Cache>();

function cacheFor(db: Database): Cache {
  let cache = caches.get(db);
  if (!cache) {
    cache = { grants: new Map(), users: new Map(), generation: 0 };
    caches.set(db, cache);
  }
  return cache;
}

/** After any grant or session is revoked: the next check reads the database again. */
export function forgetSessionChecks(db: Database): void {
  const cache = cacheFor(db);
  cache.generation += 1;
  cache.grants.clear();
  cache.users.clear();
}

function remember<V>(map: Map<string, V>, key: string, value: V) {
  if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

async function isGrantAlive(db: Database, grantId: string): Promise<boolean> {
  const cache = cacheFor(db);
  if ((cache.grants.get(grantId) ?? 0) > Date.now()) return true;
  const startedAt = cache.generation;
  const [row] = await db
    .select({ id: oidcPayloads.id })
    .from(oidcPayloads)
    .where(
      and(
        eq(oidcPayloads.model, "Grant"),
        eq(oidcPayloads.id, grantId),
        sql`(${oidcPayloads.expiresAt} is null or ${oidcPayloads.expiresAt} > now())`,
      ),
    )
    .limit(1);
  if (row && startedAt === cache.generation)
    remember(cache.grants, grantId, Date.now() + SESSION_CHECK_TTL_MS);
  return row !== undefined;
}

async function sessionsValidAfterMs(db: Database, token: VerifiedToken): Promise<number> {
  const cache = cacheFor(db);
  const key = `${token.issuer}\0${token.subject}`;
  const hit = cache.users.get(key);
  if (hit && hit.expires > Date.now()) return hit.validAfterMs;
  const startedAt = cache.generation;
  const [row] = await db
    .select({ validAfter: users.sessionsValidAfter })
    .from(users)
    .where(and(eq(users.issuer, token.issuer), eq(users.subject, token.subject)))
    .limit(1);
  const validAfterMs = row?.validAfter?.getTime() ?? 0;
  if (startedAt === cache.generation)
    remember(cache.users, key, { validAfterMs, expires: Date.now() + SESSION_CHECK_TTL_MS });
  return validAfterMs;
}

/** Refuses (401) a verified token whose session was ended. */
export async function assertSessionLive(db: Database, token: VerifiedToken): Promise<void> {
  const grantId = token.claims.grant_id;
  if (token.issuer === EMBEDDED_ISSUER_KEY && typeof grantId === "string") {
    if (!(await isGrantAlive(db, grantId)))
      throw new AppError("unauthorized", "Access token belongs to a session that has ended; sign in again");
  }
  // `iat` has whole seconds: a token of the very second of a sign-out passes this check (the grant
  // check above refuses it for the embedded issuer); earlier ones do not.
  const validAfterMs = await sessionsValidAfterMs(db, token);
  const issuedAt = typeof token.claims.iat === "number" ? token.claims.iat : 0;
  if (validAfterMs > 0 && issuedAt < Math.floor(validAfterMs / 1000))
    throw new AppError("unauthorized", "Access token was issued before you signed out; sign in again");
}

/**
 * Sign-out everywhere: access tokens issued until now are refused, and for the embedded issuer
 * every grant (with its refresh tokens) and every issuer session of the account is revoked.
 */
export async function endAllSessions(db: Database, token: Pick<VerifiedToken, "issuer" | "subject">) {
  await db
    .update(users)
    .set({ sessionsValidAfter: sql`now()` })
    .where(and(eq(users.issuer, token.issuer), eq(users.subject, token.subject)));
  if (token.issuer === EMBEDDED_ISSUER_KEY) await revokeAccountGrants(db, token.subject);
  forgetSessionChecks(db);
}

/** Deletes the account's grants, everything issued under them, and its issuer sessions. */
export async function revokeAccountGrants(db: Database, accountId: string): Promise<void> {
  const ofAccount = sql`${oidcPayloads.payload}->>'accountId' = ${accountId}`;
  await db.transaction(async (tx) => {
    const grants = await tx
      .select({ id: oidcPayloads.id })
      .from(oidcPayloads)
      .where(and(eq(oidcPayloads.model, "Grant"), ofAccount));
    const grantIds = grants.map((grant) => grant.id);
    await tx
      .delete(oidcPayloads)
      .where(
        or(
          and(inArray(oidcPayloads.model, ["Grant", "Session"]), ofAccount),
          grantIds.length > 0 ? inArray(oidcPayloads.grantId, grantIds) : undefined,
        ),
      );
  });
  forgetSessionChecks(db);
}
