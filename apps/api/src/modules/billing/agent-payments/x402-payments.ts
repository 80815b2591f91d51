import { encodePaymentResponseHeader } from "@x402/core/http";
import type { SettleResponse } from "@x402/core/types";
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
import type { ChainState, DecodedPayment, PaidResource, SettleOutcome, X402Rail } from "./x402-rail.ts";

/**
 * x402 payments in the ledger (docs/decisions/052, 064). The invariants: a payment (network, payer,
 * nonce) pays for at most one call (a unique key, whatever the process); it is settled only for a
 * call that was answered, and a call that failed never settles its payment; a settled payment is
 * posted once (`x402_payment` transaction, referenced by the payment's id): the price out of
 * `x402_clearing` (money that came from outside, on chain), the creator's earnings, the
 * platform's fee and the model cost its share pays, by the same rules as a wallet-paid call
 * (call-payment/rules.ts), in the same transaction as the call's invocation.
 *
 * A payment's life: `verified` (the facilitator checked it; the call runs) → the call answered:
 * `settling` (its record kept on the row) → the settlement confirmed (the facilitator's `success`
 * with a well-formed transaction, or the chain's transfer to us): `settled` with its transaction,
 * invocation and posting in one database transaction, then the answer. A call that failed:
 * `failed`, never settled. A facilitator that definitively refuses: `failed`, no answer (402).
 * Anything else (pending, 5xx, no answer, an empty transaction, "nonce used") is re-checked once,
 * then the answer is withheld (503) and the payment stays `settling` for the sweep, which ends it
 * `credited` (the money reached us for an answer never given: kept for its payer, `x402_credit`)
 * or `failed` (it never moved). A caller gone before its confirmed settlement is credited too.
 * `unpaid` is only for rows from before decision 064 (an answered call recorded while its
 * settlement was unknown, then refused).
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

/**
 * The payer's account-less user (issuer `x402`, subject `network:address`, one per network and
 * address), made on first payment and found by that identity alone. Its username is in the payers'
 * own namespace, `x402:network:address`: usernames users choose are letters, digits and
 * `@ . + - _` (contracts' ProfileUpdateSchema, the OIDC sign-up's cleaning), never a colon, so no
 * user can hold a payer's name and make its calls fail (decision 064; migration 0048 moved the
 * earlier `x402-<network>-<address>` names here).
 */
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
      username: payerUsername(subject),
      email: "",
      displayName: `x402 payer ${payer.slice(0, 6)}…${payer.slice(-4)}`,
    })
    .onConflictDoNothing();
  const [made] = await find();
  if (!made) throw new Error("could not make the x402 payer's user");
  return made.id;
}

