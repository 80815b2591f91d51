import type { FastifyRequest } from "fastify";
import type { ApplicationRow } from "../../db/schema/index.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { ChatMessage } from "../models/llm.ts";
import type { ExecutionResult, GatewayInput } from "./execution.ts";
import { type GatewayDeps, type Mode, prepareExecution } from "./gateway-call.ts";
import { generatePaid, openGatewayPaidCall } from "./open-gateway-call.ts";
import type { CallCharge, PaidCall } from "./paid-call.ts";

/** A blocking call that was answered and paid: the answer, what it cost, and its invocation's ids. */
export interface BlockingCallAnswer {
  result: ExecutionResult;
  charge: CallCharge;
  paid: Pick<PaidCall, "messageId" | "createdAt" | "started">;
}

/**
 * One blocking paid call, the same on every endpoint that answers in one piece: prepare → pay
 * (402 before anything runs) → generate and record (paid-call.ts generatePaid). The answer is
 * charged exactly once, and only once it is recorded; a failed upstream gives back what was taken
 * (docs/decisions/025) and is thrown as an AppError for the endpoint to answer in its own shape.
 */
export async function runBlockingCall(
  deps: Pick<GatewayDeps, "db" | "llm" | "secrets" | "safeFetch" | "feePercent" | "publicUrl" | "payments">,
  options: {
    request: FastifyRequest;
    caller: LocalUser;
    application: ApplicationRow;
    mode: Mode;
    input: GatewayInput;
    history?: ChatMessage[];
    /** The caller's cap on the price (max-price.ts); above it the call is refused unpaid. */
    maxPriceCents?: number;
  },
): Promise<BlockingCallAnswer> {
  const { request, caller, application, mode, input } = options;
  const execution = await prepareExecution(deps, {
    app: application,
    caller,
    input,
    mode,
    history: options.history,
  });
  const paid = await openGatewayPaidCall(deps, {
    request,
    caller,
    application,
    execution,
    mode,
    input,
    maxPriceCents: options.maxPriceCents,
  });
  const { result, charge } = await generatePaid(paid, execution);
  return { result, charge, paid };
}
