import { AppError } from "../../lib/errors.ts";
import type { Execution, ExecutionResult } from "./execution.ts";
import { type CallCharge, openPaidCallParts, type PaidCall } from "./paid-call.ts";

/**
 * TEMPORARY (issue 29): the old release / record / abandon steps and `generatePaid`, built on the
 * call's payment, only so the drivers not yet moved to `PaidCall.end` (gateway-call.ts,
 * openai-call.ts, blocking-call.ts, embed/embedded-call.ts, prompts/prompt-test-run.ts) keep
 * working until the lifecycle branch replaces them. Delete this file when it merges.
 */
export interface LegacyPaidCall extends PaidCall {
  release(): Promise<void>;
  record(status: "success" | "error", result?: ExecutionResult, error?: AppError): Promise<CallCharge>;
  abandon(sent: string | null): Promise<CallCharge>;
}

export async function openGatewayPaidCall(
  deps: Parameters<typeof openPaidCallParts>[0],
  options: Parameters<typeof openPaidCallParts>[1],
): Promise<LegacyPaidCall> {
  const { paid, payment, recordOf } = await openPaidCallParts(deps, options);
  // The payment ends once: a release ends it without a record, after which a failure's record is
  // written on its own (nothing to pay, nothing to give back).
  let ended = false;
  let released = false;
  const none: CallCharge = { chargedCents: 0, paidBy: "none" };
  return {
    ...paid,
    end(outcome) {
      ended = true;
      return paid.end(outcome);
    },
    async release() {
      if (ended) return;
      ended = released = true;
      await payment.end(null);
    },
    async record(status, result, error) {
      if (status === "error" && released) {
        await deps.payments.recorder.record({ ...recordOf("error", undefined, error), chargedCents: 0 });
        return none;
      }
      if (ended) return none;
      ended = true;
      return payment.end(recordOf(status, result, error));
    },
    abandon(sent) {
      ended = true;
      return paid.end({ kind: "abandoned", sent });
    },
  };
}

/**
 * Runs a paid call blocking and settles it: on an answer it is recorded and paid (once); on a
 * failure what was taken is given back, a failure of ours or the upstream's (5xx) is recorded, and
 * the failure is thrown as an AppError.
 */
export async function generatePaid(
  paid: LegacyPaidCall,
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
