import type { Package, PaymentMethod } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { CreditCard, Wallet } from "lucide-react";
import { type FormEvent, useState } from "react";
import { Link } from "react-router";
import { toast } from "sonner";
import { BillingStepError, billingErrorTitle } from "../../lib/billing/billing-errors";
import { paymentMethodsQueryOptions } from "../../lib/billing/list-payment-methods";
import { useSubscribeToPlan } from "../../lib/billing/subscribe-to-plan";
import { useSubscribeToPlanWithStripe } from "../../lib/billing/subscribe-to-plan-stripe";
import { cardBrandName } from "../../lib/card-display";
import { cn } from "../../lib/cn";
import { formatCents, formatMicros } from "../../lib/format";
import { STRIPE_NOT_LOADED } from "../../lib/sandbox-payments";
import { useStripePublishableKey } from "../../lib/stripe";
import { useWallet } from "../../lib/wallet-query";
import { Alert } from "../ui/alert";
import { CancelSubmitButtons } from "../ui/button";
import { CardEntryFields, useCardEntry } from "../ui/card-entry";
import { isDeviceWallet, SANDBOX_WALLET_CHOICES, useSandboxWallets } from "../ui/device-wallets";
import { Modal } from "../ui/modal";
import { type PayWith, type PayWithChoice, PayWithOption } from "../ui/pay-with-option";
import { PaymentGatewayNotice, usePaymentsReady } from "../ui/payment-gateway-notice";
import { PaymentElementsProvider } from "../ui/stripe-card-field";
import { BillingAddressFields, readStripeEntry, useBillingAddressEntry } from "./billing-address-fields";
import { PlanFeatureList, planPriceLabel } from "./plan-features";

/** The subscription checkout card of SPEC §2, in a dialog; `plan` null closes it. */
export function CheckoutDialog({
  appSlug,
  plan,
  onClose,
}: {
  appSlug: string;
  plan: Package | null;
  onClose: () => void;
}) {
  const subscribe = useSubscribeToPlan(appSlug);
  const subscribeStripe = useSubscribeToPlanWithStripe(appSlug);
  const usesStripe = useStripePublishableKey() !== null;
  // A card saved earlier (on this page's Payment Methods, or anywhere: cards are the person's) is
  // offered first, so it is not typed again (issue 32), with the sandbox processor as with Stripe.
  const savedCards = useQuery({ ...paymentMethodsQueryOptions(appSlug), enabled: plan !== null });
  const savedCard = savedCards.data?.find((card) => card.is_default) ?? savedCards.data?.[0];
  const reset = () => {
    subscribe.reset();
    subscribeStripe.reset();
  };
  return (
    <Modal
      open={plan !== null}
      onOpenChange={(open) => {
        if (open) return;
        reset();
        onClose();
      }}
      busy={subscribe.isPending || subscribeStripe.isPending}
      title={plan ? `Subscribe to ${plan.name}` : "Subscribe"}
      description="Pay for the first period now; the plan renews until you cancel it."
    >
      {plan && (
        <PaymentElementsProvider>
          <CheckoutForm
            // The default card may load after the dialog opens; it is then offered, and chosen, first.
            key={`${plan.id}:${savedCard?.id ?? ""}`}
            plan={plan}
            subscribe={subscribe}
            subscribeStripe={usesStripe ? subscribeStripe : null}
            savedCard={savedCard}
            onDone={() => {
              reset();
              onClose();
            }}
          />
        </PaymentElementsProvider>
      )}
    </Modal>
  );
}

