import { and, eq, sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import { type Database, queryRows } from "../../../db/client.ts";
import { invocations, users, x402Payments } from "../../../db/schema/index.ts";
import { databaseErrorOf } from "../../../lib/database-errors.ts";
import { AppError, notFound } from "../../../lib/errors.ts";
import { type InvocationRecord, recordInvocation, type SpentFigures } from "../../analytics/call-records.ts";
import { feeMicrosSql, modelCostDeductedSql } from "../call-payment/rules.ts";
import { MICROS_PER_CENT } from "../money.ts";
import { accountFor, postTransaction } from "../postings.ts";
import type { DecodedPayment, PaidResource, SettleOutcome, X402Rail } from "./x402-rail.ts";

/**
 * x402 payments in the ledger (docs/decisions/052). The invariants: a payment (network, payer,
 * nonce) pays for at most one call (a unique key, whatever the process); it is settled only for a
 * call that was answered, and a call that failed never settles its payment; a settled payment is
 * posted once (`x402_payment` transaction, referenced by the payment's id): the price out of
 * `x402_clearing` (money that came from outside, on chain), the creator's earnings, the
 * platform's fee and the model cost its share pays, by the same rules as a wallet-paid call
 * (call-payment/rules.ts), in the same transaction as the call's invocation.
 *
 * A payment's life: `verified` (the facilitator checked it; the call runs) → the call answered:
 * `settling` (its record kept on the row) → the facilitator settles it: `settled` with its
 * transaction, invocation and posting in one database transaction. A call that failed: `failed`,
 * never settled. A facilitator that refuses to settle: `failed` (nothing was answered) or
 * `unpaid` (the call was answered and recorded when the settlement's answer was lost; the sweep
 * found it refused). A settlement with no answer (timeout) records the call as charged and leaves
 * the payment `settling`; the sweep settles it later and posts it then.
 */

/** A payment admitted for one call, open until `end`. */
export interface AdmittedX402Payment {
  id: string;
  /** The payer's account-less user: the invocation's caller. */
  payerUserId: string;
  priceCents: number;
  decoded: DecodedPayment;
}

/** How an x402 payment's call ended, for the call's answer. */
export interface X402Charge {
  chargedCents: number;
  /** The `PAYMENT-RESPONSE` header of a settled payment. */
  paymentResponse?: string;
}

/** The payer's account-less user (issuer `x402`, one per network and address), made on first payment. */
export async function payerUserOf(db: Database, network: string, payer: string): Promise<string> {
  const subject = `${network}:${payer}`;
  const find = () =>
    db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.issuer, "x402"), eq(users.subject, subject)));
  const [found] = await find();
  if (found) return found.id;
  await db
    .insert(users)
    .values({
      issuer: "x402",
      subject,
      username: `x402-${network.replace(/[^0-9a-z]/gi, "")}-${payer}`,
      email: "",
      displayName: `x402 payer ${payer.slice(0, 6)}…${payer.slice(-4)}`,
    })
    .onConflictDoNothing();
  const [made] = await find();
  if (!made) throw new Error("could not make the x402 payer's user");
  return made.id;
}

/**
 * Admits a payment for one call: decoded and matched, never used before, verified by the
 * facilitator, then written as `verified` under its identity (402 when any of it fails, with the
 * reason and a fresh PAYMENT-REQUIRED). The unique identity decides a race between two processes.
 */
export async function admitX402Payment(
  db: Database,
  rail: X402Rail,
  header: string,
  call: PaidResource & { applicationId: string },
): Promise<AdmittedX402Payment> {
  const decoded = await rail.decode(header, call);
  const { identity } = decoded;
  const used = async () =>
    rail.refuse(
      call,
      "payment_already_used",
      "This payment (its authorization's nonce) was already used for a call: sign a new payment for each call",
    );
  const [seen] = await db
    .select({ id: x402Payments.id })
    .from(x402Payments)
    .where(
      and(
        eq(x402Payments.network, identity.network),
        eq(x402Payments.payer, identity.payer),
        eq(x402Payments.nonce, identity.nonce),
      ),
    );
  if (seen) throw await used();
  const verified = await rail.verify(decoded);
  if (!verified.valid)
    throw await rail.refuse(call, "payment_invalid", `The facilitator refused it: ${verified.reason}`);
  if (verified.payer !== identity.payer)
    throw await rail.refuse(call, "payment_invalid", "The facilitator's payer is not the authorization's");
  const payerUserId = await payerUserOf(db, identity.network, identity.payer);
  const [row] = await db
    .insert(x402Payments)
    .values({
      ...identity,
      scheme: decoded.requirements.scheme,
      asset: decoded.requirements.asset,
      payTo: decoded.requirements.payTo,
      amountMicros: decoded.amountMicros,
      applicationId: call.applicationId,
      payerUserId,
      payload: decoded.payload,
      requirements: decoded.requirements,
    })
    .onConflictDoNothing()
    .returning({ id: x402Payments.id })
    .catch((error) => {
      // The app was erased meanwhile (no money history): nothing was charged, nothing is kept.
      if (databaseErrorOf(error)?.code === "23503") throw notFound("Application");
      throw error;
    });
  if (!row) throw await used();
  return { id: row.id, payerUserId, priceCents: call.priceCents, decoded };
}

