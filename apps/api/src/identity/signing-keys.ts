import { randomUUID } from "node:crypto";
import { asc } from "drizzle-orm";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import type { Database } from "../db/client.ts";
import { oidcSigningKeys } from "../db/schema/index.ts";

/**
 * The issuer's signing keys live in the database, so every node signs and verifies with the same
 * keys and tokens survive restarts. The first node to start creates one; the others read it.
 */
export async function loadSigningKeys(db: Database): Promise<JWK[]> {
  const existing = await readKeys(db);
  if (existing.length > 0) return existing;

  const { privateKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  const jwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: "RS256", use: "sig" };
  await db.insert(oidcSigningKeys).values({ kid: jwk.kid, privateJwk: jwk }).onConflictDoNothing();
  return readKeys(db);
}

async function readKeys(db: Database): Promise<JWK[]> {
  const rows = await db.select().from(oidcSigningKeys).orderBy(asc(oidcSigningKeys.createdAt));
  return rows.map((row) => row.privateJwk as JWK);
}

/** Public halves only: what the API uses to verify tokens of the embedded issuer. */
export function toPublicJwks(keys: JWK[]): { keys: JWK[] } {
  return {
    keys: keys.map(({ kty, n, e, crv, x, y, kid, alg, use }) =>
      Object.fromEntries(
        Object.entries({ kty, n, e, crv, x, y, kid, alg, use }).filter(([, v]) => v !== undefined),
      ),
    ),
  };
}
