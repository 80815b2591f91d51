import { randomUUID } from "node:crypto";
import type { PaidBy } from "@promptmint/contracts";
import { eq } from "drizzle-orm";
import type { FastifyRequest } from "fastify";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, applications } from "../../db/schema/index.ts";
import { databaseErrorOf } from "../../lib/database-errors.ts";
import { AppError } from "../../lib/errors.ts";
import type { InvocationRecord } from "../analytics/call-records.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { refuseAppNotAllowed } from "../auth/authenticate.ts";
import { refundIncludedCall, useIncludedCall } from "../billing/call-payment/included-calls.ts";
import { type KeyReservation, reserveKeySpend } from "../billing/call-payment/key-reservations.ts";
import { type LeasedPayment, leaseBookFor } from "../billing/call-payment/leases.ts";
import { recordCall, recordCharged } from "../billing/call-payment/record.ts";
import { cachedAccountFor } from "../billing/postings.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import type { Execution, ExecutionResult, GatewayInput } from "./execution.ts";
import { refuseAboveMaximum } from "./max-price.ts";

/**
 * What a recorded call really cost its caller (decision 029): the price taken from the wallet when
 * the call was paid from it (`wallet`), else 0: a plan's included call (`plan`), the owner's own
 * call (`owner`), a free app (`free`), or a call that failed (`none`).
 */
export interface CallCharge {
  chargedCents: number;
  paidBy: PaidBy;
}

export interface PaidCall {
  messageId: string;
  createdAt: number;
  started: number;
  /** Gives back what was taken for the call (hold or included call). */
  release(): Promise<void>;
  /**
   * Records the invocation; on success it is paid in the same transaction (an included call, or
   * its price from the hold). Throws `unavailable` when nothing could pay for it: the answer must
   * then not be given (it cannot happen while holds close only as decision 025 says).
   */
  record(status: "success" | "error", result?: ExecutionResult, error?: AppError): Promise<CallCharge>;
  /**
   * The caller hung up on a stream (decision 025): once any content has been written to it, the
   * call is charged in full (the model was paid for), with what was sent as its answer; before
   * that, it costs nothing and is recorded as failed.
   */
  abandon(sent: string | null): Promise<CallCharge>;
}

/** An included call taken for a call outlives the call's deadline by this much before the sweeper gives it back. */
const INCLUDED_CALL_MARGIN_SECONDS = 120;

/**
 * Takes payment for a prepared call, the same way on every paid endpoint: the owner's own calls
 * are free, a plan's included calls are covered, otherwise the price is taken from a lease held
 * from the wallet (leases.ts; 402 when the wallet cannot cover it) before the upstream call. A
 * call made with an API key must be to an app the key allows, and a wallet-paid call with a key
 * that has a spend limit reserves its price against the limit too (decision 035).
 */
