import { useMutation, useQueryClient } from "@tanstack/react-query";
import { confirmStripeCardPayment, type StripeCard } from "../../../lib/stripe";
import { walletQueryKey } from "../../../lib/wallet-query";
import { createTopUpIntent } from "./top-up-wallet";

/** Stripe's webhook credits the wallet shortly after the payment; the balance is refetched then. */
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
        setTimeout(() => void queryClient.invalidateQueries({ queryKey: walletQueryKey }), delay);
      }
    },
    onSettled: () => queryClient.invalidateQueries({ queryKey: walletQueryKey }),
  });
}
