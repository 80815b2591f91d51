import { randomUUID } from "node:crypto";
import { and, asc, eq, isNotNull } from "drizzle-orm";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import type { Database } from "../db/client.ts";
import { oidcSigningKeys } from "../db/schema/index.ts";
import type { SecretBox } from "../lib/secrets.ts";

/**
 * The issuer's signing keys live in the database, so every node signs and verifies with the same
 * keys and tokens survive restarts. The first node to start creates one; the others read it.
 * Private keys are sealed with SECRET_KEY like provider secrets: a copy of the database alone
 * cannot sign tokens.
 */
export async function loadSigningKeys(db: Database, secrets: SecretBox): Promise<JWK[]> {
  await sealPlaintextKeys(db, secrets);
  const existing = await readKeys(db, secrets);
  if (existing.length > 0) return existing;

  const { privateKey } = await generateKeyPair("RS256", { extractable: true, modulusLength: 2048 });
  const jwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: "RS256", use: "sig" };
  await db
    .insert(oidcSigningKeys)
    .values({ kid: jwk.kid, sealedJwk: secrets.encrypt(JSON.stringify(jwk)) })
    .onConflictDoNothing();
  return readKeys(db, secrets);
}

/**
 * Keys stored before 0017 are plaintext (`private_jwk`); each is rewritten sealed. Idempotent and
 * safe on several nodes at once: a row is only rewritten while it is still plaintext.
 */
async function sealPlaintextKeys(db: Database, secrets: SecretBox): Promise<void> {
  const plaintext = await db.select().from(oidcSigningKeys).where(isNotNull(oidcSigningKeys.privateJwk));
  for (const row of plaintext) {
    await db
      .update(oidcSigningKeys)
      .set({ sealedJwk: secrets.encrypt(JSON.stringify(row.privateJwk)), privateJwk: null })
      .where(and(eq(oidcSigningKeys.kid, row.kid), isNotNull(oidcSigningKeys.privateJwk)));
  }
}

async function readKeys(db: Database, secrets: SecretBox): Promise<JWK[]> {
  const rows = await db.select().from(oidcSigningKeys).orderBy(asc(oidcSigningKeys.createdAt));
  return rows.map((row) => {
    if (row.sealedJwk === null) return row.privateJwk as JWK;
    try {
      return JSON.parse(secrets.decrypt(row.sealedJwk)) as JWK;
    } catch {
      throw new Error(
        `The identity provider's signing key ${row.kid} cannot be decrypted: SECRET_KEY differs from the one it was sealed with`,
      );
    }
  });
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
