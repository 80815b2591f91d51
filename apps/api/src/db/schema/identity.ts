import { sql } from "drizzle-orm";
import { check, index, jsonb, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, generatedId, reference, timestamptz } from "./columns.ts";

/** Accounts of the embedded issuer (email + argon2id hash). External issuers never touch this. */
export const identityAccounts = pgTable("identity_accounts", {
  id: generatedId(),
  email: text("email").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  displayName: text("display_name").notNull(),
  createdAt: createdAt(),
  /** When the person opened the link mailed to `email` (docs/decisions/041); null until then. */
  emailVerifiedAt: timestamptz("email_verified_at"),
});

/** Single-use links the embedded issuer mails (verify an address, reset a password), as SHA-256. */
export const identityTokens = pgTable(
  "identity_tokens",
  {
    id: generatedId(),
    accountId: reference("account_id", () => identityAccounts.id, "cascade"),
    purpose: text("purpose", { enum: ["verify_email", "reset_password"] }).notNull(),
    tokenSha256: text("token_sha256").notNull(),
    /** The address the link was mailed to: it verifies that address only. */
    email: text("email").notNull(),
    expiresAt: timestamptz("expires_at").notNull(),
    usedAt: timestamptz("used_at"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("identity_tokens_token_key").on(t.tokenSha256),
    index("identity_tokens_account_idx").on(t.accountId, t.purpose, t.createdAt),
    check("identity_tokens_purpose", sql`${t.purpose} in ('verify_email', 'reset_password')`),
  ],
);

/** oidc-provider's storage: sessions, grants, codes, refresh tokens, interactions. */
export const oidcPayloads = pgTable(
  "oidc_payloads",
  {
    model: text("model").notNull(),
    id: text("id").notNull(),
    payload: jsonb("payload").notNull(),
    grantId: text("grant_id"),
    userCode: text("user_code"),
    uid: text("uid"),
    expiresAt: timestamptz("expires_at"),
    consumedAt: timestamptz("consumed_at"),
  },
  (t) => [
    primaryKey({ columns: [t.model, t.id] }),
    index("oidc_payloads_grant_id_idx").on(t.grantId),
    index("oidc_payloads_uid_idx").on(t.uid),
    index("oidc_payloads_user_code_idx").on(t.userCode),
    index("oidc_payloads_expires_at_idx").on(t.expiresAt),
    // Sign-out ends every grant and session of an account (modules/auth/sessions.ts).
    index("oidc_payloads_account_id_idx").on(sql`(${t.payload}->>'accountId')`),
  ],
);

/**
 * The issuer's private signing keys, shared by every node so tokens verify everywhere. Sealed
 * with SECRET_KEY (lib/secrets.ts); `private_jwk` holds a plaintext key only between the upgrade
 * to 0017 and the first start, which seals it (identity/signing-keys.ts). Exactly one is set.
 */
export const oidcSigningKeys = pgTable(
  "oidc_signing_keys",
  {
    kid: text("kid").primaryKey(),
    privateJwk: jsonb("private_jwk"),
    sealedJwk: text("sealed_jwk"),
    createdAt: createdAt(),
  },
  (t) => [check("oidc_signing_keys_one_form", sql`(${t.privateJwk} is null) <> (${t.sealedJwk} is null)`)],
);

/** Failed sign-ins, counted per email and per IP to throttle password guessing on every node. */
export const signInFailures = pgTable(
  "sign_in_failures",
  {
    id: generatedId(),
    email: text("email").notNull(),
    ip: text("ip").notNull(),
    failedAt: timestamptz("failed_at").notNull().defaultNow(),
  },
  (t) => [
    index("sign_in_failures_email_idx").on(t.email, t.failedAt),
    index("sign_in_failures_ip_idx").on(t.ip, t.failedAt),
  ],
);
