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
 * revocation it makes (`forget`), so here a revoked token is refused at once; another
 * API process may accept it for at most that long.
 */
export const SESSION_CHECK_TTL_MS = 2_000;
const MAX_ENTRIES = 10_000;

export interface SessionChecks {
  /** Refuses (401) a verified token whose session was ended. */
  assertLive(token: VerifiedToken): Promise<void>;
  /** After any grant or session is revoked: the next check reads the database again. */
  forget(): void;
  /**
   * Sign-out everywhere: access tokens issued until now are refused, and for the embedded issuer
   * every grant (with its refresh tokens) and every issuer session of the account is revoked.
   */
  endAll(token: Pick<VerifiedToken, "issuer" | "subject">): Promise<void>;
}

/** The checks of one database's sessions, with their cache (built once by services.ts). */
export function createSessionChecks(db: Database): SessionChecks {
  /** Grant id → when its "still alive" answer expires. */
  const grants = new Map<string, number>();
  /** issuer + subject → sign-out time (ms, 0 when never) and when that answer expires. */
  const signOuts = new Map<string, { validAfterMs: number; expires: number }>();
  let generation = 0;

  const forget = () => {
    generation += 1;
    grants.clear();
    signOuts.clear();
  };

  async function isGrantAlive(grantId: string): Promise<boolean> {
    if ((grants.get(grantId) ?? 0) > Date.now()) return true;
    const startedAt = generation;
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
    if (row && startedAt === generation) remember(grants, grantId, Date.now() + SESSION_CHECK_TTL_MS);
    return row !== undefined;
  }

  async function sessionsValidAfterMs(token: VerifiedToken): Promise<number> {
    const key = `${token.issuer}\0${token.subject}`;
    const hit = signOuts.get(key);
    if (hit && hit.expires > Date.now()) return hit.validAfterMs;
    const startedAt = generation;
    const [row] = await db
      .select({ validAfter: users.sessionsValidAfter })
      .from(users)
      .where(and(eq(users.issuer, token.issuer), eq(users.subject, token.subject)))
      .limit(1);
    const validAfterMs = row?.validAfter?.getTime() ?? 0;
    if (startedAt === generation)
      remember(signOuts, key, { validAfterMs, expires: Date.now() + SESSION_CHECK_TTL_MS });
    return validAfterMs;
  }

  return {
    async assertLive(token) {
      const grantId = token.claims.grant_id;
      if (token.issuer === EMBEDDED_ISSUER_KEY && typeof grantId === "string") {
        if (!(await isGrantAlive(grantId)))
          throw new AppError(
            "unauthorized",
            "Access token belongs to a session that has ended; sign in again",
          );
      }
      // `iat` has whole seconds: a token of the very second of a sign-out passes this check (the
      // grant check above refuses it for the embedded issuer); earlier ones do not.
      const validAfterMs = await sessionsValidAfterMs(token);
      const issuedAt = typeof token.claims.iat === "number" ? token.claims.iat : 0;
      if (validAfterMs > 0 && issuedAt < Math.floor(validAfterMs / 1000))
        throw new AppError("unauthorized", "Access token was issued before you signed out; sign in again");
    },
    forget,
    async endAll(token) {
      await db
        .update(users)
        .set({ sessionsValidAfter: sql`now()` })
        .where(and(eq(users.issuer, token.issuer), eq(users.subject, token.subject)));
      if (token.issuer === EMBEDDED_ISSUER_KEY) await revokeAccountGrants(db, token.subject);
      forget();
    },
  };
}

function remember<V>(map: Map<string, V>, key: string, value: V) {
  if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

/** Deletes the account's grants, everything issued under them, and its issuer sessions. */
async function revokeAccountGrants(db: Database, accountId: string): Promise<void> {
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
}
