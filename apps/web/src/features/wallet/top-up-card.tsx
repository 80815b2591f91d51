import { MAX_TOP_UP_CENTS, MIN_TOP_UP_CENTS, type PaymentResult } from "@promptmint/contracts";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { CreditCard } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { CardEntryFields, useCardEntry } from "../../components/ui/card-entry";
import {
  isDeviceWallet,
  SANDBOX_WALLET_CHOICES,
  StripeExpressCheckout,
  useSandboxWallets,
} from "../../components/ui/device-wallets";
import { type PayWith, PayWithOption } from "../../components/ui/pay-with-option";
import { PaymentGatewayNotice, usePaymentsReady } from "../../components/ui/payment-gateway-notice";
import { PaymentElementsProvider } from "../../components/ui/stripe-card-field";
import { TextField } from "../../components/ui/text-field";
import { getErrorMessage } from "../../lib/api-client";
import { cardBrandName, formatCardExpiry } from "../../lib/card-display";
import { cn } from "../../lib/cn";
import { formatCents, formatMicros } from "../../lib/format";
import { useRuntimeConfig } from "../../lib/runtime-config";
import { paymentFailureAlert, paymentFailureMessage, STRIPE_NOT_LOADED } from "../../lib/sandbox-payments";
import { PAYMENT_PENDING_CREDIT, useStripePublishableKey } from "../../lib/stripe";
import { walletQueryKey } from "../../lib/wallet-query";
import { savedCardsQueryOptions } from "./api/list-saved-cards";
import { createTopUpIntent, useTopUpWallet } from "./api/top-up-wallet";
import { useTopUpWalletWithStripe, WALLET_REFETCH_DELAYS_MS } from "./api/top-up-wallet-stripe";

const PRESET_CENTS = [500, 1000, 2500, 5000] as const;

/** A custom amount in dollars → cents, or null when it is not a usable amount. */
function centsFromDollars(text: string): number | null {
  if (!/^\d+(\.\d{1,2})?$/.test(text.trim())) return null;
  return Math.round(Number(text) * 100);
}

function amountError(cents: number | null): string | undefined {
  if (cents === null) return "Enter an amount in dollars, e.g. 20 or 12.50";
  if (cents < MIN_TOP_UP_CENTS) return `The minimum top-up is ${formatCents(MIN_TOP_UP_CENTS)}`;
  if (cents > MAX_TOP_UP_CENTS) return `The maximum top-up is ${formatCents(MAX_TOP_UP_CENTS)}`;
  return undefined;
}

type Outcome = { tone: "success" | "error"; title?: string; message?: string };

/** A payment that did not succeed, with SPEC §4's message and the reason as detail. */
function failedOutcome(reason: string): Outcome {
  const { title, detail } = paymentFailureAlert(reason);
  return { tone: "error", title, message: detail };
}

function outcomeOf(result: PaymentResult): Outcome {
  const failure = paymentFailureMessage(result);
  if (failure) return failedOutcome(failure);
  return {
    tone: "success",
    message: `Added ${formatCents(result.amount)} to your wallet. New balance: ${formatMicros(result.balance_micros)}.`,
  };
}

export function TopUpCard() {
  return (
    <PaymentElementsProvider>
      <TopUpForm />
    </PaymentElementsProvider>
  );
}

