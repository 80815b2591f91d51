import { createHash } from "node:crypto";
import { and, eq, gt, isNull, lt, or, sql } from "drizzle-orm";
import type { Adapter, AdapterPayload } from "oidc-provider";
import type { Database } from "../db/client.ts";
import { oidcPayloads } from "../db/schema/index.ts";
import type { SessionChecks } from "../modules/auth/sessions.ts";

/**
 * Models whose id is itself the credential a client presents (an opaque refresh token, an
 * authorization code): kept under the id's SHA-256 and without the `jti` copy in the payload,
 * so a read of the table yields nothing that can be redeemed.
 */
const CREDENTIAL_MODELS = new Set([
  "AccessToken",
  "AuthorizationCode",
  "RefreshToken",
  "ClientCredentials",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
  "RegistrationAccessToken",
]);

/**
 * A dynamically registered client (POST /oidc/reg) that never obtains a token is gone a day after
 * its registration; each token it obtains gives it this long again (the lifetime of the grant and
 * refresh token it just got). oidc-provider stores clients without an expiry: the adapter sets it.
 */
export const UNUSED_CLIENT_TTL_SECONDS = 24 * 60 * 60;
export const USED_CLIENT_TTL_SECONDS = 30 * 24 * 60 * 60;

/**
 * A rotated refresh token presented again this soon after its first use is answered as if unused
 * (with the successor its first use got, same grant: refresh-successors.ts, decision 065) instead
 * of being treated as stolen, which revokes the whole
 * session: two tabs renewing at once, or a client retrying a renewal whose answer it never got
 * (a dropped connection), would otherwise sign the person out everywhere. Later reuse is still
 * theft. The same trade-off as Auth0's "reuse interval" and Okta's grace period
 * (docs/decisions/042, amended).
 */
export const REFRESH_TOKEN_REUSE_GRACE_SECONDS = 30;

/** oidc-provider storage in PostgreSQL: one row per (model, id), expired rows are never returned. */
export function createOidcAdapterFactory(db: Database, sessions: Pick<SessionChecks, "forget">) {
  return class PostgresOidcAdapter implements Adapter {
    readonly model: string;
    private readonly hashesIds: boolean;

    constructor(model: string) {
      this.model = model;
      this.hashesIds = CREDENTIAL_MODELS.has(model);
    }

    private key(id: string): string {
      return this.hashesIds ? createHash("sha256").update(id).digest("base64url") : id;
    }

    async upsert(id: string, fullPayload: AdapterPayload, expiresIn: number): Promise<void> {
      const ttl = expiresIn || (this.model === "Client" ? UNUSED_CLIENT_TTL_SECONDS : 0);
      const expiresAt = ttl ? new Date(Date.now() + ttl * 1000) : null;
      const { jti: _jti, ...withoutJti } = fullPayload;
      const payload = this.hashesIds ? withoutJti : fullPayload;
      const row = {
        model: this.model,
        id: this.key(id),
        payload,
        grantId: payload.grantId ?? null,
        userCode: payload.userCode ?? null,
        uid: payload.uid ?? null,
        expiresAt,
      };
      await db
        .insert(oidcPayloads)
        .values(row)
        .onConflictDoUpdate({
          target: [oidcPayloads.model, oidcPayloads.id],
          set: { payload, grantId: row.grantId, userCode: row.userCode, uid: row.uid, expiresAt },
        });
    }

    async find(id: string) {
      const payload = await this.findWhere(eq(oidcPayloads.id, this.key(id)));
      return payload && this.hashesIds ? { ...payload, jti: id } : payload;
    }

    findByUserCode(userCode: string) {
      return this.findWhere(eq(oidcPayloads.userCode, userCode));
    }

    findByUid(uid: string) {
      return this.findWhere(eq(oidcPayloads.uid, uid));
    }

    async consume(id: string): Promise<void> {
      await db
        .update(oidcPayloads)
        // The first use's moment is kept: a reuse within the grace does not extend it.
        .set({ consumedAt: sql`coalesce(${oidcPayloads.consumedAt}, now())` })
        .where(and(eq(oidcPayloads.model, this.model), eq(oidcPayloads.id, this.key(id))));
    }

    async destroy(id: string): Promise<void> {
      await db
        .delete(oidcPayloads)
        .where(and(eq(oidcPayloads.model, this.model), eq(oidcPayloads.id, this.key(id))));
      // A revoked grant's access tokens are refused from now on (modules/auth/sessions.ts).
      if (this.model === "Grant") sessions.forget();
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await db.delete(oidcPayloads).where(eq(oidcPayloads.grantId, grantId));
      sessions.forget();
    }

    private async findWhere(condition: ReturnType<typeof eq>): Promise<AdapterPayload | undefined> {
      const [row] = await db
        .select()
        .from(oidcPayloads)
        .where(
          and(
            eq(oidcPayloads.model, this.model),
            condition,
            or(isNull(oidcPayloads.expiresAt), gt(oidcPayloads.expiresAt, sql`now()`)),
          ),
        )
        .limit(1);
      if (!row) return undefined;
      // A rotated refresh token's sealed successor (refresh-successors.ts) is not oidc-provider's.
      const { successor: _successor, ...payload } = row.payload as AdapterPayload & { successor?: string };
      if (!row.consumedAt) return payload;
      if (
        this.model === "RefreshToken" &&
        Date.now() - row.consumedAt.getTime() < REFRESH_TOKEN_REUSE_GRACE_SECONDS * 1000
      )
        return payload;
      return { ...payload, consumed: Math.floor(row.consumedAt.getTime() / 1000) };
    }
  };
}

/** A registered client just obtained a token: it lives USED_CLIENT_TTL_SECONDS from now. */
export async function keepRegisteredClient(db: Database, clientId: string, now = new Date()): Promise<void> {
  await db
    .update(oidcPayloads)
    .set({ expiresAt: new Date(now.getTime() + USED_CLIENT_TTL_SECONDS * 1000) })
    .where(and(eq(oidcPayloads.model, "Client"), eq(oidcPayloads.id, clientId)));
}

/**
 * Removes rows expired at `now` (registered clients never used among them); called periodically
 * so the table does not grow without bound.
 */
export async function deleteExpiredOidcPayloads(db: Database, now = new Date()): Promise<number> {
  const removed = await db
    .delete(oidcPayloads)
    .where(lt(oidcPayloads.expiresAt, now))
    .returning({ id: oidcPayloads.id });
  return removed.length;
}
