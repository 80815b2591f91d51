import { encodePaymentResponseHeader } from "@x402/core/http";
import type { SettleResponse } from "@x402/core/types";
import { extractPaymentIdentifier, isValidPaymentId } from "@x402/extensions/payment-identifier";
import { and, eq, sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import { type Database, queryRows } from "../../../db/client.ts";
import { invocations, x402Payments } from "../../../db/schema/index.ts";
import { databaseErrorOf } from "../../../lib/database-errors.ts";
import { invalidFields, notFound } from "../../../lib/errors.ts";
import { type InvocationRecord, recordInvocation, type SpentFigures } from "../../analytics/call-records.ts";
import { feeMicrosSql, modelCostDeductedSql } from "../call-payment/rules.ts";
import { MICROS_PER_CENT } from "../money.ts";
import { accountFor, postTransaction } from "../postings.ts";
import type { PaymentBook } from "./balances.ts";
import type { PaymentRail, VerifiedPayment } from "./rail.ts";
import type { ChainState, DecodedPayment, SettleOutcome, X402Rail } from "./x402-rail.ts";

/**
 * x402 payments in the ledger (docs/decisions/052, 064, 070). Since issue 40 a payment is paid into
 * its payer's balance before the call runs (balances.ts): a row per authorization (network, payer,
 * nonce; unique, whatever the process) written `settling` before the facilitator is asked, then
 * `credited` with its transaction and one `x402_credit` posting (x402_clearing → the payer's
 * wallet) once the transfer is confirmed (the facilitator's `success` with a well-formed
 * transaction, or the chain's transfer to us), or `failed` when it never moved. Anything else
 * (pending, 5xx, no answer, "nonce used") is re-checked once and then left `settling` for the sweep,
 * which credits or fails it.
 *
 * Rows from before issue 40 may be `settled` (paid one call: an `x402_payment` posting with the
 * call's invocation), `settling` with the answered call's record (the sweep still finishes those as
 * decisions 052 and 064 say) or `unpaid`.
 */

/** What a decoded x402 payment is to the rails' interface (rail.ts): its identity and payer. */
export function verifiedX402(decoded: DecodedPayment): VerifiedPayment {
  const { network, payer, nonce } = decoded.identity;
  const idempotencyId = extractPaymentIdentifier(decoded.payload, false) ?? undefined;
  if (idempotencyId !== undefined && !isValidPaymentId(idempotencyId))
    throw invalidFields({
      "payment-identifier":
        "must be 16 to 128 letters, digits, hyphens or underscores (x402's payment-identifier extension)",
    });
  return {
    ...(idempotencyId ? { idempotencyId } : {}),
    rail: "x402",
    identity: `${network}:${payer}:${nonce}`,
    payer: { rail: "x402", subject: `${network}:${payer}`, label: `${payer.slice(0, 6)}…${payer.slice(-4)}` },
    amountMicros: decoded.amountMicros,
    state: decoded,
  };
}

/** A payer's username: in a namespace no user can choose (a colon). */
export const payerUsername = (subject: string) => `x402:${subject}`;

/**
 * x402 as a payment rail (rail.ts): the protocol (x402-rail.ts) and, for a settlement whose answer
 * is unclear, one re-check (the chain, or the facilitator asked again) before it is left pending.
 * x402 cannot give money back: a refund is owed, paid by the operator to the payer's address.
 */
export function x402PaymentRail(rail: X402Rail): PaymentRail {
  return {
    name: "x402",
    credentialOf(headers) {
      const header = headers["payment-signature"];
      return typeof header === "string" && header.trim() !== "" ? header.trim() : undefined;
    },
    async challenge(resource, error) {
      const { header } = await rail.challenge(resource, error);
      return { "payment-required": header };
    },
    offer: (priceCents) => rail.offer(priceCents),
    async decode(credential, resource) {
      const { payer: _, ...decoded } = verifiedX402(await rail.decode(credential, resource));
      return decoded;
    },
    async verify(decoded, resource) {
      const payment = decoded.state as DecodedPayment;
      const verified = await rail.verify(payment);
      if (!verified.valid)
        throw await rail.refuse(
          resource,
          "payment_invalid",
          `The facilitator refused it: ${verified.reason}`,
        );
      if (verified.payer.toLowerCase() !== payment.identity.payer.toLowerCase())
        throw await rail.refuse(
          resource,
          "payment_invalid",
          "The facilitator's payer is not the authorization's",
        );
      return verifiedX402(payment);
    },
    async settle(payment) {
      const decoded = payment.state as DecodedPayment;
      let outcome = await rail.settle(decoded);
      if (outcome.kind === "pending")
        outcome = await resolvePending(rail, decoded, outcome, { mayBroadcast: true });
      if (outcome.kind === "settled")
        return {
          kind: "settled",
          reference: outcome.transaction,
          headers: { "payment-response": outcome.header },
        };
      return outcome.kind === "refused"
        ? outcome
        : { kind: "pending", reason: outcome.reason, reference: outcome.transaction };
    },
    async refund() {
      return {
        kind: "owed",
        reason:
          "x402 has no refund in its protocol: the amount is owed to the paying address and paid by the platform's operator",
      };
    },
    refuse: (resource, reason, message) => rail.refuse(resource, reason, message),
  };
}

/**
 * x402 payments' book (balances.ts): one row per authorization (network, payer, nonce), written
 * `settling` before the facilitator is asked, `credited` with its transaction and its
 * `x402_credit` posting (x402_clearing → the payer's wallet) in one transaction, `failed` when it
 * never moved, left `settling` for the sweep otherwise.
 */
export function x402PaymentBook(db: Database, rail: X402Rail): PaymentBook {
  return {
    async used(payment) {
      const { identity } = payment.state as DecodedPayment;
      // (the identity is the decoded authorization's: network, payer, nonce)
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
      return seen !== undefined;
    },
    async claim(payment, payerUserId, applicationId) {
      const decoded = payment.state as DecodedPayment;
      const [row] = await db
        .insert(x402Payments)
        .values({
          ...decoded.identity,
          scheme: decoded.requirements.scheme,
          asset: decoded.requirements.asset,
          payTo: decoded.requirements.payTo,
          amountMicros: decoded.amountMicros,
          applicationId,
          payerUserId,
          status: "settling",
          paymentIdentifier: payment.idempotencyId ?? null,
          payload: decoded.payload,
          requirements: decoded.requirements,
        })
        .onConflictDoNothing()
        .returning({ id: x402Payments.id })
        .catch((error) => {
          // The app was erased meanwhile (no money history): nothing was paid, nothing is kept.
          if (databaseErrorOf(error)?.code === "23503") throw notFound("Application");
          throw error;
        });
      return row?.id;
    },
    async paidBefore(payerUserId, idempotencyId) {
      const [row] = await db
        .select({ id: x402Payments.id })
        .from(x402Payments)
        .where(
          and(
            eq(x402Payments.payerUserId, payerUserId),
            eq(x402Payments.paymentIdentifier, idempotencyId),
            sql`${x402Payments.status} <> 'failed'`,
          ),
        );
      return row?.id;
    },
    credit: (id, transaction) => creditPayer(db, id, transaction, undefined),
    async fail(id, reason) {
      await setStatus(db, id, "settling", { status: "failed", failure: reason });
    },
    async pend(id, reason, transaction) {
      await db
        .update(x402Payments)
        .set({
          txHash: transaction ?? null,
          failure: `pending: ${reason}`,
          settleAttempts: sql`${x402Payments.settleAttempts} + 1`,
          updatedAt: new Date(),
        })
        .where(and(eq(x402Payments.id, id), eq(x402Payments.status, "settling")));
    },
    sweep: (log) => sweepX402Payments(db, rail, log),
    async creditedOf(payerUserId) {
      const rows = await db
        .select({ reference: x402Payments.txHash, amount: x402Payments.amountMicros })
        .from(x402Payments)
        .where(and(eq(x402Payments.payerUserId, payerUserId), eq(x402Payments.status, "credited")))
        .orderBy(sql`${x402Payments.createdAt} desc`)
        .limit(100);
      return rows.map((row) => ({ reference: row.reference ?? "", amountMicros: Number(row.amount) }));
    },
  };
}

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
): Promise<{ chargedCents: number; paymentResponse?: string }> {
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
  const payment: PendingPayment = {
    payload: row.payload as DecodedPayment["payload"],
    requirements: row.requirements as DecodedPayment["requirements"],
    identity: { network: row.network, payer: row.payer, nonce: row.nonce },
    amountMicros: Number(row.amountMicros),
  };
  const record = recordOf(row.callRecord);
  if (!record) {
    // Paid into a balance (issue 40): its caller was told to retry, so it is only looked up: the
    // money that arrives is credited to the payer, an authorization that expired unused failed.
    const outcome = await resolvePending(
      rail,
      payment,
      { kind: "pending", reason: row.failure ?? "swept", transaction: row.txHash ?? undefined },
      { mayBroadcast: false, expiryMarginSeconds: options.expiryMarginSeconds },
    );
    await countAttempt(db, row.id, outcome);
    if (outcome.kind === "pending") return false;
    if (outcome.kind === "settled") {
      await creditPayer(db, row.id, outcome.transaction, undefined);
      return true;
    }
    return setStatus(db, row.id, "settling", {
      status: "failed",
      failure: `settlement refused: ${outcome.reason}`,
    });
  }
  const [existing] = await db
    .select({ id: invocations.id, status: invocations.status })
    .from(invocations)
    .where(and(eq(invocations.id, record.id), eq(invocations.createdAt, record.createdAt as Date)));
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