/** A payer's username: in a namespace no user can choose (a colon). */
export const payerUsername = (subject: string) => `x402:${subject}`;

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
 * through the facilitator, then recorded and posted (see the file's comment). A refused settlement
 * is a 402 and the call is recorded as failed (`payment_failed`): its answer must not be given. A
 * settlement still pending after one re-check (decision 064) is a 503 with `Retry-After`: the
 * answer is not given, the call is recorded as failed and charged nothing, and the payment stays
 * `settling` for the sweep, which credits its amount to the payer if it ever arrives. A caller who
 * left before the settlement was confirmed (`callerLeft`) is given nothing and keeps the money the
 * same way.
 */
export async function endX402Payment(
  db: Database,
  rail: X402Rail,
  payment: AdmittedX402Payment & { callerLeft?: () => boolean },
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
  let outcome = await rail.settle(payment.decoded);
  await countAttempt(db, payment.id, outcome);
  // Held until it resolves, once: the chain's word, or the facilitator asked again (its pending
  // settlement store answers for what it broadcast). Still pending: the answer is not given.
  if (outcome.kind === "pending") {
    outcome = await resolvePending(rail, payment.decoded, outcome, { mayBroadcast: true });
    await countAttempt(db, payment.id, outcome);
  }
  const { log } = options;
  if (outcome.kind === "settled" && !payment.callerLeft?.())
    return postAnswered(db, payment.id, outcome, { record, feePercent: options.feePercent }).catch(
      (error) => {
        // The sweep of another process ended it while this call waited on a slow facilitator (it
        // saw no answer given): whatever it decided, this answer is not given and not charged.
        if (!(error instanceof EndedElsewhere)) throw error;
        throw new AppError(
          "unavailable",
          `Your x402 payment ${payment.id} was resolved by the platform's sweep while its call waited: the answer was not given and you are not charged for it (if the money moved, it is kept for you as credit). Retry with a new payment.`,
          { headers: { "retry-after": String(RETRY_AFTER_SECONDS), "x402-payment-id": payment.id } },
        );
      },
    );
  // Not given (refused, pending, or its caller gone): the call is recorded as failed, charged nothing.
  const given = { ...record, status: "error" as const, chargedCents: 0 };
  if (outcome.kind === "refused") {
    log.warn({ paymentId: payment.id, reason: outcome.reason }, "an x402 payment was refused at settlement");
    await setStatus(db, payment.id, "settling", {
      status: "failed",
      failure: `settlement refused: ${outcome.reason}`,
    });
    await options.recordFailed({
      ...given,
      errorType: "payment_failed",
      errorMessage: `The x402 payment could not be settled: ${outcome.reason}`,
    });
    throw new AppError(
      "payment_required",
      `Your x402 payment could not be settled (${outcome.reason}); the answer was not given and you were not charged. Sign a new payment and retry.`,
      { remedy: { missing: "payment" } },
    );
  }
  if (outcome.kind === "settled") {
    // Confirmed, but its caller is gone: the content cannot be given, so the money is the payer's.
    await creditPayer(db, payment.id, outcome.transaction, {
      ...given,
      errorType: "caller_left",
      errorMessage:
        "The caller left before the settled answer could be sent; the payment is kept as the payer's credit",
    });
    throw new AppError(
      "payment_required",
      "You left before your x402 payment's answer could be sent: its amount is kept for you as credit (your payer account), not charged.",
    );
  }
  log.warn(
    { paymentId: payment.id, reason: outcome.reason, transaction: outcome.transaction },
    "an x402 settlement is pending; the answer is withheld and the sweep resolves it",
  );
  await db
    .update(x402Payments)
    .set({
      txHash: outcome.transaction ?? null,
      failure: `pending: ${outcome.reason}`,
      updatedAt: new Date(),
    })
    .where(and(eq(x402Payments.id, payment.id), eq(x402Payments.status, "settling")));
  await options.recordFailed({
    ...given,
    errorType: "payment_pending",
    errorMessage: `The x402 settlement is not confirmed: ${outcome.reason}`,
  });
  throw new AppError(
    "unavailable",
    `Your x402 payment ${payment.id} was sent to the facilitator but its transfer is not confirmed yet (${outcome.reason}). The answer was not given and you are not charged for it: if the transfer completes, its amount is kept for you as credit (your payer account); if it does not, nothing moved. Retry later with a new payment.`,
    { headers: { "retry-after": String(RETRY_AFTER_SECONDS), "x402-payment-id": payment.id } },
  );
}

/** What a payer is told to wait before retrying a call whose settlement is pending. */
const RETRY_AFTER_SECONDS = 30;

async function countAttempt(db: Database, paymentId: string, outcome: SettleOutcome): Promise<void> {
  await db
    .update(x402Payments)
    .set({
      settleAttempts: sql`${x402Payments.settleAttempts} + 1`,
      // The transaction a pending answer named is kept: the sweep asks the chain about it.
      ...(outcome.kind === "pending" && outcome.transaction ? { txHash: outcome.transaction } : {}),
      updatedAt: new Date(),
    })
    .where(and(eq(x402Payments.id, paymentId), eq(x402Payments.status, "settling")));
}

/** A payment to resolve: its authorization and when it was written. */
type PendingPayment = Pick<DecodedPayment, "payload" | "requirements" | "identity" | "amountMicros">;

/**
 * One re-check of a settlement that may have moved money (decision 064). Only a confirmed
 * transfer to our receiving address is settled: the chain's (X402_RPC_URL) word, or the
 * facilitator's `success` with a transaction when asked again with the same payload (its pending
 * settlement store answers for what it broadcast). The authorization used by another transfer (the
 * payer burnt its nonce) is refused; so is one the chain shows unused once it expired, or that the
 * facilitator definitively refuses when no transaction of ours may still be mined. Anything else
 * stays pending.
 *
 * `mayBroadcast`: whether the facilitator may be asked to settle anew (the call was answered, so
 * settling it is what is wanted). A call whose answer was never given is only looked up: its payer
 * must not be made to pay for nothing, and a settlement that lands anyway is credited to them.
 */
export async function resolvePending(
  rail: X402Rail,
  payment: PendingPayment,
  previous: Extract<SettleOutcome, { kind: "pending" }>,
  options: { mayBroadcast: boolean; expiryMarginSeconds?: number },
): Promise<SettleOutcome> {
  const expired = () => isExpired(payment, options.expiryMarginSeconds ?? 60);
  const fromChain = (chain: ChainState | undefined): SettleOutcome | undefined => {
    if (chain?.state === "transferred") return confirmedOnChain(payment, chain.transaction);
    if (chain?.state === "elsewhere")
      return {
        kind: "refused",
        reason: `the authorization was used by another transfer (${chain.transaction})`,
      };
    return undefined;
  };
  const chain = await rail.lookup(payment, previous.transaction);
  const known = fromChain(chain);
  if (known) return known;
  if (!options.mayBroadcast && !previous.transaction) {
    if (chain?.state === "unused")
      return expired()
        ? { kind: "refused", reason: "the authorization expired unused" }
        : { kind: "pending", reason: "not on chain yet" };
    if (rail.config.rpcUrl) return { kind: "pending", reason: "the chain did not answer" };
    // No chain to ask: the facilitator's verify says whether the nonce is still unused.
    const state = await rail.verify(payment).catch(() => undefined);
    if (!state) return { kind: "pending", reason: "the facilitator did not verify" };
    // Unused now, yet a broadcast may be in flight: final once it expired (verify then says so).
    if (state.valid)
      return expired()
        ? { kind: "refused", reason: "the authorization expired unused" }
        : { kind: "pending", reason: "not used yet" };
    if (AMBIGUOUS_REFUSAL.test(state.reason)) return { kind: "pending", reason: state.reason };
    return { kind: "refused", reason: state.reason };
  }
  const again = await rail.settle(payment);
  if (again.kind === "settled") return again;
  const transaction = (again.kind === "pending" ? again.transaction : undefined) ?? previous.transaction;
  // The chain once more: a transfer may have landed while the facilitator was asked.
  const after = rail.config.rpcUrl ? await rail.lookup(payment, transaction) : undefined;
  const landed = fromChain(after);
  if (landed) return landed;
  if (again.kind === "refused") {
    // A refusal now does not undo what the earlier, ambiguous answer may have broadcast (a 5xx or
    // a lost answer names no transaction, which may still be mined): final only once the
    // authorization expired, unused on chain (or with no chain to ask).
    if ((!rail.config.rpcUrl || after?.state === "unused") && expired()) return again;
  } else if (after?.state === "unused" && expired()) {
    return { kind: "refused", reason: "the authorization expired unused" };
  }
  return { kind: "pending", reason: again.reason, transaction };
}

/**
 * A settlement the chain confirmed (the facilitator's answer was lost or wrong): settled with the
 * chain's transaction, and the `PAYMENT-RESPONSE` the facilitator would have given for it.
 */
function confirmedOnChain(payment: PendingPayment, transaction: string): SettleOutcome {
  const response = {
    success: true,
    transaction,
    network: payment.requirements.network,
    payer: payment.identity.payer,
  } as SettleResponse;
  return { kind: "settled", transaction, header: encodePaymentResponseHeader(response), response };
}

/** A facilitator's answer that the authorization's nonce is used: by whom, only the chain knows. */
const AMBIGUOUS_REFUSAL = /nonce_already_used|authorization is used/i;

/** The authorization's `validBefore` has passed (with a margin): it can never move money now. */
function isExpired(payment: PendingPayment, marginSeconds: number): boolean {
  const validBefore = Number(
    (payment.payload.payload as { authorization?: { validBefore?: string } }).authorization?.validBefore ?? 0,
  );
  return validBefore > 0 && Date.now() / 1000 > validBefore + marginSeconds;
}

/** An answered call's confirmed settlement: its invocation and posting in one transaction. */
async function postAnswered(
  db: Database,
  paymentId: string,
  outcome: Extract<SettleOutcome, { kind: "settled" }>,
  call: { record: InvocationRecord; feePercent: number; recorded?: boolean },
): Promise<X402Charge> {
  const { record } = call;
  const priceCents = record.chargedCents ?? 0;
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

/**
 * Money that reached us for an answer never given, kept for its payer: `credited` with its
 * transaction, and one `x402_credit` transaction (out of `x402_clearing`, into the payer's
 * account-less user's `wallet`), with the call recorded as failed and charged nothing (unless
 * recorded already), all in one database transaction.
 */
async function creditPayer(
  db: Database,
  paymentId: string,
  transaction: string,
  record: InvocationRecord | undefined,
): Promise<void> {
  const post = async (tx: Database) => {
    const [payment] = await tx
      .update(x402Payments)
      .set({ status: "credited", txHash: transaction, settledAt: new Date(), updatedAt: new Date() })
      .where(and(eq(x402Payments.id, paymentId), eq(x402Payments.status, "settling")))
      .returning({
        amount: x402Payments.amountMicros,
        payer: x402Payments.payer,
        payerUserId: x402Payments.payerUserId,
      });
    if (!payment) throw new EndedElsewhere();
    const [clearing, wallet] = await Promise.all([
      accountFor(tx, "x402_clearing", null),
      accountFor(tx, "wallet", payment.payerUserId),
    ]);
    const amount = Number(payment.amount);
    await postTransaction(tx, {
      kind: "x402_credit",
      reference: paymentId,
      description: `x402 payment kept for its payer (${payment.payer}): no answer was given for it`,
      entries: [
        { accountId: clearing, amountMicros: -amount },
        { accountId: wallet, amountMicros: amount },
      ],
    });
  };
  if (!record) {
    await db.transaction(async (tx) => post(tx as unknown as Database));
    return;
  }
  await recordInvocation(db, {
    ...record,
    status: "error",
    chargedCents: 0,
    settle: async (tx) => {
      await post(tx);
      return { chargedCents: 0, feeMicros: 0, modelCostDeductedMicros: 0 };
    },
  });
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
  if (!payment) throw new EndedElsewhere();
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
 * The sweep (a background job, any number of processes at once: each payment is claimed with
 * `for update skip locked` and re-checked by one of them): payments left `verified` past their
 * deadline (the process ended the call without ending its payment, or crashed before the call
 * ended) are `failed`, never settled; payments left `settling` (a crash around the settlement, or
 * a settlement still pending) are re-checked (`resolvePending`) until final. Confirmed: an
 * answered call (recorded as charged before decision 064) is posted; one whose answer was never
 * given is credited to its payer. Definitively not transferred: `failed` (or `unpaid` for such an
 * answered call), nothing posted. Returns how many it ended.
 */
export async function sweepX402Payments(
  db: Database,
  rail: X402Rail,
  log: FastifyBaseLogger,
  options: {
    verifiedTtlSeconds: number;
    settlingAfterSeconds: number;
    /** How long after its `validBefore` an unused authorization is taken as never moving money. */
    expiryMarginSeconds?: number;
  } = {
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
  const candidates = await db
    .select({ id: x402Payments.id })
    .from(x402Payments)
    .where(
      and(
        eq(x402Payments.status, "settling"),
        sql`${x402Payments.updatedAt} < now() - make_interval(secs => ${options.settlingAfterSeconds})`,
      ),
    )
    .orderBy(x402Payments.updatedAt)
    .limit(100);
  for (const { id } of candidates) {
    try {
      if (await sweepOne(db, rail, id, options)) ended += 1;
    } catch (error) {
      if (error instanceof EndedElsewhere) continue;
      if (!databaseErrorOf(error)) throw error;
      log.error({ err: error, paymentId: id }, "could not apply an x402 settlement");
    }
  }
  return ended;
}

/**
 * One `settling` payment, claimed for the time of its re-check: its row locked (skip locked: a
 * second sweeper takes the next one) and its `updated_at` moved on, so no other process re-checks
 * it until `settlingAfterSeconds` have passed; the outcome is applied under the same claim
 * (`status = 'settling'` in every update: applied once).
 */
async function sweepOne(
  db: Database,
  rail: X402Rail,
  id: string,
  options: { settlingAfterSeconds: number; expiryMarginSeconds?: number },
): Promise<boolean> {
  const afterSeconds = options.settlingAfterSeconds;
  const claimed = await db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(x402Payments)
      .where(
        and(
          eq(x402Payments.id, id),
          eq(x402Payments.status, "settling"),
          sql`${x402Payments.updatedAt} < now() - make_interval(secs => ${afterSeconds})`,
        ),
      )
      .for("update", { skipLocked: true });
    if (!row) return undefined;
    await tx.update(x402Payments).set({ updatedAt: new Date() }).where(eq(x402Payments.id, id));
    return row;
  });
  if (!claimed) return false;
  const row = claimed;
  const record = recordOf(row.callRecord);
  if (!record) return false;
  const [existing] = await db
    .select({ id: invocations.id, status: invocations.status })
    .from(invocations)
    .where(and(eq(invocations.id, record.id), eq(invocations.createdAt, record.createdAt as Date)));
  const payment: PendingPayment = {
    payload: row.payload as DecodedPayment["payload"],
    requirements: row.requirements as DecodedPayment["requirements"],
    identity: { network: row.network, payer: row.payer, nonce: row.nonce },
    amountMicros: Number(row.amountMicros),
  };
  // Answered and recorded as charged (a settlement without an answer before decision 064): settling
  // it is what is owed. Any other was never answered: only looked up.
  const answered = existing?.status === "success";
  const outcome = await resolvePending(
    rail,
    payment,
    { kind: "pending", reason: row.failure ?? "swept", transaction: row.txHash ?? undefined },
    { mayBroadcast: answered, expiryMarginSeconds: options.expiryMarginSeconds },
  );
  await countAttempt(db, row.id, outcome);
  if (outcome.kind === "pending") return false;
  if (outcome.kind === "settled") {
    if (answered) await postAnswered(db, row.id, outcome, { record, feePercent: 0, recorded: true });
    else
      await creditPayer(
        db,
        row.id,
        outcome.transaction,
        existing
          ? undefined
          : {
              ...record,
              status: "error",
              errorType: "payment_pending",
              errorMessage:
                "The process ended before the settled answer was given; the payment is kept as the payer's credit",
            },
      );
    return true;
  }
  return setStatus(db, row.id, "settling", {
    status: answered ? "unpaid" : "failed",
    failure: `settlement refused: ${outcome.reason}`,
  });
}

/**
 * The payment was no longer `settling` when its outcome was applied: another process (a second
 * sweeper) ended it first. Its whole database transaction is rolled back: applied once.
 */
class EndedElsewhere extends Error {
  constructor() {
    super("an x402 payment was ended by another process");
  }
}

/** The call's record as kept on the payment (dates were JSON strings). */
function recordOf(kept: unknown): InvocationRecord | undefined {
  if (!kept || typeof kept !== "object") return undefined;
  const record = kept as InvocationRecord & { createdAt?: string | Date };
  return { ...record, createdAt: record.createdAt ? new Date(record.createdAt) : undefined };
}
