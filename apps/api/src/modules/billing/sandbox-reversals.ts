import type { ReversalResultSchema } from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { paymentReversals, payments } from "../../db/schema/index.ts";
import { invalidFields, notFound } from "../../lib/errors.ts";
import type { Actor } from "../admin/audit.ts";
import { applyReversal, type ReversalFact, recallIndebted } from "./reversals.ts";

/**
 * The sandbox's refunds and disputes, which an operator starts from /admin on a sandbox server:
 * the same code as Stripe's charge.refunded and charge.dispute.* events (reversals.ts), then the
 * reversal's row as the operator's page shows it.
 */
export async function reverseSandboxPayment(
  db: Database,
  options: { paymentIntentId: string; fact: ReversalFact; actor: Actor; payoutHoldMs: number },
): Promise<z.infer<typeof ReversalResultSchema>> {
  const { paymentIntentId, fact, actor, payoutHoldMs } = options;
  const outcome = await db.transaction((tx) =>
    applyReversal(tx as unknown as Database, {
      gateway: "sandbox",
      paymentIntentId,
      fact,
      actor,
      payoutHoldMs,
    }),
  );
  if (!outcome.found || !outcome.paymentId)
    throw invalidFields({ payment_intent_id: "is not a succeeded sandbox payment" });
  await recallIndebted(db, outcome.indebted);
  const [row] = await db
    .select({ id: paymentReversals.id, status: paymentReversals.status })
    .from(paymentReversals)
    .where(and(eq(paymentReversals.kind, fact.kind), eq(paymentReversals.externalId, fact.externalId)));
  return {
    id: fact.externalId,
    payment_id: outcome.paymentId,
    moved_cents: outcome.movedCents,
    status: row?.status ?? "unchanged",
  };
}

/** A sandbox card payment's amount in cents (what a refund or dispute takes when none is named). */
export async function sandboxPaymentAmount(db: Database, paymentIntentId: string): Promise<number> {
  const [payment] = await db
    .select({ amount: payments.amountCents })
    .from(payments)
    .where(and(eq(payments.gateway, "sandbox"), eq(payments.externalId, paymentIntentId)));
  if (!payment) throw invalidFields({ payment_intent_id: "is not a succeeded sandbox payment" });
  return payment.amount;
}

/** A dispute of a sandbox payment, by its id, with the payment it disputes; 404 otherwise. */
export async function findSandboxDispute(db: Database, disputeId: string) {
  const [dispute] = await db
    .select({
      amount: paymentReversals.amountCents,
      intent: payments.externalId,
      reason: paymentReversals.reason,
    })
    .from(paymentReversals)
    .innerJoin(payments, eq(payments.id, paymentReversals.paymentId))
    .where(
      and(
        eq(paymentReversals.kind, "dispute"),
        eq(paymentReversals.externalId, disputeId),
        eq(payments.gateway, "sandbox"),
      ),
    );
  if (!dispute) throw notFound("Dispute");
  return dispute;
}