/**
 * Ends an admitted payment with its call's record. A failed call (or none): `failed`, never
 * settled, its invocation recorded as failed and charged nothing. An answered call: settled
 * through the facilitator, then recorded and posted (see the file's comment); a refused
 * settlement is a 402 and the call is recorded as failed (`payment_failed`): its answer must not
 * be given.
 */
export async function endX402Payment(
  db: Database,
  rail: X402Rail,
  payment: AdmittedX402Payment,
  record: InvocationRecord | null,
  options: {
    feePercent: number;
    recordFailed(record: InvocationRecord): Promise<void>;
    log: FastifyBaseLogger;
  },
): Promise<X402Charge> {
  if (record === null || record.status !== "success") {
    await setStatus(db, payment.id, "verified", {
      status: "failed",
      failure: record?.errorType ?? "the call did not run",
      invocationId: record?.id ?? null,
    });
    if (record) {
      record.chargedCents = 0;
      await options.recordFailed(record);
    }
    return { chargedCents: 0 };
  }
  record.chargedCents = payment.priceCents;
  record.createdAt ??= new Date();
  const { settle: _, ...kept } = record;
  const marked = await setStatus(db, payment.id, "verified", {
    status: "settling",
    invocationId: record.id,
    callRecord: kept,
    feePercent: String(options.feePercent),
  });
  if (!marked) throw new Error("an x402 payment is ended once");
  const outcome = await rail.settle(payment.decoded);
  return applySettlement(db, payment.id, outcome, {
    record,
    feePercent: options.feePercent,
    log: options.log,
    recordFailed: options.recordFailed,
  });
}

/**
 * What a settlement's answer does (the call's end and the sweep alike): settled → the invocation
 * (unless recorded already) and the posting in one transaction; refused → `failed` (the call is
 * recorded as failed and its answer refused) or, for a call recorded already, `unpaid`; unknown →
 * the call recorded as charged, the payment left `settling` for the sweep.
 */
