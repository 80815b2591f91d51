import { randomUUID } from "node:crypto";
import { asc, desc, eq, isNull, sql } from "drizzle-orm";
import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
  SignJWT,
} from "jose";
import type { Database } from "../../db/client.ts";
import { receiptSigningKeys } from "../../db/schema/index.ts";
import type { SecretBox } from "../../lib/secrets.ts";

/**
 * Signed call receipts (issue 40 item 4, docs/decisions/073): a paid answer carries a compact JWS
 * (Ed25519, `alg: EdDSA`, `typ: promptmint-receipt+jwt`) saying which app answered, at what price,
 * who paid and how, for which invocation and when. Anyone verifies it with the public keys
 * published at `/.well-known/promptmint-receipt-keys.json` (a JWKS), without asking Promptmint.
 *
 * The keys live in `receipt_signing_keys` (migration 0052), the private half sealed with
 * SECRET_KEY. The first signature makes the first key (generation 1; two processes racing keep
 * one: the generation is unique); `rotate` adds the next generation, which signs from then on,
 * while the older keys stay published until retired so the receipts they signed still verify.
 */

/** The JWS header's `typ`: what a verifier checks so no other token of ours passes as a receipt. */
export const RECEIPT_TYPE = "promptmint-receipt+jwt";
/** Where the receipt rides on a blocking answer. */
export const RECEIPT_HEADER = "promptmint-receipt";
/** Where it rides on an MCP tool result (`_meta`, under our own prefix as MCP asks). */
export const RECEIPT_META_KEY = "promptmint/receipt";
/** The receipts' public keys (a JWKS), relative to the public URL. */
export const RECEIPT_KEYS_PATH = "/.well-known/promptmint-receipt-keys.json";

/** What one receipt says: the facts of one paid call. */
export interface CallReceipt {
  /** The invocation (the Dify message id, the OpenAI completion id's uuid, MCP's `message_id`). */
  invocationId: string;
  app: { id: string; slug: string; version: number | null };
  /** The app's price for this call, in cents. */
  priceCents: number;
  /** What the call took from its payer, in cents (0 when a plan covered it). */
  chargedCents: number;
  paidBy: "wallet" | "plan" | "x402" | "mpp";
  /** The paying user's id, and for an account-less payer its label (`x402:network:address`). */
  payer: { userId: string; label?: string };
  /** When the call was answered. */
  at: Date;
}

/** The claims of a receipt as signed (snake_case JSON, JWT registered claims where one fits). */
export interface ReceiptClaims extends JWTPayload {
  iss: string;
  /** The invocation's id: one receipt per call. */
  jti: string;
  iat: number;
  app: { id: string; slug: string; version: number | null };
  price_cents: number;
  charged_cents: number;
  currency: "USD";
  paid_by: CallReceipt["paidBy"];
  payer: { user_id: string; label?: string };
  invocation_id: string;
}

export interface Jwks {
  keys: JWK[];
}

export interface ReceiptSigner {
  /** A compact JWS of the receipt, signed with the newest key (made on first use). */
  sign(receipt: CallReceipt): Promise<string>;
  /** The public keys of every key not retired, newest first. */
  jwks(): Promise<Jwks>;
  /** Adds a key of the next generation, which signs from now on; answers its kid. */
  rotate(): Promise<string>;
}

const ALG = "EdDSA";

interface SigningKey {
  kid: string;
  generation: number;
  key: CryptoKey;
}

/**
 * The receipts' signer over the database's keys. `issuer` is the platform's public URL (the
 * receipts' `iss`). The signing key is read once and then every `cacheMs` (another process may
 * have rotated it); a key that cannot be unsealed (another SECRET_KEY) is an error, never skipped.
 */
