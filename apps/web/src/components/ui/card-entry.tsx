import { useState } from "react";
import { type CardFieldErrors, EMPTY_CARD, PaymentCardFields, parseCardFields } from "./payment-card-fields";
import { StripeCardField, useStripeCard } from "./stripe-card-field";

/**
 * A card being entered in a payment form (top-up, checkout, saving a card): typed into the
 * sandbox's fields, or into Stripe's card Element when the host runs Stripe. Inside
 * `PaymentElementsProvider`.
 */
export function useCardEntry() {
  const getStripeCard = useStripeCard();
  const [values, setValues] = useState(EMPTY_CARD);
  const [errors, setErrors] = useState<CardFieldErrors>({});
  return {
    values,
    errors,
    setValues,
    /** Stripe's loaded card Element, or null while Stripe has not loaded. */
    getStripeCard,
    /** The typed card, or undefined once its fields show what is wrong. */
    parseTyped: () => {
      const parsed = parseCardFields(values);
      setErrors(parsed.errors ?? {});
      return parsed.card;
    },
    clearTyped: () => setValues(EMPTY_CARD),
  };
}

export type CardEntry = ReturnType<typeof useCardEntry>;

/** The card's fields: Stripe's Element when `stripe`, else the sandbox's number, expiry and CVC. */
export function CardEntryFields({
  entry,
  stripe,
  disabled,
  hidePostalCode,
}: {
  entry: CardEntry;
  stripe: boolean;
  disabled: boolean;
  hidePostalCode?: boolean;
}) {
  return stripe ? (
    <StripeCardField disabled={disabled} hidePostalCode={hidePostalCode} />
  ) : (
    <PaymentCardFields
      values={entry.values}
      errors={entry.errors}
      disabled={disabled}
      onChange={entry.setValues}
    />
  );
}
