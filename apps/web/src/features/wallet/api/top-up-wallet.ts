import {
  type CreatePaymentIntentSchema,
  type PaymentIntent,
  PaymentIntentSchema,
  type PaymentResult,
} from "@promptmint/contracts";
import { type QueryClient, useMutation, useQueryClient } from "@tanstack/react-query";
import type { z } from "zod";
import { apiRequest } from "../../../lib/api-client";
import { receiptsQueryKey } from "../../../lib/receipts";
import { confirmSandboxPayment, type SandboxPayWith } from "../../../lib/sandbox-payments";
import { walletQueryKey } from "../../../lib/wallet-query";

/** `POST /wallet/payment-intents/`: starts a top-up of `amount` cents (100 to 100,000). */
export function createTopUpIntent(body: z.input<typeof CreatePaymentIntentSchema>): Promise<PaymentIntent> {
  return apiRequest("/wallet/payment-intents/", { method: "POST", body, schema: PaymentIntentSchema });
}

/**
 * A top-up: the intent, then the card confirms it. The answer says whether it succeeded (the
 * balance is credited only then); a declined card is an answer, not an error.
 */
export async function topUpWallet(amountCents: number, card: SandboxPayWith): Promise<PaymentResult> {
  const intent = await createTopUpIntent({ amount: amountCents, currency: "usd" });
  return confirmSandboxPayment(intent.client_secret, card);
}

/** After a top-up: the balance and statement, and the receipts (a paid top-up has one at once). */
export function refetchAfterTopUp(queryClient: QueryClient): Promise<unknown> {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: walletQueryKey }),
    queryClient.invalidateQueries({ queryKey: receiptsQueryKey }),
  ]);
}

export function useTopUpWallet() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ amountCents, card }: { amountCents: number; card: SandboxPayWith }) =>
      topUpWallet(amountCents, card),
    onSettled: () => refetchAfterTopUp(queryClient),
  });
}
