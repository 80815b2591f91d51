import { sql } from "drizzle-orm";
import {
  bigserial,
  check,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { users } from "./auth.ts";
import { payments } from "./billing.ts";
import { bigNumber, createdAt, generatedId, reference, updatedAt } from "./columns.ts";

/** What the operator did, to whom and why (docs/decisions/028). Append-only (a trigger refuses updates and deletes). */
export const auditLog = pgTable(
  "audit_log",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    /** Null for what a payment provider did (a Stripe refund or dispute). */
    actorId: uuid("actor_id").references(() => users.id, { onDelete: "restrict" }),
    actorEmail: text("actor_email").notNull(),
    action: text("action").notNull(),
    targetKind: text("target_kind").notNull(),
    targetId: text("target_id").notNull(),
    reason: text("reason").notNull().default(""),
    details: jsonb("details").notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [index("audit_log_created_idx").on(t.createdAt, t.id)],
);

/** An app or a user the operator suspended (modules/admin/suspensions.ts). */
export const suspensions = pgTable(
  "suspensions",
  {
    targetKind: text("target_kind", { enum: ["application", "user"] }).notNull(),
    targetId: uuid("target_id").notNull(),
    reason: text("reason").notNull(),
    actorId: uuid("actor_id").references(() => users.id, { onDelete: "restrict" }),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: "suspensions_pkey", columns: [t.targetKind, t.targetId] }),
    check("suspensions_kind", sql`${t.targetKind} in ('application', 'user')`),
  ],
);

/** Each refund and dispute of a card payment, once per gateway id (billing/reversals.ts). */
export const paymentReversals = pgTable(
  "payment_reversals",
  {
    id: generatedId(),
    paymentId: reference("payment_id", () => payments.id, "restrict"),
    kind: text("kind", { enum: ["refund", "dispute"] }).notNull(),
    externalId: text("external_id").notNull(),
    /** A refund: what it added to the charge's refunded total. A dispute: the disputed amount. */
    amountCents: bigNumber("amount_cents").notNull(),
    status: text("status", {
      enum: ["succeeded", "open", "inquiry", "won", "lost", "warning_closed"],
    }).notNull(),
    reason: text("reason").notNull().default(""),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("payment_reversals_external_key").on(t.kind, t.externalId),
    index("payment_reversals_payment_idx").on(t.paymentId),
  ],
);

/** How much of a card payment the ledger has taken back so far. */
export const reversedPayments = pgTable("reversed_payments", {
  paymentId: uuid("payment_id")
    .primaryKey()
    .references(() => payments.id, { onDelete: "restrict" }),
  reversedCents: bigNumber("reversed_cents").notNull().default(0),
  updatedAt: updatedAt(),
});

/**
 * Where each reversal of a wallet payment took its money from, or gave it back to (decision 045):
 * the payer, or a creator who earned from the payment's spending (their earnings part, and the
 * platform's fee and model cost on those calls). Positive taken, negative given back; the sum per
 * payment is what `reversed_payments` took back, in micros (reconcile checks it).
 */
export const chargebackParts = pgTable(
  "chargeback_parts",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    paymentId: reference("payment_id", () => payments.id, "restrict"),
    /** The ledger transaction's reference (kind `reversal`) that moved it. */
    reference: text("reference").notNull(),
    party: text("party", { enum: ["payer", "creator"] }).notNull(),
    creatorId: uuid("creator_id").references(() => users.id, { onDelete: "restrict" }),
    amountMicros: bigNumber("amount_micros").notNull(),
    earningsMicros: bigNumber("earnings_micros").notNull().default(0),
    feeMicros: bigNumber("fee_micros").notNull().default(0),
    modelCostMicros: bigNumber("model_cost_micros").notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    index("chargeback_parts_payment_idx").on(t.paymentId),
    index("chargeback_parts_creator_idx").on(t.creatorId).where(sql`${t.creatorId} is not null`),
    check("chargeback_parts_party", sql`${t.party} in ('payer', 'creator')`),
    check("chargeback_parts_creator", sql`(${t.party} = 'creator') = (${t.creatorId} is not null)`),
    check(
      "chargeback_parts_split",
      sql`${t.party} = 'payer' or ${t.amountMicros} = ${t.earningsMicros} + ${t.feeMicros} + ${t.modelCostMicros}`,
    ),
  ],
);
