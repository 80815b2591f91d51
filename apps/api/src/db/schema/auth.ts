import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

/** A person using Promptmint, created from a verified token's claims (any OIDC issuer). */
export const users = pgTable(
  "users",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    issuer: text("issuer").notNull(),
    subject: text("subject").notNull(),
    username: text("username").notNull(),
    email: text("email").notNull(),
    firstName: text("first_name").notNull().default(""),
    lastName: text("last_name").notNull().default(""),
    displayName: text("display_name").notNull().default(""),
    isActive: boolean("is_active").notNull().default(true),
    dateJoined: timestamp("date_joined", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
    /** Set at sign-out: access tokens issued before it are refused (modules/auth/sessions.ts). */
    sessionsValidAfter: timestamp("sessions_valid_after", { withTimezone: true }),
    /** The issuer's email_verified claim for `email` (docs/decisions/041). */
    emailVerified: boolean("email_verified").notNull().default(false),
  },
  (t) => [
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
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["operator"] }).notNull(),
    grantedBy: text("granted_by").notNull(),
    grantedAt: timestamp("granted_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
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
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    displayName: text("display_name").notNull().default(""),
    plan: text("plan").notNull().default("free"),
    credits: integer("credits").notNull().default(0),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("creators_user_id_key").on(t.userId),
    check("creators_credits_nonnegative", sql`${t.credits} >= 0`),
  ],
);
