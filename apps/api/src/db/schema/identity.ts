import { sql } from "drizzle-orm";
import {
  check,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

/** Accounts of the embedded issuer (email + argon2id hash). External issuers never touch this. */
export const identityAccounts = pgTable("identity_accounts", {
  id: uuid("id").primaryKey().defaultRandom(),
  email: text("email").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  displayName: text("display_name").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  /** When the person opened the link mailed to `email` (docs/decisions/041); null until then. */
  emailVerifiedAt: timestamp("email_verified_at", { withTimezone: true }),
});

/** Single-use links the embedded issuer mails (verify an address, reset a password), as SHA-256. */
export const identityTokens = pgTable(
  "identity_tokens",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    accountId: uuid("account_id")
      .notNull()
      .references(() => identityAccounts.id, { onDelete: "cascade" }),
    purpose: text("purpose", { enum: ["verify_email", "reset_password"] }).notNull(),
    tokenSha256: text("token_sha256").notNull(),
    /** The address the link was mailed to: it verifies that address only. */
    email: text("email").notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
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
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    consumedAt: timestamp("consumed_at", { withTimezone: true }),
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
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check("oidc_signing_keys_one_form", sql`(${t.privateJwk} is null) <> (${t.sealedJwk} is null)`)],
);

/** Failed sign-ins, counted per email and per IP to throttle password guessing on every node. */
export const signInFailures = pgTable(
  "sign_in_failures",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    email: text("email").notNull(),
    ip: text("ip").notNull(),
    failedAt: timestamp("failed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("sign_in_failures_email_idx").on(t.email, t.failedAt),
    index("sign_in_failures_ip_idx").on(t.ip, t.failedAt),
  ],
);
