import type { PaidBy } from "@promptmint/contracts";
import { eq } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import type { Database } from "../../../db/client.ts";
import { applications } from "../../../db/schema/index.ts";
import { databaseErrorOf } from "../../../lib/database-errors.ts";
import { AppError, notFound } from "../../../lib/errors.ts";
import type { InvocationRecord } from "../../analytics/call-records.ts";
import { centsToMicros } from "../money.ts";
import { AccountIds } from "../postings.ts";
import { effectivePriceCents, type PriceColumns } from "../price-changes.ts";
import {
  giveBackSponsoredCall,
  spendSponsoredCall,
  takeSponsoredCall,
} from "../sponsored/sponsored-calls.ts";
import {
  type IncludedCall,
  includedCallShareMicros,
  refundIncludedCall,
  useIncludedCall,
} from "./included-calls.ts";
import { type KeyLimit, type KeyReservation, reserveKeySpend } from "./key-reservations.ts";
import { LeaseBook, type LeasedPayment } from "./leases.ts";
import { type CallingMember, type MemberReservation, reserveMemberSpend } from "./member-budgets.ts";
import { holdModelCost, releaseModelCostHold, supersedeModelCostHold } from "./model-cost-holds.ts";
import { CallRecorder, type RecordedCall } from "./record.ts";
import { refuseAboveMaximum } from "./rules.ts";

export { sweepSponsoredCalls } from "../sponsored/sponsored-calls.ts";
export { sweepExpiredHolds } from "./holds.ts";
export { sweepExpiredIncludedCalls } from "./included-calls.ts";
export { sweepKeyReservations } from "./key-reservations.ts";
export type { CallingMember } from "./member-budgets.ts";
export { sweepMemberReservations } from "./member-budgets.ts";
export { sweepExpiredModelCostHolds } from "./model-cost-holds.ts";

/**
 * A paid call's payment (issue 29): the one place a call's price is taken, spent and given back.
 * The gateway opens it once the call is prepared (gateway/paid-call.ts) and ends it once with the
 * call's record; nothing else writes billing's tables for a call.
 *
 * Open: a call its creator sponsors (a free trial, promotional credit: decision 080) is paid by the
 * creator as an embedded call is, the owner's own calls are free, a plan's included calls are covered, otherwise the price
 * is taken from a lease held from the wallet (leases.ts; 402 when the wallet cannot cover it)
 * before the upstream call, and a wallet-paid call with a key that has a spend limit reserves its
 * price against the limit too (decision 035). A price above the caller's maximum is refused first.
 *
 * End: an answered call is recorded and paid in the same transaction as its invocation (record.ts;
 * an included call, or its price from the hold); any other call gives back all that was taken
 * (the lease's price, the included call, the key's reservation) and is recorded as failed, or not
 * at all when there is no record to keep.
 */

/**
 * What a recorded call really cost its caller (decision 029): the price taken from the wallet when
 * the call was paid from it (`wallet`), else 0: a plan's included call (`plan`), the owner's own
 * call (`owner`), a free app (`free`), a call its creator paid for the caller (`trial`,
 * `promotion`: decision 080), or a call that failed (`none`).
 */
export interface CallCharge {
  chargedCents: number;
  paidBy: PaidBy;
  /** The call's signed receipt (a compact JWS, docs/decisions/073), added by the gateway when charged or plan-covered. */
  receipt?: string;
}

/** The call to pay for, as billing needs it (plain fields: billing imports nothing of the gateway or keys). */
export interface CallToPay {
  /** The invocation's id: an included call or a key's reservation taken for it is written under it. */
  callId: string;
  payerId: string;
  application: PriceColumns & { id: string; ownerId: string };
  /** The call's deadline: a lease is used only while the call can finish before its hold expires. */
  deadlineSeconds: number;
  /** The platform's share of the price, in percent (embedded calls pass 100). */
  feePercent: number;
  /** Where a 402 sends the caller to top up. */
  topUpUrl: string;
  /** The caller's cap on the price: above it the call is refused before payment. */
  maxPriceCents?: number;
  /**
   * Embedded traffic (docs/decisions/009-embed.md): the owner calls on a visitor's behalf and pays
   * the price like a consumer would; it is not the app's revenue.
   */
  ownerPays?: boolean;
  /** The API key the call is made with, if any, and its spend limit. */
  key?: KeyLimit;
  /**
   * The member of the paying organization who makes the call (decision 084): a wallet-paid call
   * reserves its price against their monthly budget. `viaKey`: with a key they made (a refusal
   * then names the key's maker).
   */
  member?: CallingMember & { viaKey: boolean };
  /**
   * The gateway's bound on the call's input (decision 063), for a call a plan covers: called with
   * the creator's share of one included call (micros, after the fee); throws to refuse the call,
   * and the included call is given back. (The price's share was judged before payment.)
   */
  refuseBeyondShare?: (shareMicros: number) => void;
  /**
   * The most the model vendor can bill the platform for this call (models/worst-case.ts); 0 or
   * absent when no vendor is paid by the platform (the sandbox, the creator's own keys, workflows).
   * A call no price pays for holds it from its creator's wallet first (decision 062).
   */
  modelCostWorstCaseMicros?: number;
}

