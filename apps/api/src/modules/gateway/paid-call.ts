import { randomUUID } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { withOffers } from "../../lib/payment-remedy.ts";
import { isWarmUpRequest } from "../../lib/warm-up-requests.ts";
import type { InvocationRecord } from "../analytics/call-records.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { refuseAppNotAllowed } from "../auth/authenticate.ts";
import type { CallCharge } from "../billing/call-payment/index.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import { netOfFeeMicros } from "../models/model-prices.ts";
import { sampleLiveCall } from "../releases/online-evals.ts";
import { ANONYMOUS_CALLER } from "./access.ts";
import { signCallReceipt } from "./call-receipt.ts";
import { refuseOversizedCall } from "./call-worst-case.ts";
import type { Execution, ExecutionResult, GatewayInput } from "./execution.ts";
import type { GatewayDeps } from "./gateway-call.ts";

export type { CallCharge } from "../billing/call-payment/index.ts";

/** How a paid call ended, told to its payment exactly once. */
export type CallOutcome =
  /** Recorded and charged (once). */
  | { kind: "answered"; result: ExecutionResult }
  /** Nothing charged, all given back, recorded as failed. */
  | { kind: "failed"; error: AppError }
  /**
   * The caller left or stopped it: charged in full once content was sent (with `sent` as the
   * answer: the model was paid for), else like failed (decision 025).
   */
  | { kind: "abandoned"; sent: string | null };

export interface PaidCall {
  messageId: string;
  /** Unix seconds. */
  createdAt: number;
  /** performance.now() when paid. */
  started: number;
  /**
   * Ends the call (once; a second call is a programming error and throws). The failure policy
   * (decision 048): every call that was paid for and then fails (an upstream error of any status,
   * our own error, the caller leaving before any content) is recorded as a failed invocation with
   * its cause, costs nothing, and gives back all that was taken (the lease's price, the included
   * call, the key's reservation). Before payment nothing is recorded. An answered call is recorded
   * and paid in one transaction; it throws `unavailable` when nothing could pay for it, and the
   * answer must then not be given.
   */
  end(outcome: CallOutcome): Promise<CallCharge>;
}

/**
 * A call's input is bounded by what it pays (docs/decisions/063): its worst-case model cost
 * (call-worst-case.ts) must fit in what the creator is paid for it. Judged here, before payment,
 * against the price less the platform fee (an embedded call's owner pays the whole price to the
 * platform, which bears its model cost); a call a plan then covers is judged by billing against
 * the plan's share per included call (the answer's `refuseBeyondShare`, given back if refused).
 * The owner's own calls pay nothing to bound by; apps on the creator's keys and workflow apps carry
 * no worst case (the platform pays no model cost for them).
 */
function refuseInputBeyondPay(
  feePercent: number,
  options: { caller: LocalUser; application: ApplicationRow; execution: Execution; ownerPays?: boolean },
): ((shareMicros: number) => void) | undefined {
  const { caller, application, execution, ownerPays } = options;
  const worst = execution.worstCase;
  if (!worst || worst.micros <= 0) return undefined;
  if (application.ownerId === caller.id && !ownerPays) return undefined;
  refuseOversizedCall(worst, netOfFeeMicros(effectivePriceCents(application), ownerPays ? 0 : feePercent));
  return (planShare) => refuseOversizedCall(worst, planShare);
}

/**
 * Why a call is made (docs/decisions/078), decided here, where every call's record is built: an
 * eval run's or online evaluation's call says so; otherwise the owner's own call of their app
 * (Test Prompt, API Test, their key) is `owner_test`, and every other call, a visitor's embedded
 * call the owner pays for included, is `customer`, the only calls customer analytics count.
 */
export function purposeOf(options: {
  caller: LocalUser;
  application: ApplicationRow;
  ownerPays?: boolean;
  purpose?: "eval" | "online_eval";
}): "customer" | "eval" | "owner_test" | "online_eval" {
  if (options.purpose) return options.purpose;
  return options.application.ownerId === options.caller.id && !options.ownerPays ? "owner_test" : "customer";
}

/**
 * Takes payment for a prepared call, the same way on every paid endpoint (billing/call-payment:
 * the owner's own calls are free, a plan's included calls are covered, else the price from a
 * lease of the wallet; 402 when it cannot be paid, 412 above the caller's maximum). The gateway's
 * part: a call made with an API key must be to an app the key allows, and the call's record (the
 * invocation, built here) is what its payment's end records. The fee is `deps.feePercent` (the
 * platform's); a 402 sends the caller to their wallet's page to top up.
 */