function TopUpForm() {
  const topUp = useTopUpWallet();
  const topUpStripe = useTopUpWalletWithStripe();
  const usesStripe = useStripePublishableKey() !== null;
  // The sandbox charges a saved card by its id (issue 32); with Stripe the card is typed in Elements.
  const sandboxPayments = useRuntimeConfig().sandbox.payments;
  const savedCards = useQuery({ ...savedCardsQueryOptions(), enabled: sandboxPayments });
  const savedCard = sandboxPayments
    ? (savedCards.data?.find((method) => method.is_default) ?? savedCards.data?.[0])
    : undefined;
  const [chosen, setChosen] = useState<PayWith | null>(null);
  const payWith: PayWith = chosen ?? (savedCard ? "saved" : "card");
  const sandboxWallets = useSandboxWallets();
  const queryClient = useQueryClient();
  const refreshBalanceSoon = () => {
    for (const delay of WALLET_REFETCH_DELAYS_MS)
      setTimeout(() => void queryClient.invalidateQueries({ queryKey: walletQueryKey }), delay);
  };
  const paymentsReady = usePaymentsReady();
  const [preset, setPreset] = useState<number | null>(1000);
  const [custom, setCustom] = useState("");
  const card = useCardEntry();
  const [customError, setCustomError] = useState<string | undefined>();
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const busy = topUp.isPending || topUpStripe.isPending;
  const amountCents = preset ?? centsFromDollars(custom);
  const validAmount = amountCents !== null && !amountError(amountCents) ? amountCents : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setOutcome(null);
    if (!paymentsReady) {
      setOutcome({ tone: "error", message: STRIPE_NOT_LOADED });
      return;
    }
    const problem = preset === null ? amountError(centsFromDollars(custom)) : undefined;
    setCustomError(problem);
    if (usesStripe) {
      if (problem || validAmount === null) return;
      const stripeCard = card.getStripeCard();
      if (!stripeCard) {
        setOutcome({ tone: "error", message: STRIPE_NOT_LOADED });
        return;
      }
      topUpStripe.mutate(
        { amountCents: validAmount, card: stripeCard },
        {
          onSuccess: (failure) => {
            if (failure) {
              setOutcome(failedOutcome(failure));
              return;
            }
            setOutcome({ tone: "success", message: PAYMENT_PENDING_CREDIT });
            stripeCard.card.clear();
          },
          onError: (error) => setOutcome({ tone: "error", message: getErrorMessage(error) }),
        },
      );
      return;
    }
    const typedCard = isDeviceWallet(payWith)
      ? { wallet: payWith }
      : payWith === "saved" && savedCard
        ? { savedCardId: savedCard.id }
        : card.parseTyped();
    if (problem || !typedCard || validAmount === null) return;
    topUp.mutate(
      { amountCents: validAmount, card: typedCard },
      {
        onSuccess: (result) => {
          const next = outcomeOf(result);
          setOutcome(next);
          if (next.tone === "success" && !("savedCardId" in typedCard) && !("wallet" in typedCard))
            card.clearTyped();
        },
        onError: (error) => setOutcome({ tone: "error", message: getErrorMessage(error) }),
      },
    );
  };

  return (
    <Card>
      <CardHeader title="Top up" description="Add funds to pay for API calls beyond your plans." />
      <CardBody>
        <form onSubmit={submit} noValidate className="space-y-5">
          <PaymentGatewayNotice />
          <fieldset>
            <legend className="mb-2 text-sm font-medium text-slate-700">Amount</legend>
            <div className="grid grid-cols-4 gap-2">
              {PRESET_CENTS.map((cents) => (
                <button
                  key={cents}
                  type="button"
                  aria-pressed={preset === cents}
                  disabled={busy}
                  onClick={() => {
                    setPreset(cents);
                    setCustom("");
                    setCustomError(undefined);
                  }}
                  className={cn(
                    "h-10 rounded-lg border text-sm font-semibold transition-colors focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600 disabled:opacity-60",
                    preset === cents
                      ? "border-brand-600 bg-brand-50 text-brand-700"
                      : "border-slate-300 bg-white text-slate-700 hover:bg-slate-50",
                  )}
                >
                  {formatCents(cents).replace(".00", "")}
                </button>
              ))}
            </div>
            <TextField
              label="Custom amount (USD)"
              className="mt-4"
              inputMode="decimal"
              placeholder="e.g. 20"
              value={custom}
              error={customError}
              hint={`From ${formatCents(MIN_TOP_UP_CENTS)} to ${formatCents(MAX_TOP_UP_CENTS)}`}
              disabled={busy}
              onChange={(event) => {
                setCustom(event.target.value);
                setPreset(event.target.value.trim() === "" ? 1000 : null);
              }}
            />
          </fieldset>
          {usesStripe && (
            <StripeExpressCheckout
              amountCents={validAmount}
              createClientSecret={async () =>
                (await createTopUpIntent({ amount: validAmount ?? 0, currency: "usd" })).client_secret
              }
              onOutcome={(failure) => {
                setOutcome(
                  failure ? failedOutcome(failure) : { tone: "success", message: PAYMENT_PENDING_CREDIT },
                );
                // Stripe's webhook credits the wallet a moment later, as for a card.
                if (!failure) refreshBalanceSoon();
              }}
            />
          )}
          {(savedCard || sandboxWallets) && (
            <fieldset>
              <legend className="mb-2 text-sm font-medium text-slate-700">Pay with</legend>
              <div className="grid gap-2 sm:grid-cols-2">
                {savedCard && (
                  <PayWithOption
                    value="saved"
                    icon={CreditCard}
                    label={`${cardBrandName(savedCard.card_brand)} •••• ${savedCard.card_last4}`}
                    detail={`Saved card, expires ${formatCardExpiry(savedCard)}`}
                    current={payWith}
                    onChange={setChosen}
                    disabled={busy}
                  />
                )}
                <PayWithOption
                  value="card"
                  icon={CreditCard}
                  label="Use a new card"
                  detail="Type a card for this top-up"
                  current={payWith}
                  onChange={setChosen}
                  disabled={busy}
                />
                {sandboxWallets &&
                  SANDBOX_WALLET_CHOICES.map((choice) => (
                    <PayWithOption
                      key={choice.value}
                      {...choice}
                      current={payWith}
                      onChange={setChosen}
                      disabled={busy}
                    />
                  ))}
              </div>
            </fieldset>
          )}
          {payWith === "card" && (
            <fieldset className="space-y-4">
              <legend className="mb-3 text-sm font-medium text-slate-700">Card</legend>
              <CardEntryFields entry={card} stripe={usesStripe} disabled={busy} />
            </fieldset>
          )}
          {outcome && (
            <Alert
              tone={outcome.tone}
              title={outcome.title}
              role={outcome.tone === "error" ? "alert" : "status"}
            >
              {outcome.message}
            </Alert>
          )}
          <Button type="submit" busy={busy} className="w-full">
            {busy
              ? "Processing..."
              : validAmount === null
                ? "Top up"
                : isDeviceWallet(payWith)
                  ? `Pay ${formatCents(validAmount)} with ${payWith === "apple_pay" ? "Apple Pay" : "Google Pay"}`
                  : `Top up ${formatCents(validAmount)}`}
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}
