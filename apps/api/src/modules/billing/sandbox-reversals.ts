import type { ReversalResultSchema } from "@promptmint/contracts";
import { and, eq, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { paymentReversals, payments } from "../../db/schema/index.ts";
import { invalidFields, notFound } from "../../lib/errors.ts";
import { dollars } from "../../lib/money.ts";
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

/**
 * What a sandbox refund takes, as Stripe's refunds API answers it: the named amount, or all that is
 * left to refund when none is named; more than is left, or nothing left, is a 400 naming the field
 * (Stripe: "Refund amount is greater than unrefunded amount on charge"). The ledger caps a refund at
 * what is left in any case (reversals.ts); this check is what the operator is told.
 */
export async function sandboxRefundAmount(
  db: Database,
  paymentIntentId: string,
  requestedCents: number | undefined,
): Promise<number> {
  const amount = await sandboxPaymentAmount(db, paymentIntentId);
  const [refunds] = await db
    .select({ total: sql<string>`coalesce(sum(${paymentReversals.amountCents}), 0)::text` })
    .from(paymentReversals)
    .innerJoin(payments, eq(payments.id, paymentReversals.paymentId))
    .where(
      and(
        eq(payments.gateway, "sandbox"),
        eq(payments.externalId, paymentIntentId),
        eq(paymentReversals.kind, "refund"),
      ),
    );
  const left = amount - Number(refunds?.total ?? 0);
  if (left <= 0) throw invalidFields({ payment_intent_id: "has been refunded in full" });
  if (requestedCents !== undefined && requestedCents > left)
    throw invalidFields({
      amount_cents: `is more than the ${dollars(left)} left to refund on this payment`,
    });
  return requestedCents ?? left;
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
