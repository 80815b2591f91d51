import { within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";

export interface CardEntry {
  number: string;
  expiry?: string;
  cvc?: string;
  name?: string;
  line1?: string;
  city?: string;
  state?: string;
  postalCode?: string;
  country?: string;
}

/**
 * Types a card into the payment form inside `scope` (a dialog, or the page), then each part of
 * its billing address that is given, in the form's order. Expiry and CVC default to a valid pair.
 */
export async function fillPaymentCard(scope: HTMLElement, card: CardEntry): Promise<void> {
  const form = within(scope);
  await userEvent.type(form.getByLabelText("Card number"), card.number);
  await userEvent.type(form.getByLabelText("Expiry (MM/YY)"), card.expiry ?? "12/34");
  await userEvent.type(form.getByLabelText("CVC"), card.cvc ?? "123");
  await fillBillingAddress(scope, card);
}

/** Types each given part of a billing address into the payment form inside `scope`. */
export async function fillBillingAddress(scope: HTMLElement, address: Omit<CardEntry, "number">) {
  const form = within(scope);
  const typed: [label: string, value: string | undefined][] = [
    ["Name on card", address.name],
    ["Address line 1", address.line1],
    ["City", address.city],
    ["State / Province (optional)", address.state],
    ["Postal code", address.postalCode],
  ];
  for (const [label, value] of typed) {
    if (value !== undefined) await userEvent.type(form.getByLabelText(label), value);
  }
  if (address.country !== undefined)
    await userEvent.selectOptions(form.getByLabelText("Country"), address.country);
}
