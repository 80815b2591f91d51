import { sql } from "drizzle-orm";
import { boolean, check, integer, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, generatedId, reference, timestamptz, updatedAt } from "./columns.ts";

/** A person using Promptmint, created from a verified token's claims (any OIDC issuer). */
export const users = pgTable(
  "users",
  {
    id: generatedId(),
    issuer: text("issuer").notNull(),
    subject: text("subject").notNull(),
    username: text("username").notNull(),
    email: text("email").notNull(),
    firstName: text("first_name").notNull().default(""),
    lastName: text("last_name").notNull().default(""),
    displayName: text("display_name").notNull().default(""),
    isActive: boolean("is_active").notNull().default(true),
    dateJoined: timestamptz("date_joined").notNull().defaultNow(),
    updatedAt: updatedAt(),
    /** Set at sign-out: access tokens issued before it are refused (modules/auth/sessions.ts). */
    sessionsValidAfter: timestamptz("sessions_valid_after"),
    /** The issuer's email_verified claim for `email` (docs/decisions/041). */
    emailVerified: boolean("email_verified").notNull().default(false),
    /**
     * 'organization': an account people act for by membership (decision 084); no token names it
     * (its issuer is ORGANIZATION_ISSUER), so no one signs in as it.
     */
    kind: text("kind", { enum: ["person", "organization"] })
      .notNull()
      .default("person"),
  },
  (t) => [
    check("users_kind", sql`${t.kind} in ('person', 'organization')`),
    uniqueIndex("users_issuer_subject_key").on(t.issuer, t.subject),
    uniqueIndex("users_username_key").on(sql`lower(${t.username})`),
  ],
);

/**
 * A role granted to a user: only `operator` (the /admin powers) so far. Revoking keeps the row
 * (revoked_at) so the ADMIN_EMAILS bootstrap, which only adds missing rows, never re-grants it.
 */
export const userRoles = pgTable(
  "user_roles",
  {
    userId: reference("user_id", () => users.id, "cascade"),
    role: text("role", { enum: ["operator"] }).notNull(),
    grantedBy: text("granted_by").notNull(),
    grantedAt: timestamptz("granted_at").notNull().defaultNow(),
    revokedAt: timestamptz("revoked_at"),
  },
  (t) => [
    primaryKey({ name: "user_roles_pkey", columns: [t.userId, t.role] }),
    check("user_roles_role", sql`${t.role} in ('operator')`),
  ],
);

/** A user who sells applications. Plan and credits are set by the platform, never by the user. */
export const creators = pgTable(
  "creators",
  {
    id: generatedId(),
    userId: reference("user_id", () => users.id, "cascade"),
    displayName: text("display_name").notNull().default(""),
    plan: text("plan").notNull().default("free"),
    credits: integer("credits").notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("creators_user_id_key").on(t.userId),
    check("creators_credits_nonnegative", sql`${t.credits} >= 0`),
  ],
);
