import {
  type DeviceWallet,
  type PaymentResult,
  PaymentResultSchema,
  type SandboxConfirmSchema,
} from "@promptmint/contracts";
import type { z } from "zod";
import { apiRequest } from "./api-client";

// Card payments through the server's sandbox processor (DESIGN §6), used when `GET /api/config`
// answers `sandbox.payments: true`. When the host runs Stripe, lib/stripe.ts confirms them instead.

export type SandboxCard = NonNullable<z.input<typeof SandboxConfirmSchema>["card"]>;

/** What pays a sandbox payment: a test card typed in, the id of a card saved earlier, or a device wallet. */
export type SandboxPayWith = SandboxCard | { savedCardId: string } | { wallet: DeviceWallet };

/** SPEC §4: a confirmed payment that did not succeed. */
export const PAYMENT_NOT_COMPLETED = "Payment was not completed successfully";
/** SPEC §2: shown where payments would be taken when the card provider is not usable. */
export const STRIPE_NOT_CONFIGURED = "Stripe is not configured. Payment functionality is not available.";
/** SPEC §5: a payment form submitted while the card provider is not loaded. */
export const STRIPE_NOT_LOADED = "Stripe has not loaded yet. Please try again.";
/** DESIGN §6: the banner of the offline processor. */
export const SANDBOX_PAYMENTS_NOTICE = "Sandbox payments — no real money moves";

/** Test cards of the sandbox processor, as Stripe's test mode knows them. */
export const SANDBOX_TEST_CARDS = [
  { number: "4242 4242 4242 4242", outcome: "succeeds" },
  { number: "4000 0000 0000 0002", outcome: "is declined" },
  { number: "4000 0025 0000 3155", outcome: "is not completed" },
] as const;

/**
 * `POST /billing/sandbox/confirm/`: pays a payment intent (or sets up a card) with a test card, or
 * with a card saved earlier (`savedCardId`), which is then not typed again.
 */
export function confirmSandboxPayment(clientSecret: string, payWith: SandboxPayWith): Promise<PaymentResult> {
  const body =
    "savedCardId" in payWith
      ? { client_secret: clientSecret, payment_method_id: payWith.savedCardId }
      : "wallet" in payWith
        ? { client_secret: clientSecret, wallet: payWith.wallet }
        : { client_secret: clientSecret, card: payWith };
  return apiRequest("/billing/sandbox/confirm/", { method: "POST", body, schema: PaymentResultSchema });
}

/**
 * SPEC §4: only 'succeeded' is a success. Answers why not: the processor's reason for a declined
 * card, 'Payment was not completed successfully' for a payment left needing action.
 */
export function paymentFailureMessage(result: PaymentResult): string | null {
  if (result.status === "succeeded") return null;
  if (result.status === "failed" && result.message.trim() !== "") return result.message;
  return PAYMENT_NOT_COMPLETED;
}

/**
 * How a payment that did not succeed is shown: SPEC §4's 'Payment was not completed successfully'
 * as the message, the processor's reason (e.g. 'Your card was declined.') as its detail.
 */
export function paymentFailureAlert(reason: string): { title: string; detail?: string } {
  return reason === PAYMENT_NOT_COMPLETED
    ? { title: PAYMENT_NOT_COMPLETED }
    : { title: PAYMENT_NOT_COMPLETED, detail: reason };
}