async function applySettlement(
  db: Database,
  paymentId: string,
  outcome: SettleOutcome,
  call: {
    record: InvocationRecord;
    feePercent: number;
    log: FastifyBaseLogger;
    recordFailed?(record: InvocationRecord): Promise<void>;
    /** The invocation exists (recorded when an earlier settlement had no answer). */
    recorded?: boolean;
  },
): Promise<X402Charge> {
  const { record } = call;
  const priceCents = record.chargedCents ?? 0;
  await db
    .update(x402Payments)
    .set({ settleAttempts: sql`${x402Payments.settleAttempts} + 1`, updatedAt: new Date() })
    .where(eq(x402Payments.id, paymentId));
  if (outcome.kind === "settled") {
    if (call.recorded) {
      await db.transaction(async (tx) => {
        const [row] = await tx
          .select({ fee: invocations.feeMicros, deducted: invocations.modelCostDeductedMicros })
          .from(invocations)
          .where(and(eq(invocations.id, record.id), eq(invocations.createdAt, record.createdAt as Date)));
        await postSettled(tx as unknown as Database, paymentId, outcome.transaction, {
          chargedCents: priceCents,
          feeMicros: Number(row?.fee ?? 0),
          modelCostDeductedMicros: Number(row?.deducted ?? 0),
        });
      });
    } else {
      await recordInvocation(db, {
        ...record,
        settle: async (tx) => {
          const figures = await figuresOf(tx, priceCents, call.feePercent, record.modelCostMicros ?? 0);
          await postSettled(tx, paymentId, outcome.transaction, figures);
          return figures;
        },
      });
    }
    return { chargedCents: priceCents, paymentResponse: outcome.header || undefined };
  }
  if (outcome.kind === "refused") {
    call.log.warn({ paymentId, reason: outcome.reason }, "an x402 payment was refused at settlement");
    if (call.recorded) {
      await setStatus(db, paymentId, "settling", { status: "unpaid", failure: outcome.reason });
      return { chargedCents: priceCents };
    }
    await setStatus(db, paymentId, "settling", {
      status: "failed",
      failure: `settlement refused: ${outcome.reason}`,
    });
    record.status = "error";
    record.errorType = "payment_failed";
    record.errorMessage = `The x402 payment could not be settled: ${outcome.reason}`;
    record.chargedCents = 0;
    await call.recordFailed?.(record);
    throw new AppError(
      "payment_required",
      `Your x402 payment could not be settled (${outcome.reason}); the answer was not given and you were not charged. Sign a new payment and retry.`,
      { remedy: { missing: "payment" } },
    );
  }
  // No answer: it may have settled. The call was answered, so it is recorded as charged now and
  // the sweep settles it (the facilitator answers a retried settlement of the same payload).
  call.log.warn(
    { paymentId, reason: outcome.reason },
    "an x402 settlement had no answer; the sweep retries it",
  );
  if (!call.recorded)
    await recordInvocation(db, {
      ...record,
      settle: (tx) => figuresOf(tx, priceCents, call.feePercent, record.modelCostMicros ?? 0),
    });
  return { chargedCents: priceCents };
}

/** The fee and the model cost a price pays, by the rules every paid call uses (rules.ts). */
async function figuresOf(
  tx: Database,
  priceCents: number,
  feePercent: number,
  modelCostMicros: number,
): Promise<SpentFigures> {
  const price = `${priceCents * MICROS_PER_CENT}::bigint`;
  const fee = feeMicrosSql(price, String(Number(feePercent)));
  const [row] = await queryRows<{ fee: string; model_cost: string }>(
    tx,
    sql.raw(
      `select f.fee::text as fee, ${modelCostDeductedSql(`${Math.trunc(modelCostMicros)}::bigint`, price, "f.fee")}::text as model_cost
       from (select ${fee} as fee) f`,
    ),
  );
  return {
    chargedCents: priceCents,
    feeMicros: Number(row?.fee ?? 0),
    modelCostDeductedMicros: Number(row?.model_cost ?? 0),
  };
}

/**
 * A settled payment, once: `settled` with its transaction, and its posting (out of the x402
 * clearing account, into the creator's earnings, the platform's fee and the model cost).
 */
async function postSettled(
  tx: Database,
  paymentId: string,
  transaction: string,
  figures: SpentFigures,
): Promise<void> {
  const [payment] = await tx
    .update(x402Payments)
    .set({ status: "settled", txHash: transaction, settledAt: new Date(), updatedAt: new Date() })
    .where(and(eq(x402Payments.id, paymentId), eq(x402Payments.status, "settling")))
    .returning({ applicationId: x402Payments.applicationId, payer: x402Payments.payer });
  if (!payment) throw new Error("an x402 payment settled twice");
  const [owner] = await queryRows<{ owner_id: string }>(
    tx,
    sql`select owner_id from applications where id = ${payment.applicationId}::uuid`,
  );
  if (!owner) throw new Error("an x402 payment's app is gone");
  const price = figures.chargedCents * MICROS_PER_CENT;
  const earned = price - figures.feeMicros - figures.modelCostDeductedMicros;
  const [clearing, earnings, platform, model] = await Promise.all([
    accountFor(tx, "x402_clearing", null),
    accountFor(tx, "earnings", owner.owner_id),
    accountFor(tx, "platform_fee", null),
    accountFor(tx, "model_cost", null),
  ]);
  await postTransaction(tx, {
    kind: "x402_payment",
    reference: paymentId,
    description: `1 paid call, paid by x402 (${payment.payer})`,
    entries: [
      { accountId: clearing, amountMicros: -price },
      { accountId: earnings, amountMicros: earned },
      { accountId: platform, amountMicros: figures.feeMicros },
      { accountId: model, amountMicros: figures.modelCostDeductedMicros },
    ].filter((entry) => entry.amountMicros !== 0),
  });
}