/** One call's payment, open until `end`. */
export interface CallPayment {
  /**
   * Ends the payment, once. A successful record is paid in its transaction (throws `unavailable`
   * when nothing could pay for it: the answer must then not be given; it cannot happen while
   * holds close only as decision 025 says). A failed record, or none, gives back all that was
   * taken and charges nothing. The record's money fields (`chargedCents`, `coveredBy`) are set here.
   */
  end(record: InvocationRecord | null): Promise<CallCharge>;
}

/** An included call taken for a call outlives the call's deadline by this much before the sweeper gives it back. */
const INCLUDED_CALL_MARGIN_SECONDS = 120;

/** The call payments of one server: its lease book, its recorder and its account ids, built once at start-up (app.ts). */
export interface CallPayments {
  open(call: CallToPay, log: FastifyBaseLogger): Promise<CallPayment>;
  /**
   * The pair's next lease covers `calls` calls (at most LEASE_CALLS), as if its calls had kept
   * coming: the start-up rehearsal's (warm-up.ts) one lease, which its calls never use up.
   */
  expectCalls(payerId: string, applicationId: string, calls: number): void;
  /** Whether any call took a lease yet (the rehearsal runs only before: it discards the leases). */
  readonly leasing: boolean;
  /**
   * Forgets the leases without closing them: only for the start-up rehearsal, whose holds are
   * rolled back with everything else it wrote (db/client.ts rehearse). Closing them there would
   * lock the platform's fee accounts until the rollback; the next call opens a new book.
   */
  discardLeases(): void;
  /** Records a call outside a payment (tests, benches): `CallRecorder.record`. */
  readonly recorder: CallRecorder;
  /** The payers' account ids the leases move money between (warm-up.ts preloads them). */
  readonly accounts: AccountIds;
  /** Closes every lease (the server is closing): what they did not spend goes back to the wallets. */
  close(): Promise<void>;
}

export function createCallPayments(db: Database, log?: FastifyBaseLogger): CallPayments {
  let book: LeaseBook | undefined;
  const leases = () => {
    book ??= new LeaseBook(db, log);
    return book;
  };
  const recorder = new CallRecorder(db);
  const accounts = new AccountIds(db);
  return {
    // The book is made by the first call paid from the wallet (free calls take no lease).
    open: (call, callLog) => openSponsoredOrOwnPayment({ db, leases, recorder, accounts }, call, callLog),
    expectCalls: (payerId, applicationId, calls) => leases().expectCalls(payerId, applicationId, calls),
    get leasing() {
      return book !== undefined;
    },
    discardLeases() {
      book?.discard();
      book = undefined;
    },
    recorder,
    accounts,
    async close() {
      const open = book;
      book = undefined;
      await open?.close();
    },
  };
}

type PaymentParts = { db: Database; leases: () => LeaseBook; recorder: CallRecorder; accounts: AccountIds };

/**
 * A call its creator sponsors for the caller (docs/decisions/080): one call of the caller's free
 * trial of the app, or its price from their promotional credit, is taken first (sponsored-calls.ts),
 * and the call is paid by the creator exactly as an embedded visitor's call is (`ownerPays`, the
 * whole price to the platform, its model cost held from the creator's wallet): the caller is
 * charged 0 and their key spends nothing. When the creator's wallet cannot pay, what was taken goes
 * back to the grant and the caller pays as they would without it (their plan, their wallet, or
 * the 402 that names them). A call that ends unpaid by the creator gives the grant back; one paid
 * is spent from it. The answer says `trial` or `promotion`.
 */
