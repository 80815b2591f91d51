import { and, eq, sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import type { Database } from "../../../db/client.ts";
import { agentRefunds, mppPayments } from "../../../db/schema/index.ts";
import { databaseErrorOf } from "../../../lib/database-errors.ts";
import { accountFor, postTransaction } from "../postings.ts";
import type { PaymentBook } from "./balances.ts";
import type { PaymentRail, VerifiedPayment } from "./rail.ts";

/** How long a settlement with an unknown outcome waits before the sweep settles it again. */
const SETTLING_AFTER_SECONDS = 60;

/**
 * MPP payments' book (balances.ts; docs/decisions/070, 071): one row per credential (its identity,
 * unique), written `settling` before the capture, `credited` with the rail's reference and one
 * `mpp_credit` posting (card money arrives through Stripe's balance, like a top-up: `clearing` →
 * the payer's wallet) in one transaction, `failed` when declined. A capture whose answer was lost
 * is settled again by the sweep with the same idempotency key (the rail's), which answers what was
 * done rather than charging twice.
 */
export function mppPaymentBook(db: Database, rail: PaymentRail): PaymentBook {
  const credit = async (id: string, reference: string) => {
    await db.transaction(async (tx) => {
      const [payment] = await tx
        .update(mppPayments)
        .set({ status: "credited", reference, state: null, updatedAt: new Date() })
        .where(and(eq(mppPayments.id, id), eq(mppPayments.status, "settling")))
        .returning({ amount: mppPayments.amountMicros, payerUserId: mppPayments.payerUserId });
      if (!payment) return;
      const [clearing, wallet] = await Promise.all([
        accountFor(tx as unknown as Database, "clearing", null),
        accountFor(tx as unknown as Database, "wallet", payment.payerUserId),
      ]);
      const amount = Number(payment.amount);
      await postTransaction(tx as unknown as Database, {
        kind: "mpp_credit",
        reference: id,
        description: `MPP payment ${reference} paid into its payer's balance`,
        entries: [
          { accountId: clearing, amountMicros: -amount },
          { accountId: wallet, amountMicros: amount },
        ],
      });
    });
  };
  const fail = async (id: string, reason: string) => {
    await db
      .update(mppPayments)
      .set({ status: "failed", failure: reason, state: null, updatedAt: new Date() })
      .where(and(eq(mppPayments.id, id), eq(mppPayments.status, "settling")));
  };
  const pend = async (id: string, reason: string, reference?: string) => {
    await db
      .update(mppPayments)
      .set({
        failure: `pending: ${reason}`,
        ...(reference ? { reference } : {}),
        settleAttempts: sql`${mppPayments.settleAttempts} + 1`,
        updatedAt: new Date(),
      })
      .where(and(eq(mppPayments.id, id), eq(mppPayments.status, "settling")));
  };
  return {
    async used(payment) {
      const [seen] = await db
        .select({ id: mppPayments.id })
        .from(mppPayments)
        .where(eq(mppPayments.identity, payment.identity));
      return seen !== undefined;
    },
    async claim(payment, payerUserId, applicationId) {
      const [row] = await db
        .insert(mppPayments)
        .values({
          identity: payment.identity,
          payerUserId,
          applicationId,
          amountMicros: payment.amountMicros,
          state: { payer: payment.payer, state: payment.state } as Record<string, unknown>,
        })
        .onConflictDoNothing()
        .returning({ id: mppPayments.id });
      return row?.id;
    },
    // MPP carries no payer's id of its payment: each credential is its own payment.
    paidBefore: async () => undefined,
    credit,
    fail,
    pend,
    async sweep(log: FastifyBaseLogger) {
      const candidates = await db
        .select({ id: mppPayments.id })
        .from(mppPayments)
        .where(
          and(
            eq(mppPayments.status, "settling"),
            sql`${mppPayments.updatedAt} < now() - make_interval(secs => ${SETTLING_AFTER_SECONDS})`,
          ),
        )
        .orderBy(mppPayments.updatedAt)
        .limit(100);
      let ended = 0;
      for (const { id } of candidates) {
        // Claimed for the time of its re-check: a second sweeper skips it (skip locked) and
        // finds it fresh (updated_at moved on) until SETTLING_AFTER_SECONDS have passed again.
        const claimed = await db.transaction(async (tx) => {
          const [row] = await tx
            .select()
            .from(mppPayments)
            .where(
              and(
                eq(mppPayments.id, id),
                eq(mppPayments.status, "settling"),
                sql`${mppPayments.updatedAt} < now() - make_interval(secs => ${SETTLING_AFTER_SECONDS})`,
              ),
            )
            .for("update", { skipLocked: true });
          if (!row) return undefined;
          await tx.update(mppPayments).set({ updatedAt: new Date() }).where(eq(mppPayments.id, id));
          return row;
        });
        if (!claimed?.state) continue;
        const kept = claimed.state as { payer: VerifiedPayment["payer"]; state: unknown };
        try {
          const outcome = await rail.settle({
            rail: "mpp",
            identity: claimed.identity,
            payer: kept.payer,
            amountMicros: Number(claimed.amountMicros),
            state: kept.state,
          });
          if (outcome.kind === "settled") await credit(id, outcome.reference);
          else if (outcome.kind === "refused") await fail(id, `settlement refused: ${outcome.reason}`);
          else {
            await pend(id, outcome.reason, outcome.reference);
            continue;
          }
          ended += 1;
        } catch (error) {
          if (!databaseErrorOf(error))
            log.error({ err: error, paymentId: id }, "could not re-settle an MPP payment");
          else throw error;
        }
      }
      return ended;
    },
    /**
     * What each credited payment can still give back, oldest first: refunds take from the oldest
     * payments first, always in this order, so what the earlier refunds took is known from their sum
     * (a later payment is appended at the end and changes nothing before it).
     */
    async creditedOf(payerUserId) {
      const rows = await db
        .select({ reference: mppPayments.reference, amount: mppPayments.amountMicros })
        .from(mppPayments)
        .where(and(eq(mppPayments.payerUserId, payerUserId), eq(mppPayments.status, "credited")))
        .orderBy(mppPayments.createdAt, mppPayments.id);
      const [refunded] = await db
        .select({ micros: sql<string>`coalesce(sum(${agentRefunds.amountMicros}), 0)::text` })
        .from(agentRefunds)
        .where(and(eq(agentRefunds.payerUserId, payerUserId), eq(agentRefunds.status, "refunded")));
      let taken = Number(refunded?.micros ?? 0);
      const left: { reference: string; amountMicros: number }[] = [];
      for (const row of rows) {
        const amount = Number(row.amount);
        const used = Math.min(amount, taken);
        taken -= used;
        if (amount - used > 0) left.push({ reference: row.reference ?? "", amountMicros: amount - used });
      }
      return left;
    },
  };
}
