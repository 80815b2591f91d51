import { sql } from "drizzle-orm";
import { check, index, jsonb, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";

/** Accounts of the embedded issuer (email + argon2id hash). External issuers never touch this. */
export const identityAccounts = pgTable("identity_accounts", {
  id: uuid("id").primaryKey().defaultRandom(),
  email: text("email").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  displayName: text("display_name").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

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