async function openSponsoredOrOwnPayment(
  parts: PaymentParts,
  call: CallToPay,
  log: FastifyBaseLogger,
): Promise<CallPayment> {
  const { application } = call;
  const priceCents = effectivePriceCents(application);
  if (call.ownerPays || application.ownerId === call.payerId || priceCents <= 0)
    return openCallPayment(parts, call, log);
  refuseAboveMaximum(priceCents, call.maxPriceCents);
  const sponsored = await takeSponsoredCall(parts.db, {
    callId: call.callId,
    consumerId: call.payerId,
    creatorId: application.ownerId,
    applicationId: application.id,
    priceMicros: centsToMicros(priceCents),
    ttlSeconds: call.deadlineSeconds + INCLUDED_CALL_MARGIN_SECONDS,
  });
  if (!sponsored) return openCallPayment(parts, call, log);
  const giveBack = () =>
    giveBackSponsoredCall(parts.db, call.callId).catch((err) =>
      log.error({ err }, "could not give back a sponsored call"),
    );
  let payment: CallPayment;
  try {
    payment = await openCallPayment(
      parts,
      {
        ...call,
        payerId: application.ownerId,
        ownerPays: true,
        feePercent: 100,
        key: undefined,
        member: undefined,
        refuseBeyondShare: undefined,
      },
      log,
    );
  } catch (error) {
    await giveBack();
    if (!(error instanceof AppError && error.code === "payment_required")) throw error;
    log.info({ grantId: sponsored.grantId }, "a sponsored call's creator could not pay: the caller pays");
    // The creator's model cost hold, if one was taken before their price was refused, is released
    // already; it is marked superseded so the reconcile does not read the caller's call as its.
    await supersedeModelCostHold(parts.db, call.callId);
    return openCallPayment(parts, call, log);
  }
  return {
    async end(record) {
      let charge: CallCharge;
      try {
        charge = await payment.end(record);
      } catch (error) {
        await giveBack();
        throw error;
      }
      if (charge.paidBy !== "wallet") {
        // Failed, or covered by the caller's own plan when it was recorded: the grant keeps it.
        await giveBack();
        return charge;
      }
      await spendSponsoredCall(parts.db, call.callId, centsToMicros(charge.chargedCents)).catch((err) =>
        // Left reserved: the sweeper spends it from the call's record.
        log.error({ err }, "could not mark a sponsored call spent"),
      );
      return { chargedCents: 0, paidBy: sponsored.kind };
    },
  };
}

/**
 * Every model call is prepaid by someone (issue 37, decision 062): a call whose price pays nothing
 * to its creator's share (the owner's own call, an embedded call the owner pays the platform for,
 * a free app's call) first holds its worst-case model cost from the creator's wallet, before any
 * price is taken and before the vendor is called (402 with the top-up page when the wallet cannot
 * cover it). Its record spends the hold in the invocation's transaction (record.ts); a call that
 * ends without a record gives it back. A plan's included call is not here: its subscriber prepaid
 * the plan, and its model cost comes from the creator's earnings (model-costs.ts).
 */
async function openCallPayment(
  parts: PaymentParts,
  call: CallToPay,
  log: FastifyBaseLogger,
): Promise<CallPayment> {
  const worstCase = Math.ceil(call.modelCostWorstCaseMicros ?? 0);
  const { application } = call;
  const noShare = application.ownerId === call.payerId || effectivePriceCents(application) === 0;
  if (worstCase <= 0 || !noShare) return openPricedPayment(parts, call, log);
  await holdModelCost(parts.db, {
    callId: call.callId,
    creatorId: application.ownerId,
    applicationId: application.id,
    amountMicros: worstCase,
    ttlSeconds: call.deadlineSeconds + INCLUDED_CALL_MARGIN_SECONDS,
    topUpUrl: call.topUpUrl,
  });
  const giveBack = () =>
    releaseModelCostHold(parts.db, call.callId).catch((err) =>
      log.error({ err }, "could not give back a call's model cost hold"),
    );
  let payment: CallPayment;
  try {
    payment = await openPricedPayment(parts, call, log, call.callId);
  } catch (error) {
    await giveBack();
    throw error;
  }
  return {
    async end(record) {
      try {
        return await payment.end(record);
      } finally {
        // Spent in the record's transaction when there was one; otherwise (no record, or the
        // record failed) given back now, or by the sweeper once it expires.
        await giveBack();
      }
    },
  };
}

