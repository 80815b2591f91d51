import { type FormEvent, useState } from "react";
import { toast } from "sonner";
import {
  BillingAddressFields,
  readStripeEntry,
  useBillingAddressEntry,
} from "../../components/billing/billing-address-fields";
import { Alert } from "../../components/ui/alert";
import { CancelSubmitButtons } from "../../components/ui/button";
import { CardEntryFields, useCardEntry } from "../../components/ui/card-entry";
import { CheckboxField } from "../../components/ui/checkbox-field";
import { Modal } from "../../components/ui/modal";
import { PaymentGatewayNotice, usePaymentsReady } from "../../components/ui/payment-gateway-notice";
import { PaymentElementsProvider } from "../../components/ui/stripe-card-field";
import { useAddPaymentMethod } from "../../lib/billing/add-payment-method";
import { useAddPaymentMethodWithStripe } from "../../lib/billing/add-payment-method-stripe";
import { billingErrorTitle } from "../../lib/billing/billing-errors";
import { STRIPE_NOT_LOADED } from "../../lib/sandbox-payments";
import { useStripePublishableKey } from "../../lib/stripe";

/** SPEC §2: the card form in a dialog; the billing address is required (SPEC §5). */
export function AddPaymentMethodDialog({
  appSlug,
  open,
  firstCard,
  onClose,
}: {
  appSlug: string;
  open: boolean;
  firstCard: boolean;
  onClose: () => void;
}) {
  const sandboxAdd = useAddPaymentMethod(appSlug);
  const stripeAdd = useAddPaymentMethodWithStripe(appSlug);
  const usesStripe = useStripePublishableKey() !== null;
  const add = usesStripe ? stripeAdd : sandboxAdd;
  const close = () => {
    add.reset();
    onClose();
  };
  return (
    <Modal
      open={open}
      onOpenChange={(next) => !next && close()}
      busy={add.isPending}
      title="Add Payment Method"
      description="Save a card to your account."
    >
      {open && (
        <PaymentElementsProvider>
          <AddPaymentMethodForm
            add={sandboxAdd}
            stripeAdd={usesStripe ? stripeAdd : null}
            firstCard={firstCard}
            onDone={close}
          />
        </PaymentElementsProvider>
      )}
    </Modal>
  );
}

function AddPaymentMethodForm({
  add: sandboxAdd,
  stripeAdd,
  firstCard,
  onDone,
}: {
  add: ReturnType<typeof useAddPaymentMethod>;
  /** Set when the host runs Stripe: the card is set up through Stripe Elements instead. */
  stripeAdd: ReturnType<typeof useAddPaymentMethodWithStripe> | null;
  firstCard: boolean;
  onDone: () => void;
}) {
  const add = stripeAdd ?? sandboxAdd;
  const paymentsReady = usePaymentsReady();
  const card = useCardEntry();
  const address = useBillingAddressEntry();
  const [setDefault, setSetDefault] = useState(firstCard);
  const [notLoaded, setNotLoaded] = useState(false);
  const busy = add.isPending;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setNotLoaded(!paymentsReady);
    if (!paymentsReady) return;
    const onSuccess = (method: { card_last4: string }) => {
      toast.success(`Card ending in ${method.card_last4} saved`);
      onDone();
    };
    if (stripeAdd) {
      const entry = readStripeEntry(card, address, () => setNotLoaded(true));
      if (!entry) return;
      stripeAdd.mutate(
        { billing_address: entry.billingAddress, set_default: setDefault, card: entry.stripeCard },
        { onSuccess },
      );
      return;
    }
    const typedCard = card.parseTyped();
    const billingAddress = address.parse();
    if (!typedCard || !billingAddress) return;
    sandboxAdd.mutate(
      { billing_address: billingAddress, card: typedCard, set_default: setDefault },
      { onSuccess },
    );
  };

  return (
    <form onSubmit={submit} noValidate className="space-y-5">
      <PaymentGatewayNotice />
      <fieldset className="space-y-4">
        <legend className="mb-3 text-sm font-semibold text-slate-900">Card</legend>
        <CardEntryFields entry={card} stripe={stripeAdd !== null} disabled={busy} hidePostalCode />
      </fieldset>
      <BillingAddressFields entry={address} disabled={busy} />
      <CheckboxField
        label="Make this my default payment method"
        checked={setDefault}
        disabled={busy}
        onChange={(event) => setSetDefault(event.target.checked)}
      />
      {notLoaded && <Alert tone="error">{STRIPE_NOT_LOADED}</Alert>}
      {add.isError && (
        <Alert tone="error" title={billingErrorTitle(add.error)}>
          {add.error.message || undefined}
        </Alert>
      )}
      <CancelSubmitButtons
        busy={busy}
        onCancel={onDone}
        label={"Add Payment Method"}
        busyLabel="Processing..."
      />
    </form>
  );
}
