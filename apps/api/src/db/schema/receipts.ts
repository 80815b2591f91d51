import { sql } from "drizzle-orm";
import { bigint, check, index, pgSequence, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { users } from "./auth.ts";
import { createdAt, reference } from "./columns.ts";

export const receiptNumberSeq = pgSequence("receipt_number_seq");

/**
 * A receipt's number for one fact that happened (migration 0050, docs/decisions/069): a wallet
 * top-up or a plan payment (`source_id`: its ledger transaction) or a paid payout (the payout).
 * Given once, on the fact's first listing; the unique key on the fact keeps one number per fact.
 */
export const receipts = pgTable(
  "receipts",
  {
    number: bigint("number", { mode: "number" }).primaryKey().default(sql`nextval('receipt_number_seq')`),
    kind: text("kind", { enum: ["top_up", "plan_payment", "payout"] }).notNull(),
    sourceId: uuid("source_id").notNull(),
    userId: reference("user_id", () => users.id, "restrict"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("receipts_fact_key").on(t.kind, t.sourceId),
    index("receipts_user_idx").on(t.userId, t.number),
    check("receipts_kind", sql`${t.kind} in ('top_up', 'plan_payment', 'payout')`),
  ],
);
