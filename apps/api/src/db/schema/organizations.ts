import { sql } from "drizzle-orm";
import { check, index, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { users } from "./auth.ts";
import { bigNumber, createdAt, generatedId, reference, timestamptz, updatedAt } from "./columns.ts";

/** Roles in an organization, most powerful first (decision 084). */
export const ORGANIZATION_ROLES = ["owner", "admin", "developer", "billing", "viewer"] as const;
export type OrganizationRole = (typeof ORGANIZATION_ROLES)[number];

/** What an organization has beyond its account (`users` row): the details its receipts carry. */
export const organizations = pgTable("organizations", {
  id: uuid("id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  billingEmail: text("billing_email"),
  billingAddress: text("billing_address").notNull().default(""),
  taxId: text("tax_id").notNull().default(""),
  createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
  createdAt: createdAt(),
});

/** A person's membership of an organization (an account of kind 'organization'), with a role. */
export const organizationMembers = pgTable(
  "organization_members",
  {
    organizationId: reference("organization_id", () => users.id, "cascade"),
    userId: reference("user_id", () => users.id, "cascade"),
    role: text("role", { enum: ORGANIZATION_ROLES }).notNull(),
    /** What the member's calls may spend of the organization's money per UTC month; null: no budget. */
    monthlyBudgetCents: bigNumber("monthly_budget_cents"),
    addedBy: uuid("added_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: "organization_members_pkey", columns: [t.organizationId, t.userId] }),
    index("organization_members_user_idx").on(t.userId),
    check(
      "organization_members_role",
      sql`${t.role} in ('owner', 'admin', 'developer', 'billing', 'viewer')`,
    ),
    check(
      "organization_members_budget_nonnegative",
      sql`${t.monthlyBudgetCents} IS NULL OR ${t.monthlyBudgetCents} >= 0`,
    ),
  ],
);

/** An invitation mailed to an address; the link's token is kept as its SHA-256 only. */
export const organizationInvitations = pgTable(
  "organization_invitations",
  {
    id: generatedId(),
    organizationId: reference("organization_id", () => users.id, "cascade"),
    email: text("email").notNull(),
    role: text("role", { enum: ORGANIZATION_ROLES }).notNull(),
    tokenHash: text("token_hash").notNull(),
    invitedBy: uuid("invited_by").references(() => users.id, { onDelete: "set null" }),
    createdAt: createdAt(),
    expiresAt: timestamptz("expires_at").notNull(),
    acceptedAt: timestamptz("accepted_at"),
    acceptedBy: uuid("accepted_by").references(() => users.id, { onDelete: "set null" }),
    revokedAt: timestamptz("revoked_at"),
  },
  (t) => [
    uniqueIndex("organization_invitations_token_key").on(t.tokenHash),
    uniqueIndex("organization_invitations_one_pending")
      .on(t.organizationId, sql`lower(${t.email})`)
      .where(sql`accepted_at IS NULL AND revoked_at IS NULL`),
    check(
      "organization_invitations_role",
      sql`${t.role} in ('owner', 'admin', 'developer', 'billing', 'viewer')`,
    ),
  ],
);

/** A member's spend of the organization's money in one UTC month (the scheme of decision 035). */
export const memberSpend = pgTable(
  "member_spend",
  {
    organizationId: reference("organization_id", () => users.id, "cascade"),
    userId: reference("user_id", () => users.id, "cascade"),
    periodStart: timestamptz("period_start").notNull(),
    spentMicros: bigNumber("spent_micros").notNull(),
  },
  (t) => [
    primaryKey({ name: "member_spend_pkey", columns: [t.organizationId, t.userId, t.periodStart] }),
    check("member_spend_not_negative", sql`${t.spentMicros} >= 0`),
  ],
);

/** A member's call's price reserved against their budget before it runs, by the call's id. */
export const memberSpendReservations = pgTable(
  "member_spend_reservations",
  {
    callId: uuid("call_id").primaryKey(),
    organizationId: reference("organization_id", () => users.id, "cascade"),
    userId: reference("user_id", () => users.id, "cascade"),
    periodStart: timestamptz("period_start").notNull(),
    micros: bigNumber("micros").notNull(),
    expiresAt: timestamptz("expires_at").notNull(),
  },
  (t) => [index("member_spend_reservations_expiry_idx").on(t.expiresAt)],
);

/** Every action in an organization: who, what, when. */
export const organizationAuditEvents = pgTable(
  "organization_audit_events",
  {
    id: generatedId(),
    organizationId: reference("organization_id", () => users.id, "cascade"),
    actorId: uuid("actor_id").references(() => users.id, { onDelete: "set null" }),
    action: text("action").notNull(),
    target: text("target").notNull().default(""),
    details: jsonb("details").$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
    createdAt: createdAt(),
  },
  (t) => [index("organization_audit_events_org_idx").on(t.organizationId, t.createdAt.desc(), t.id)],
);
