import { and, eq, sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import { type Database, queryRows } from "../../../db/client.ts";
import { mppPayments } from "../../../db/schema/index.ts";
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
     * What each credited payment can still give back, newest first: its amount less every refund
     * already taken through it (`agent_refunds.through`, owed or refunded), so a second refund
     * never asks Stripe for more than a payment has left.
     */
    async creditedOf(payerUserId) {
      const rows = await queryRows<{ reference: string; left: string }>(
        db,
        sql`select m.reference, (m.amount_micros - coalesce((select sum(r.amount_micros) from agent_refunds r
              where r.payer_user_id = m.payer_user_id and r.through = m.reference), 0))::text as left
            from mpp_payments m
            where m.payer_user_id = ${payerUserId}::uuid and m.status = 'credited' and m.reference is not null
            order by m.created_at desc, m.id desc limit 200`,
      );
      return rows
        .map((row) => ({ reference: row.reference, amountMicros: Number(row.left) }))
        .filter((row) => row.amountMicros > 0);
    },
  };
}
