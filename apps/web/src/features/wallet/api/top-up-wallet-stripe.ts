import { useMutation, useQueryClient } from "@tanstack/react-query";
import { confirmStripeCardPayment, type StripeCard } from "../../../lib/stripe";
import { createTopUpIntent, refetchAfterTopUp } from "./top-up-wallet";

/** Stripe's webhook credits the wallet (and makes the receipt) shortly after the payment; both are refetched then. */
export const WALLET_REFETCH_DELAYS_MS = [2000, 5000] as const;

/**
 * A top-up through Stripe: the intent, then Stripe confirms it with the card. Answers null when
 * the payment succeeded, else why not; a declined card is an answer, not an error.
 */
export async function topUpWalletWithStripe(amountCents: number, card: StripeCard): Promise<string | null> {
  const intent = await createTopUpIntent({ amount: amountCents, currency: "usd" });
  const { failure } = await confirmStripeCardPayment(card, intent.client_secret);
  return failure;
}

export function useTopUpWalletWithStripe() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ amountCents, card }: { amountCents: number; card: StripeCard }) =>
      topUpWalletWithStripe(amountCents, card),
    onSuccess: (failure) => {
      if (failure) return;
      for (const delay of WALLET_REFETCH_DELAYS_MS) {
        setTimeout(() => void refetchAfterTopUp(queryClient), delay);
      }
    },
    onSettled: () => refetchAfterTopUp(queryClient),
  });
}