async function openPricedPayment(
  parts: PaymentParts,
  call: CallToPay,
  log: FastifyBaseLogger,
  /** The call's model cost hold (decision 062): its record spends it. */
  modelCostHoldId?: string,
): Promise<CallPayment> {
  const { db, leases, recorder, accounts: accountIds } = parts;
  const { application, ownerPays } = call;
  const isOwner = application.ownerId === call.payerId;
  let listPrice = isOwner && !ownerPays ? 0 : effectivePriceCents(application);
  refuseAboveMaximum(listPrice, call.maxPriceCents);
  const accounts =
    listPrice > 0
      ? await Promise.all([
          accountIds.get("wallet", call.payerId),
          accountIds.get("held", call.payerId),
        ]).then(([wallet, held]) => ({ wallet, held }))
      : undefined;
  // An included call of the caller's plan, or the price from the pair's lease (a round trip only
  // when a new lease is needed; 402 if the wallet cannot cover the price). A free app's calls
  // still count against a plan's included calls.
  const pay = (priceCents: number, payer: { wallet: string; held: string }) =>
    leases().pay({
      payerId: call.payerId,
      applicationId: application.id,
      creatorId: application.ownerId,
      priceCents,
      deadlineSeconds: call.deadlineSeconds,
      topUpUrl: call.topUpUrl,
      tryIncluded: !isOwner,
      accounts: payer,
      callId: call.callId,
    });
  const payment: LeasedPayment = accounts
    ? await pay(listPrice, accounts).catch(async (error) => {
        // The app was erased while the call was prepared (an app with no money history is deleted,
        // not archived): the hold cannot name it. Not found, as for any caller after the delete.
        if (databaseErrorOf(error)?.code === "23503") throw notFound("Application");
        // This process's copy of the app may be stale (until the change feed's notice arrives:
        // lib/lookup-cache.ts): a decrease made through another process applies to this call too
        // (decision 025), so a wallet that covers the price as it is now is not refused for the
        // price as it was (money attack, seed 1724).
        const now =
          error instanceof AppError && error.code === "payment_required"
            ? await currentPriceCents(db, application.id)
            : undefined;
        if (now === undefined || now >= listPrice || now <= 0) throw error;
        listPrice = now;
        return pay(now, accounts);
      })
    : {
        coveredBy: isOwner
          ? undefined
          : await useIncludedCall(db, application.id, call.payerId, {
              callId: call.callId,
              ttlSeconds: call.deadlineSeconds + INCLUDED_CALL_MARGIN_SECONDS,
            }),
      };
  const coveredBy: IncludedCall | undefined = payment.coveredBy;
  if (coveredBy && call.refuseBeyondShare) await refuseBeyondPlanShare(db, call, coveredBy, log);
  const holdId = payment.holdId;
  const price = coveredBy ? 0 : listPrice;
  const reservation = {
    callId: call.callId,
    priceCents: price,
    ttlSeconds: call.deadlineSeconds + INCLUDED_CALL_MARGIN_SECONDS,
  };
  // The key's limit and the member's budget are reserved together (decisions 035, 084): refused by
  // either, the other's reservation and the wallet's price go back, nothing was spent.
  const [keyReservation, memberReservation] = holdId
    ? await Promise.allSettled([
        reserveForKey(db, call.key, reservation),
        reserveForMember(db, call.member, call.payerId, reservation),
      ]).then(async ([key, member]) => {
        if (key.status === "fulfilled" && member.status === "fulfilled") return [key.value, member.value];
        await Promise.all([
          key.status === "fulfilled" ? key.value?.settle(0) : undefined,
          member.status === "fulfilled" ? member.value?.settle(0) : undefined,
          payment.end?.("unspent"),
        ]);
        throw key.status === "rejected" ? key.reason : (member as PromiseRejectedResult).reason;
      })
    : [undefined, undefined];
  /**
   * The key's and the member's reservations keep what the call was charged; the rest goes back
   * now (decisions 035, 084).
   */
  const settleReservations = (keptCents: number) =>
    Promise.all([
      keyReservation
        ?.settle(keptCents)
        .catch((err) => log.error({ err }, "could not give back a key's reserved spend")),
      memberReservation
        ?.settle(keptCents)
        .catch((err) => log.error({ err }, "could not give back a member's reserved spend")),
    ]);
  /** Gives back what was taken for the call (hold or included call, and the key's reservation). */
  const giveBack = async () => {
    if (coveredBy)
      await refundIncludedCall(db, coveredBy).catch((err) =>
        log.error({ err }, "could not refund an included call"),
      );
    // The price goes back to the lease; nothing is written.
    await payment.end?.("unspent");
    await settleReservations(0);
  };
  /** Records a call that is not paid from the hold: failed, or covered, owner's or free. */
  const recordUnpaid = async (record: InvocationRecord) => {
    await recorder.record(record, undefined, modelCostHoldId).catch((failure) => {
      // A free or owner's call whose app was erased meanwhile (an app with no money history is
      // deleted, not archived): its rows can no longer name the app. Nothing was charged.
      if (databaseErrorOf(failure)?.code !== "23503") throw failure;
      throw new AppError("not_found", "This application was deleted while the call ran; nothing was charged");
    });
    await settleReservations(0);
  };
  let ended = false;
  return {
    async end(record) {
      if (ended) throw new Error("a call's payment is ended once");
      ended = true;
      if (record === null || record.status !== "success") {
        await giveBack();
        if (record) {
          record.chargedCents = 0;
          record.coveredBy = undefined;
          await recordUnpaid(record);
        }
        return { chargedCents: 0, paidBy: "none" };
      }
      record.chargedCents = ownerPays ? 0 : price;
      record.coveredBy = coveredBy;
      if (!holdId || !accounts) {
        await recordUnpaid(record);
        return { chargedCents: 0, paidBy: coveredBy ? "plan" : isOwner && !ownerPays ? "owner" : "free" };
      }
      // The invocation and its price spent from the lease commit together, synchronously: the
      // charge is on disk before the caller hears of it (record.ts). The ledger posts it when
      // the lease closes (decision 020).
      let recorded: RecordedCall;
      try {
        recorded = await recorder.record(
          record,
          { holdId, amountCents: price, feePercent: call.feePercent },
          modelCostHoldId,
        );
      } catch (error) {
        // Whether the record committed is unknown: the key's reservation is left to the sweeper,
        // which keeps it only if the invocation was charged.
        await payment.end("unspent");
        throw error;
      }
      const { outcome } = recorded;
      await settleReservations(outcome === "hold" ? recorded.chargedCents : 0);
      // Not awaited: the lease's close this may cause (its last call) need not delay the answer.
      void payment.end(outcome === "hold" ? "charged" : outcome === "plan" ? "unspent" : "refused");
      if (outcome === "refused") {
        log.error({ holdId, invocationId: call.callId }, "a finished call found its hold closed");
        throw new AppError(
          "unavailable",
          "The payment for this call could not be completed; you were not charged. Please retry.",
        );
      }
      return outcome === "hold"
        ? { chargedCents: recorded.chargedCents, paidBy: "wallet" }
        : { chargedCents: 0, paidBy: "plan" };
    },
  };
}