export async function openPaidCall(
  deps: Pick<GatewayDeps, "db" | "payments" | "feePercent" | "publicUrl" | "agentPayments" | "receipts">,
  options: {
    request: FastifyRequest;
    caller: LocalUser;
    application: ApplicationRow;
    execution: Execution;
    mode: "completion" | "chat";
    input: Pick<GatewayInput, "user" | "query">;
    /** The caller's cap on the price (max-price.ts): above it the call is refused before payment. */
    maxPriceCents?: number;
    /** The owner pays for a call made on a visitor's behalf (docs/decisions/009-embed.md). */
    ownerPays?: boolean;
    /** An eval run's or online evaluation's call (docs/decisions/078); see `purposeOf`. */
    purpose?: "eval" | "online_eval";
  },
): Promise<PaidCall> {
  const { request, caller, application, execution, mode, input } = options;
  // Routes naming the app in the body (OpenAI's `model`) reach here without the path's check.
  refuseAppNotAllowed(request.apiKeyScope, application.slug);
  // An agent's free requests run as nobody; nobody pays for a call (access.ts).
  if (caller.id === ANONYMOUS_CALLER.id) throw new AppError("unauthorized", "Authentication required");
  const messageId = randomUUID();
  const scope = request.apiKeyScope;
  // The member of the paying organization who makes the call (decision 084): recorded on the
  // invocation, and a wallet-paid call spends from their monthly budget.
  const member = request.member?.organizationId === caller.id ? request.member : null;
  // Before anything is taken: an input the call's pay cannot cover is refused (413, decision 063).
  const refuseBeyondShare = refuseInputBeyondPay(deps.feePercent, options);
  const payment = await deps.payments
    .open(
      {
        callId: messageId,
        payerId: caller.id,
        application,
        deadlineSeconds: execution.deadlineSeconds,
        modelCostWorstCaseMicros: execution.worstCaseModelCostMicros,
        feePercent: deps.feePercent,
        topUpUrl: `${deps.publicUrl}/wallet`,
        maxPriceCents: options.maxPriceCents,
        ownerPays: options.ownerPays,
        key: scope ? { keyId: scope.keyId, spendLimitCents: scope.spendLimitCents } : undefined,
        member: member
          ? { organizationId: member.organizationId, userId: member.userId, viaKey: scope !== null }
          : undefined,
        refuseBeyondShare,
      },
      request.log,
    )
    .catch((error) => {
      // A 402 says what would let the call through: the page that fixes it (the wallet, or the
      // API keys page for a key's limit), the app's page (its plans) and, when the platform takes
      // them, an x402 payment (lib/payment-remedy.ts). Every protocol, MCP too, answers this one.
      throw withOffers(error, {
        topUpUrl: `${deps.publicUrl}/wallet`,
        keysUrl: `${deps.publicUrl}/api-keys`,
        plansUrl: `${deps.publicUrl}/explore/${application.slug}#plans`,
        ...deps.agentPayments?.offers(effectivePriceCents(application)),
      });
    });
  // Paid for: the call leaves its starting phase, and the next waiting call may start.
  request.releaseAdmission?.();
  const started = performance.now();
  /** The invocation as it happened; its payment sets what it was charged and what covered it. */
  const recordOf = (
    status: "success" | "error",
    result?: ExecutionResult,
    error?: AppError,
  ): InvocationRecord => ({
    id: messageId,
    applicationId: application.id,
    callerUserId: caller.id,
    apiKeyId: request.apiKeyId,
    memberId: member?.userId ?? null,
    endUser: input.user ?? null,
    mode,
    model: result?.answeredBy ?? execution.model,
    appVersion: execution.served?.version ?? null,
    experimentId: execution.served?.experimentId ?? null,
    purpose: purposeOf(options),
    status,
    errorType: error?.code,
    errorMessage: error?.message,
    latencyMs: Math.round(performance.now() - started),
    inputTokens: result?.inputTokens ?? 0,
    outputTokens: result?.outputTokens ?? 0,
    // What the vendor billed the platform for it (models/model-prices.ts), success or not.
    modelCostMicros: result?.modelCostMicros ?? 0,
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
  });
  const paid: PaidCall = {
    messageId,
    createdAt: Math.floor(Date.now() / 1000),
    started,
    async end(outcome) {
      const charge = await endPayment(outcome);
      // Answered and recorded: a customer's call may be sampled for online evals (decision 076).
      if (outcome.kind === "answered") await sampleForOnlineEvals(outcome.result);
      // A charged or plan-covered call's signed receipt (docs/decisions/073): every protocol's
      // answer takes it from the charge (a header, a stream's last event, MCP's `_meta`).
      const receipt = await signCallReceipt(deps, request, {
        caller,
        application,
        execution,
        messageId,
        charge,
      });
      return receipt ? { ...charge, receipt } : charge;
    },
  };
  /** A cache read unless the app samples its calls; a failure to sample never fails the call. */
  async function sampleForOnlineEvals(result: ExecutionResult): Promise<void> {
    // Logging off: the call's content is not kept, so it is not judged either (decision 076).
    // The start-up rehearsal's calls (warm-up.ts) are nobody's: never sampled.
    if (!execution.served || !execution.storeContent || isWarmUpRequest(request)) return;
    // Only customers' calls are judged: the call's recorded purpose (decision 078).
    if (purposeOf(options) !== "customer") return;
    await sampleLiveCall(deps.db, {
      applicationId: application.id,
      invocationId: messageId,
      version: execution.served.version,
      experimentId: execution.served.experimentId,
      model: result.answeredBy ?? execution.model ?? "",
      output: result.answer,
      inputs: execution.inputs,
      query: input.query ?? null,
      latencyMs: performance.now() - started,
      costMicros: result.modelCostMicros ?? 0,
    }).catch((err: { name?: string; code?: string }) =>
      request.log.error({ error: err.name, code: err.code }, "could not sample a call for online evals"),
    );
  }
  function endPayment(outcome: CallOutcome): Promise<CallCharge> {
    switch (outcome.kind) {
      case "answered":
        return payment.end(recordOf("success", outcome.result));
      case "failed":
        return payment.end(recordOf("error", undefined, outcome.error));
      case "abandoned":
        return payment.end(
          outcome.sent === null
            ? recordOf(
                "error",
                undefined,
                new AppError("bad_request", "The client disconnected before any answer was sent"),
              )
            : recordOf("success", {
                answer: outcome.sent,
                inputTokens: 0,
                outputTokens: 0,
                answeredBy: execution.model,
              }),
        );
    }
  }
  return paid;
}
