import { ApiClientError, getErrorMessage } from "../api-client";
import { paymentFailureAlert } from "../sandbox-payments";

/**
 * A billing step that failed, with SPEC §8's title for it ('Failed to initiate subscription',
 * 'Failed to setup payment method', ...) and the server's message as the detail.
 */
export class BillingStepError extends Error {
  readonly title: string;
  readonly status: number | undefined;

  constructor(title: string, cause: unknown) {
    super(getErrorMessage(cause), { cause });
    this.name = "BillingStepError";
    this.title = title;
    this.status = cause instanceof ApiClientError ? cause.status : undefined;
  }
}

/**
 * The card payment was confirmed but did not succeed: declined, or left needing action. Its title
 * is SPEC §4's message; its message is the processor's reason, empty when there is none.
 */
export class PaymentNotCompletedError extends Error {
  readonly title: string;

  constructor(reason: string) {
    const { title, detail } = paymentFailureAlert(reason);
    super(detail ?? "");
    this.name = "PaymentNotCompletedError";
    this.title = title;
  }
}

/** The banner title of a failed payment flow: the step that failed, or SPEC §4's message. */
export function billingErrorTitle(error: Error): string | undefined {
  return error instanceof BillingStepError || error instanceof PaymentNotCompletedError
    ? error.title
    : undefined;
}

/** Runs one step of a payment flow, naming the step when it fails. */
export async function runStep<T>(title: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw new BillingStepError(title, error);
  }
}
