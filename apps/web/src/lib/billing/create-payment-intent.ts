import {
  type CreatePaymentIntentSchema,
  type PaymentIntent,
  PaymentIntentSchema,
} from "@promptmint/contracts";
import type { z } from "zod";
import { apiRequest } from "../api-client";

export type AppPaymentIntentBody = z.input<typeof CreatePaymentIntentSchema>;

/**
 * `POST /app/{app}/create-payment-intent/` (SPEC §7): a plan's price in cents with its
 * package_id, or amount 0 to set up a card. The answer's client_secret confirms it.
 */
export function createAppPaymentIntent(appSlug: string, body: AppPaymentIntentBody): Promise<PaymentIntent> {
  return apiRequest(`/app/${encodeURIComponent(appSlug)}/create-payment-intent/`, {
    method: "POST",
    body,
    schema: PaymentIntentSchema,
  });
}
