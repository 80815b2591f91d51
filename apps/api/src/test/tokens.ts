import { generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import type { Database } from "../db/client.ts";
import { oidcSigningKeys } from "../db/schema/index.ts";
import { loadSigningKeys } from "../identity/signing-keys.ts";
import { createSecretBox } from "../lib/secrets.ts";
import { TEST_SECRET_KEY } from "./server.ts";

/** Tokens the issuer never issued, signed with its real key, to prove the API checks each claim. */
export async function forgeToken(
  db: Database,
  claims: { iss: string; aud: string; sub: string; exp: number; iat?: number; grant_id?: string },
  options: { foreignKey?: boolean } = {},
): Promise<string> {
  let key: CryptoKey | Uint8Array;
  let kid: string;
  if (options.foreignKey) {
    const pair = await generateKeyPair("RS256");
    key = pair.privateKey;
    [{ kid }] = (await db.select({ kid: oidcSigningKeys.kid }).from(oidcSigningKeys)) as [{ kid: string }];
  } else {
    const [jwk] = await loadSigningKeys(db, createSecretBox(TEST_SECRET_KEY));
    if (!jwk?.kid) throw new Error("the issuer has no signing key yet");
    key = (await importJWK(jwk as JWK, "RS256")) as CryptoKey;
    kid = jwk.kid;
  }
  const { iss, aud, sub, exp, iat = exp - 3600, grant_id } = claims;
  return new SignJWT({ email: "forged@example.com", ...(grant_id ? { grant_id } : {}) })
    .setProtectedHeader({ alg: "RS256", kid })
    .setIssuer(iss)
    .setAudience(aud)
    .setSubject(sub)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key);
}

/** An unsigned token (`alg: none`) that claims to be anyone. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${encode({ alg: "none", typ: "JWT" })}.${encode(claims)}.`;
}