export function createReceiptSigner(
  db: Database,
  secrets: SecretBox,
  options: { issuer: string; cacheMs?: number },
): ReceiptSigner {
  const cacheMs = options.cacheMs ?? 60_000;
  let current: { key: Promise<SigningKey>; until: number } | undefined;

  const newest = async (): Promise<SigningKey> => {
    let [row] = await db
      .select()
      .from(receiptSigningKeys)
      .where(isNull(receiptSigningKeys.retiredAt))
      .orderBy(desc(receiptSigningKeys.generation))
      .limit(1);
    if (!row) {
      await addKey(db, secrets, 1);
      [row] = await db
        .select()
        .from(receiptSigningKeys)
        .where(isNull(receiptSigningKeys.retiredAt))
        .orderBy(desc(receiptSigningKeys.generation))
        .limit(1);
    }
    if (!row) throw new Error("no receipt signing key could be made");
    let jwk: JWK;
    try {
      jwk = JSON.parse(secrets.decrypt(row.sealedPrivateJwk)) as JWK;
    } catch {
      throw new Error(
        `The receipt signing key ${row.kid} cannot be decrypted: SECRET_KEY differs from the one it was sealed with`,
      );
    }
    return { kid: row.kid, generation: row.generation, key: (await importJWK(jwk, ALG)) as CryptoKey };
  };

  const signingKey = () => {
    const now = Date.now();
    if (!current || current.until <= now) {
      const key = newest();
      current = { key, until: now + cacheMs };
      // A failure is not cached: the next receipt tries again.
      key.catch(() => {
        if (current?.key === key) current = undefined;
      });
    }
    return current.key;
  };

  return {
    async sign(receipt) {
      const { kid, key } = await signingKey();
      const claims: Omit<ReceiptClaims, "iss" | "iat" | "jti"> = {
        app: receipt.app,
        price_cents: receipt.priceCents,
        charged_cents: receipt.chargedCents,
        currency: "USD",
        paid_by: receipt.paidBy,
        payer: {
          user_id: receipt.payer.userId,
          ...(receipt.payer.label ? { label: receipt.payer.label } : {}),
        },
        invocation_id: receipt.invocationId,
      };
      return new SignJWT(claims)
        .setProtectedHeader({ alg: ALG, kid, typ: RECEIPT_TYPE })
        .setIssuer(options.issuer)
        .setJti(receipt.invocationId)
        .setIssuedAt(Math.floor(receipt.at.getTime() / 1000))
        .sign(key);
    },
    async jwks() {
      const published = () =>
        db
          .select({ publicJwk: receiptSigningKeys.publicJwk })
          .from(receiptSigningKeys)
          .where(isNull(receiptSigningKeys.retiredAt))
          .orderBy(desc(receiptSigningKeys.generation));
      let rows = await published();
      // Published before the first receipt: the key is made now, so the set is never empty.
      if (rows.length === 0) {
        await signingKey();
        rows = await published();
      }
      return { keys: rows.map((row) => row.publicJwk as JWK) };
    },
    async rotate() {
      const [top] = await db
        .select({ generation: sql<number>`coalesce(max(${receiptSigningKeys.generation}), 0)::int` })
        .from(receiptSigningKeys);
      const kid = await addKey(db, secrets, (top?.generation ?? 0) + 1);
      current = undefined;
      return kid;
    },
  };
}

/** A new Ed25519 key of `generation`, unless one exists already (another process made it). */
async function addKey(db: Database, secrets: SecretBox, generation: number): Promise<string> {
  const { privateKey, publicKey } = await generateKeyPair(ALG, { crv: "Ed25519", extractable: true });
  const kid = `rk-${generation}-${randomUUID().slice(0, 8)}`;
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: "sig" };
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: ALG, use: "sig" };
  await db
    .insert(receiptSigningKeys)
    .values({ kid, generation, publicJwk, sealedPrivateJwk: secrets.encrypt(JSON.stringify(privateJwk)) })
    .onConflictDoNothing();
  return kid;
}

/** Retires a key: no longer published, so the receipts it signed no longer verify. */
export async function retireReceiptKey(db: Database, kid: string): Promise<void> {
  await db.update(receiptSigningKeys).set({ retiredAt: new Date() }).where(eq(receiptSigningKeys.kid, kid));
}

/** Every key, oldest first (for the operator's view and the tests). */
export function listReceiptKeys(db: Database) {
  return db
    .select({
      kid: receiptSigningKeys.kid,
      generation: receiptSigningKeys.generation,
      createdAt: receiptSigningKeys.createdAt,
      retiredAt: receiptSigningKeys.retiredAt,
    })
    .from(receiptSigningKeys)
    .orderBy(asc(receiptSigningKeys.generation));
}

/**
 * Verifies a receipt against a published JWKS (pure: no database, no network): its signature by
 * one of the keys, `alg` EdDSA, `typ` a receipt's, and, when given, the issuer. Throws (jose's
 * errors) when it does not verify; answers its claims.
 */
export async function verifyReceipt(
  token: string,
  jwks: Jwks,
  options: { issuer?: string } = {},
): Promise<ReceiptClaims> {
  const { payload } = await jwtVerify(
    token,
    createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]),
    {
      algorithms: [ALG],
      typ: RECEIPT_TYPE,
      ...(options.issuer ? { issuer: options.issuer } : {}),
    },
  );
  return payload as ReceiptClaims;
}