function CheckoutForm({
  plan,
  subscribe,
  subscribeStripe,
  savedCard,
  onDone,
}: {
  plan: Package;
  subscribe: ReturnType<typeof useSubscribeToPlan>;
  /** Set when the host runs Stripe: cards are set up with Stripe Elements and charged by Stripe Billing. */
  subscribeStripe: ReturnType<typeof useSubscribeToPlanWithStripe> | null;
  /** The default saved card, offered first. */
  savedCard: PaymentMethod | undefined;
  onDone: () => void;
}) {
  const paymentsReady = usePaymentsReady();
  const wallet = useWallet();
  const [payWith, setPayWith] = useState<PayWith>(savedCard ? "saved" : "card");
  const sandboxWallets = useSandboxWallets();
  const card = useCardEntry();
  const address = useBillingAddressEntry();
  const [notLoaded, setNotLoaded] = useState(false);
  const busy = subscribe.isPending || Boolean(subscribeStripe?.isPending);
  const subscribeLabel = `Subscribe for ${planPriceLabel(plan)}`;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setNotLoaded(false);
    const onSuccess = () => {
      toast.success(`Subscribed to ${plan.name}`);
      onDone();
    };
    if (payWith === "wallet") {
      subscribeStripe?.reset();
      subscribe.mutate({ plan, payment: { method: "wallet" } }, { onSuccess });
      return;
    }
    if (isDeviceWallet(payWith) && !subscribeStripe) {
      subscribe.mutate({ plan, payment: { method: "device_wallet", wallet: payWith } }, { onSuccess });
      return;
    }
    if (payWith === "saved" && savedCard) {
      const payment = { method: "saved" as const, paymentMethodId: savedCard.id };
      if (subscribeStripe) {
        subscribe.reset();
        subscribeStripe.mutate({ plan, payment }, { onSuccess });
      } else {
        subscribe.mutate({ plan, payment }, { onSuccess });
      }
      return;
    }
    if (!paymentsReady) {
      setNotLoaded(true);
      return;
    }
    if (subscribeStripe) {
      const entry = readStripeEntry(card, address, () => setNotLoaded(true));
      if (!entry) return;
      subscribe.reset();
      subscribeStripe.mutate(
        { plan, payment: { method: "new", card: entry.stripeCard, billingAddress: entry.billingAddress } },
        { onSuccess },
      );
      return;
    }
    const typedCard = card.parseTyped();
    const billingAddress = address.parse();
    if (!typedCard || !billingAddress) return;
    subscribe.mutate({ plan, payment: { method: "card", card: typedCard } }, { onSuccess });
  };

  const payWithChoices: PayWithChoice[] = [
    ...(savedCard
      ? [
          {
            value: "saved" as const,
            icon: CreditCard,
            label: `${cardBrandName(savedCard.card_brand)} •••• ${savedCard.card_last4}`,
            detail: subscribeStripe
              ? "Charged now and each period"
              : "First period by this card, renewals from your wallet",
          },
        ]
      : []),
    {
      value: "card",
      icon: CreditCard,
      label: savedCard ? "Use a new card" : "Card",
      // Sandbox card payments are one-off: the renewals come from the wallet, and the choice says so.
      detail: subscribeStripe
        ? "Saved, then charged each period"
        : "First period by card, renewals from your wallet",
    },
    // SPEC §5's order: card, apple_pay, google_pay (the sandbox's; decision 083), then the balance.
    ...(sandboxWallets && !subscribeStripe
      ? SANDBOX_WALLET_CHOICES.map((choice) => ({
          ...choice,
          detail: "First period by your device's wallet, renewals from your wallet",
        }))
      : []),
    {
      value: "wallet",
      icon: Wallet,
      label: "Pay from wallet",
      detail: wallet.data ? `Balance ${formatMicros(wallet.data.balance_micros)}` : "Your prepaid balance",
    },
  ];

  return (
    <form onSubmit={submit} noValidate className="space-y-5">
      <div className="rounded-lg border border-slate-200 bg-slate-50 p-4">
        <div className="flex items-baseline justify-between gap-3">
          <p className="font-semibold text-slate-900">{plan.name}</p>
          <p className="text-lg font-semibold text-slate-900 tabular-nums">{planPriceLabel(plan)}</p>
        </div>
        <p className="mt-3 text-sm font-medium text-slate-700">Includes:</p>
        <PlanFeatureList plan={plan} className="mt-2 space-y-1.5 text-sm text-slate-600" />
      </div>

      <fieldset>
        <legend className="mb-2 text-sm font-semibold text-slate-900">Pay with</legend>
        <div
          className={cn("grid gap-2", payWithChoices.length % 3 === 0 ? "sm:grid-cols-3" : "sm:grid-cols-2")}
        >
          {payWithChoices.map((choice) => (
            <PayWithOption
              key={choice.value}
              {...choice}
              current={payWith}
              onChange={setPayWith}
              disabled={busy}
            />
          ))}
        </div>
      </fieldset>

      {payWith === "card" ? (
        <>
          <PaymentGatewayNotice />
          <fieldset className="space-y-4">
            <legend className="mb-3 text-sm font-semibold text-slate-900">Payment</legend>
            <CardEntryFields entry={card} stripe={subscribeStripe !== null} disabled={busy} hidePostalCode />
          </fieldset>
          <BillingAddressFields entry={address} disabled={busy} />
        </>
      ) : isDeviceWallet(payWith) ? (
        <p className="text-sm text-slate-600">
          {formatCents(plan.price_cents)} is paid with {payWith === "apple_pay" ? "Apple Pay" : "Google Pay"}{" "}
          now; the following periods are paid from your wallet.
        </p>
      ) : payWith === "saved" ? (
        <p className="text-sm text-slate-600">
          {formatCents(plan.price_cents)} is charged to your card ending {savedCard?.card_last4} now
          {subscribeStripe
            ? " and at the start of each period until you cancel."
            : "; the following periods are paid from your wallet."}
        </p>
      ) : (
        <p className="text-sm text-slate-600">
          {formatCents(plan.price_cents)} is taken from your wallet balance now.{" "}
          <Link to="/wallet" className="font-medium text-brand-700 hover:underline">
            Top up your wallet
          </Link>
        </p>
      )}

      {notLoaded && <Alert tone="error">{STRIPE_NOT_LOADED}</Alert>}
      {subscribe.isError && <CheckoutError error={subscribe.error} />}
      {subscribeStripe?.isError && <CheckoutError error={subscribeStripe.error} />}

      <p className="text-xs text-slate-500">
        By subscribing, you agree to our terms of service and privacy policy. You can cancel your subscription
        at any time.
      </p>
      <CancelSubmitButtons busy={busy} onCancel={onDone} label={subscribeLabel} busyLabel="Processing..." />
    </form>
  );
}

function CheckoutError({ error }: { error: Error }) {
  if (!(error instanceof BillingStepError)) {
    return (
      <Alert tone="error" title={billingErrorTitle(error)}>
        {error.message || undefined}
      </Alert>
    );
  }
  return (
    <Alert tone="error" title={error.title}>
      {error.message}
      {error.status === 402 && (
        <>
          {" "}
          <Link to="/wallet" className="font-medium underline">
            Go to your wallet
          </Link>
        </>
      )}
    </Alert>
  );
}