export async function openPaidCall(
  db: Database,
  options: {
    request: FastifyRequest;
    caller: LocalUser;
    application: ApplicationRow;
    execution: Execution;
    mode: "completion" | "chat";
    input: Pick<GatewayInput, "user" | "query">;
    feePercent: number;
    topUpUrl: string;
    /**
     * Embedded traffic (docs/decisions/009-embed.md): the owner calls on a visitor's behalf and
     * pays the price like a consumer would; it is not the app's revenue.
     */
    ownerPays?: boolean;
    /** The caller's cap on the price (max-price.ts): above it the call is refused before payment. */
    maxPriceCents?: number;
  },
): Promise<PaidCall> {
  const { request, caller, application, execution, mode, input, ownerPays } = options;
  // Routes naming the app in the body (OpenAI's `model`) reach here without the path's check.
  refuseAppNotAllowed(request.apiKeyScope, application.slug);
  const messageId = randomUUID();
  const isOwner = application.ownerId === caller.id;
  let listPrice = isOwner && !ownerPays ? 0 : effectivePriceCents(application);
  refuseAboveMaximum(listPrice, options.maxPriceCents);
  const accounts = listPrice > 0 ? await callAccounts(db, caller.id) : undefined;
  // An included call of the caller's plan, or the price from the pair's lease (a round trip only
  // when a new lease is needed; 402 if the wallet cannot cover the price). A free app's calls
  // still count against a plan's included calls.
  const pay = (priceCents: number, payer: { wallet: string; held: string }) =>
    leaseBookFor(db, request.server.log).pay({
      payerId: caller.id,
      applicationId: application.id,
      creatorId: application.ownerId,
      priceCents,
      deadlineSeconds: execution.deadlineSeconds,
      topUpUrl: options.topUpUrl,
      tryIncluded: !isOwner,
      accounts: payer,
      callId: messageId,
    });
  const payment: LeasedPayment = accounts
    ? await pay(listPrice, accounts).catch(async (error) => {
        // This process's copy of the app may be stale (until the change feed's notice arrives:
        // lib/lookup-cache.ts): a decrease made through another process applies to this call too (decision 025), so a wallet that covers the
        // price as it is now is not refused for the price as it was (money attack, seed 1724).
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
          : await useIncludedCall(db, application.id, caller.id, {
              callId: messageId,
              ttlSeconds: execution.deadlineSeconds + INCLUDED_CALL_MARGIN_SECONDS,
            }),
      };
  const coveredBy = payment.coveredBy;
  const holdId = payment.holdId;
  const price = coveredBy ? 0 : listPrice;
  const keyReservation = holdId
    ? await reserveForKey(db, request, {
        callId: messageId,
        priceCents: price,
        ttlSeconds: execution.deadlineSeconds + INCLUDED_CALL_MARGIN_SECONDS,
      }).catch(async (error) => {
        // Refused by the key's limit: the wallet's price goes back to the lease, nothing was spent.
        await payment.end?.("unspent");
        throw error;
      })
    : undefined;
  /** The key's reservation keeps what the call was charged; the rest goes back now (decision 035). */
  const settleKey = (keptCents: number) =>
    keyReservation
      ?.settle(keptCents)
      .catch((err) => request.log.error({ err }, "could not give back a key's reserved spend"));
  // Paid for: the call leaves its starting phase, and the next waiting call may start.
  request.releaseAdmission?.();
  const started = performance.now();
  const paidCall: PaidCall = {
    messageId,
    createdAt: Math.floor(Date.now() / 1000),
    started,
    async release() {
      if (coveredBy)
        await refundIncludedCall(db, coveredBy).catch((err) =>
          request.log.error({ err }, "could not refund an included call"),
        );
      // The price goes back to the lease; nothing is written.
      await payment.end?.("unspent");
      await settleKey(0);
    },
    async record(status, result, error) {
      const invocation: InvocationRecord = {
        id: messageId,
        applicationId: application.id,
        callerUserId: caller.id,
        apiKeyId: request.apiKeyId,
        endUser: input.user ?? null,
        mode,
        model: result?.answeredBy ?? execution.model,
        status,
        errorType: error?.code,
        errorMessage: error?.message,
        latencyMs: Math.round(performance.now() - started),
        inputTokens: result?.inputTokens ?? 0,
        outputTokens: result?.outputTokens ?? 0,
        chargedCents: status === "success" && !ownerPays ? price : 0,
        // What the vendor billed the platform for it (models/model-prices.ts), success or not.
        modelCostMicros: result?.modelCostMicros ?? 0,
        coveredBy: status === "success" ? coveredBy : undefined,
        conversation:
          execution.conversation && result
            ? {
                ...execution.conversation,
                providerConversationId: result.providerConversationId,
                query: execution.storeContent ? (input.query ?? "") : "",
                answer: execution.storeContent ? result.answer : "",
                inputs: execution.storeContent ? execution.inputs : {},
              }
            : null,
      };
      if (status !== "success" || !holdId || !accounts) {
        await recordCall(db, invocation).catch((failure) => {
          // A free or owner's call whose app was erased meanwhile (an app with no money history is
          // deleted, not archived): its rows can no longer name the app. Nothing was charged.
          if (databaseErrorOf(failure)?.code !== "23503") throw failure;
          throw new AppError(
            "not_found",
            "This application was deleted while the call ran; nothing was charged",
          );
        });
        await settleKey(0);
        if (status !== "success") return { chargedCents: 0, paidBy: "none" };
        return {
          chargedCents: 0,
          paidBy: coveredBy ? "plan" : isOwner && !ownerPays ? "owner" : "free",
        };
      }
      // The invocation and its price spent from the lease commit together, synchronously: the
      // charge is on disk before the caller hears of it (recorder.ts). The ledger posts it when
      // the lease closes (decision 020).
      const settlement = { holdId, amountCents: price, feePercent: options.feePercent };
      let recorded: Awaited<ReturnType<typeof recordCharged>>;
      try {
        recorded = await recordCharged(db, invocation, settlement);
      } catch (error) {
        // Whether the record committed is unknown: the key's reservation is left to the sweeper,
        // which keeps it only if the invocation was charged.
        await payment.end?.("unspent");
        throw error;
      }
      const { outcome } = recorded;
      await settleKey(outcome === "hold" ? recorded.chargedCents : 0);
      // Not awaited: the lease's close this may cause (its last call) need not delay the answer.
      void payment.end?.(outcome === "hold" ? "charged" : outcome === "plan" ? "unspent" : "refused");
      if (outcome === "refused") {
        request.log.error({ holdId, invocationId: messageId }, "a finished call found its hold closed");
        throw new AppError(
          "unavailable",
          "The payment for this call could not be completed; you were not charged. Please retry.",
        );
      }
      return outcome === "hold"
        ? { chargedCents: recorded.chargedCents, paidBy: "wallet" }
        : { chargedCents: 0, paidBy: "plan" };
    },
    async abandon(sent) {
      if (sent === null) {
        await paidCall.release();
        return paidCall.record(
          "error",
          undefined,
          new AppError("bad_request", "The client disconnected before any answer was sent"),
        );
      }
      return paidCall.record("success", {
        answer: sent,
        inputTokens: 0,
        outputTokens: 0,
        answeredBy: execution.model,
      });
    },
  };
  return paidCall;
}

/**
 * Runs a paid call blocking and settles it: on an answer it is recorded and paid (once); on a
 * failure what was taken is given back, a failure of ours or the upstream's (5xx) is recorded, and
 * the failure is thrown as an AppError.
 */
export async function generatePaid(
  paid: PaidCall,
  execution: Execution,
): Promise<{ result: ExecutionResult; charge: CallCharge }> {
  let result: ExecutionResult;
  try {
    result = await execution.generate();
  } catch (error) {
    const appError =
      error instanceof AppError ? error : new AppError("upstream_failed", "The upstream failed to answer");
    await paid.release();
    if (appError.status >= 500) await paid.record("error", undefined, appError);
    throw appError;
  }
  return { result, charge: await paid.record("success", result) };
}

/** The payer's accounts a lease moves money between (ids cached: they never change). */
async function callAccounts(db: Database, payerId: string) {
  const [wallet, held] = await Promise.all([
    cachedAccountFor(db, "wallet", payerId),
    cachedAccountFor(db, "held", payerId),
  ]);
  return { wallet, held };
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
  request: FastifyRequest,
  call: { callId: string; priceCents: number; ttlSeconds: number },
): Promise<KeyReservation | undefined> {
  const scope = request.apiKeyScope;
  if (!scope || scope.spendLimitCents === null) return Promise.resolve(undefined);
  return reserveKeySpend(db, scope, call);
}
