import type Stripe from "stripe";
import type { Config } from "../../config.ts";
import { stripeClient } from "../billing/stripe-client.ts";

/**
 * Stripe Connect through the official SDK (docs/decisions/027): Express accounts with a manual
 * payout schedule (every payout is ours and carries our metadata), account links for onboarding,
 * and per payout a transfer to the connected account then a payout on it (`Stripe-Account`
 * header), each with an idempotency key derived from the payout's id, so a retry never pays twice.
 */
export interface StripeConnect {
  createAccount(user: { id: string; email: string | null }): Promise<string>;
  accountLink(accountId: string, urls: { returnUrl: string; refreshUrl: string }): Promise<string>;
  retrieveAccount(accountId: string): Promise<Stripe.Account>;
  transfer(payout: ConnectPayout): Promise<string>;
  payout(payout: ConnectPayout): Promise<string>;
  reverseTransfer(payout: ConnectPayout & { transferId: string }): Promise<string>;
}

export interface ConnectPayout {
  id: string;
  creatorId: string;
  connectAccountId: string;
  amountCents: number;
  currency: string;
}

export function createStripeConnect(config: Config): StripeConnect | undefined {
  const stripe = stripeClient(config);
  if (!stripe) return undefined;
  return {
    async createAccount(user) {
      const account = await stripe.accounts.create(
        {
          type: "express",
          email: user.email || undefined,
          capabilities: { transfers: { requested: true } },
          settings: { payouts: { schedule: { interval: "manual" } } },
          metadata: { promptmint_user_id: user.id },
        },
        { idempotencyKey: `connect-account-${user.id}` },
      );
      return account.id;
    },

    async accountLink(accountId, { returnUrl, refreshUrl }) {
      const link = await stripe.accountLinks.create({
        account: accountId,
        type: "account_onboarding",
        return_url: returnUrl,
        refresh_url: refreshUrl,
      });
      return link.url;
    },

    retrieveAccount: (accountId) => stripe.accounts.retrieve(accountId),

    async transfer(payout) {
      const transfer = await stripe.transfers.create(
        {
          amount: payout.amountCents,
          currency: payout.currency,
          destination: payout.connectAccountId,
          transfer_group: `payout_${payout.id}`,
          metadata: { payout_id: payout.id, promptmint_user_id: payout.creatorId },
        },
        { idempotencyKey: `payout-${payout.id}-transfer` },
      );
      return transfer.id;
    },

    async payout(payout) {
      const created = await stripe.payouts.create(
        {
          amount: payout.amountCents,
          currency: payout.currency,
          description: "Promptmint earnings",
          metadata: { payout_id: payout.id, promptmint_user_id: payout.creatorId },
        },
        { stripeAccount: payout.connectAccountId, idempotencyKey: `payout-${payout.id}-payout` },
      );
      return created.id;
    },

    async reverseTransfer(payout) {
      const reversal = await stripe.transfers.createReversal(
        payout.transferId,
        { metadata: { payout_id: payout.id } },
        { idempotencyKey: `payout-${payout.id}-reversal` },
      );
      return reversal.id;
    },
  };
}