async function setStatus(
  db: Database,
  id: string,
  from: "verified" | "settling",
  to: Partial<typeof x402Payments.$inferInsert>,
): Promise<boolean> {
  const rows = await db
    .update(x402Payments)
    .set({ ...to, updatedAt: new Date() })
    .where(and(eq(x402Payments.id, id), eq(x402Payments.status, from)))
    .returning({ id: x402Payments.id });
  return rows.length > 0;
}

/**
 * The sweep (a background job): payments left `verified` past their deadline (the process ended
 * the call without ending its payment, or crashed before the call ended) are `failed`, never
 * settled; payments left `settling` (a crash after the answer, or a settlement without an
 * answer) are settled again, and recorded and posted when they settle. Returns how many it ended.
 */
export async function sweepX402Payments(
  db: Database,
  rail: X402Rail,
  log: FastifyBaseLogger,
  options: { verifiedTtlSeconds: number; settlingAfterSeconds: number } = {
    verifiedTtlSeconds: 3600,
    settlingAfterSeconds: 60,
  },
): Promise<number> {
  const stale = await db
    .update(x402Payments)
    .set({ status: "failed", failure: "the call never ended (swept)", updatedAt: new Date() })
    .where(
      and(
        eq(x402Payments.status, "verified"),
        sql`${x402Payments.updatedAt} < now() - make_interval(secs => ${options.verifiedTtlSeconds})`,
      ),
    )
    .returning({ id: x402Payments.id });
  let ended = stale.length;
  const settling = await db
    .select()
    .from(x402Payments)
    .where(
      and(
        eq(x402Payments.status, "settling"),
        sql`${x402Payments.updatedAt} < now() - make_interval(secs => ${options.settlingAfterSeconds})`,
      ),
    )
    .limit(100);
  for (const row of settling) {
    const record = recordOf(row.callRecord);
    if (!record) continue;
    const [existing] = await db
      .select({ id: invocations.id })
      .from(invocations)
      .where(and(eq(invocations.id, record.id), eq(invocations.createdAt, record.createdAt as Date)));
    const payment = {
      payload: row.payload as DecodedPayment["payload"],
      requirements: row.requirements as DecodedPayment["requirements"],
    };
    let outcome: SettleOutcome;
    if (existing) {
      // Answered and recorded, its settlement's answer lost: settle it (again).
      outcome = await rail.settle(payment);
    } else {
      // Not recorded: the process ended between marking it and recording the call, so the answer
      // was not given. Only an authorization already used was settled (and is then recorded, as a
      // wallet-paid call whose answer a crash lost is); one still unused is never settled.
      const state = await rail
        .verify({
          ...payment,
          identity: { network: row.network, payer: row.payer, nonce: row.nonce },
          amountMicros: Number(row.amountMicros),
        })
        .catch(() => undefined);
      if (state === undefined) continue;
      outcome = state.valid
        ? { kind: "refused", reason: "the call ended before its payment was settled (swept)" }
        : { kind: "refused", reason: state.reason };
    }
    // An authorization can only ever move its amount to our address: used means settled by us.
    if (outcome.kind === "refused" && AUTHORIZATION_USED.test(outcome.reason))
      outcome = { kind: "settled", transaction: `authorization-used:${row.nonce}`, header: "" };
    if (outcome.kind === "unknown") continue;
    try {
      await applySettlement(db, row.id, outcome, {
        record,
        feePercent: Number(row.feePercent ?? 0),
        log,
        recorded: existing !== undefined,
        // Not recorded and refused: the answer was never given (the crash came first).
        recordFailed: async () => {},
      });
    } catch (error) {
      if (!(error instanceof AppError)) {
        if (databaseErrorOf(error))
          log.error({ err: error, paymentId: row.id }, "could not apply an x402 settlement");
        else throw error;
      }
    }
    ended += 1;
  }
  return ended;
}

/** A facilitator's answer that the EIP-3009 authorization (its nonce) was already used. */
const AUTHORIZATION_USED = /nonce_already_used|authorization is used/i;

/** The call's record as kept on the payment (dates were JSON strings). */
function recordOf(kept: unknown): InvocationRecord | undefined {
  if (!kept || typeof kept !== "object") return undefined;
  const record = kept as InvocationRecord & { createdAt?: string | Date };
  return { ...record, createdAt: record.createdAt ? new Date(record.createdAt) : undefined };
}