/** An app's price as the database has it now (not the lookup cache's copy); undefined if it is gone. */
async function currentPriceCents(db: Database, applicationId: string): Promise<number | undefined> {
  const [row] = await db
    .select({
      priceCents: applications.priceCents,
      pendingPriceCents: applications.pendingPriceCents,
      pendingPriceAt: applications.pendingPriceAt,
    })
    .from(applications)
    .where(eq(applications.id, applicationId));
  return row ? effectivePriceCents(row) : undefined;
}

/**
 * A wallet-paid call made with a key that has a spend limit reserves its price against it before
 * the upstream call (402 `key_limit_reached` when it does not fit). Plan, owner and free calls
 * never get here: they cost the key nothing. Keys without a limit skip the round trip.
 */
function reserveForKey(
  db: Database,
  key: KeyLimit | undefined,
  call: { callId: string; priceCents: number; ttlSeconds: number },
): Promise<KeyReservation | undefined> {
  if (!key || key.spendLimitCents === null) return Promise.resolve(undefined);
  return reserveKeySpend(db, key, call);
}

/**
 * A wallet-paid call by a member of the paying organization reserves its price against the
 * member's monthly budget (402 `member_budget_reached` when it does not fit), budget or not, so
 * the month's spend is always known. Plan, owner and free calls spend nothing of it.
 */
function reserveForMember(
  db: Database,
  member: (CallingMember & { viaKey: boolean }) | undefined,
  payerId: string,
  call: { callId: string; priceCents: number; ttlSeconds: number },
): Promise<MemberReservation | undefined> {
  if (!member || member.organizationId !== payerId) return Promise.resolve(undefined);
  return reserveMemberSpend(db, member, call);
}

/**
 * A plan-covered call whose input its plan's share per included call cannot cover (decision 063)
 * is refused with the included call given back: nothing was held, nothing is recorded. One round
 * trip, only for calls a plan covers (a wallet call's bound, its price, is judged before payment).
 */
async function refuseBeyondPlanShare(
  db: Database,
  call: CallToPay,
  coveredBy: IncludedCall,
  log: FastifyBaseLogger,
): Promise<void> {
  const share = await includedCallShareMicros(db, coveredBy.subscriptionId, call.feePercent);
  try {
    if (share !== undefined) call.refuseBeyondShare?.(share);
  } catch (error) {
    await refundIncludedCall(db, coveredBy).catch((err) =>
      log.error({ err }, "could not refund an included call"),
    );
    throw error;
  }
}
