import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { APP, CONFIRM, renderBillingPage } from "../../test/billing-api";
import { paymentMethodFixture } from "../../test/billing-fixtures";
import { jsonResponse } from "../../test/fetch-stub";
import { fillBillingAddress, fillPaymentCard } from "../../test/payment-card";

const AUSTIN = { name: "Ada", line1: "1 Main St", city: "Austin", postalCode: "78701" };

function savedCard(name: string): HTMLElement {
  return within(screen.getByRole("list", { name: "Saved cards" })).getByRole("listitem", { name });
}

describe("payment methods", () => {
  it("shows brand, last 4 digits, expiry with the month padded and the default marker", async () => {
    renderBillingPage({
      paymentMethods: [
        paymentMethodFixture(),
        paymentMethodFixture({
          id: "pm-2",
          card_brand: "mastercard",
          card_last4: "4444",
          card_exp_month: 11,
          card_exp_year: 2031,
          is_default: false,
        }),
      ],
    });

    await screen.findByRole("list", { name: "Saved cards" });
    const visa = within(savedCard("Visa ending in 4242"));
    expect(visa.getByText("Visa")).toBeDefined();
    expect(visa.getByText("•••• 4242")).toBeDefined();
    expect(visa.getByText("Expires 03/2030")).toBeDefined();
    expect(visa.getByText("Default")).toBeDefined();
    expect(visa.queryByRole("button", { name: /Make .* default/ })).toBeNull();
    const mastercard = within(savedCard("Mastercard ending in 4444"));
    expect(mastercard.getByText("Expires 11/2031")).toBeDefined();
    expect(mastercard.queryByText("Default")).toBeNull();
  });

  it("makes a card the default", async () => {
    const { api } = renderBillingPage({
      paymentMethods: [
        paymentMethodFixture(),
        paymentMethodFixture({ id: "pm-2", card_last4: "1881", is_default: false }),
      ],
      extra: {
        [`PATCH ${APP}/payment-methods/pm-2/`]: () => {
          api.state.paymentMethods = [
            paymentMethodFixture({ id: "pm-2", card_last4: "1881" }),
            paymentMethodFixture({ is_default: false }),
          ];
          return jsonResponse(api.state.paymentMethods[0]);
        },
      },
    });

    await screen.findByRole("list", { name: "Saved cards" });
    await userEvent.click(screen.getByRole("button", { name: "Make Visa ending in 1881 the default" }));

    expect(await within(savedCard("Visa ending in 1881")).findByText("Default")).toBeDefined();
    expect(api.callsTo(`PATCH ${APP}/payment-methods/pm-2/`)[0]?.body).toEqual({ is_default: true });
  });

  it("deletes a card after confirmation, and says 'Failed to delete payment method' when that fails", async () => {
    let fail = true;
    const { api } = renderBillingPage({
      paymentMethods: [paymentMethodFixture()],
      extra: {
        [`DELETE ${APP}/payment-methods/pm-1/`]: () => {
          if (fail)
            return jsonResponse({ code: "not_found", message: "Payment method not found", status: 404 }, 404);
          api.state.paymentMethods = [];
          return new Response(null, { status: 204 });
        },
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Delete Visa ending in 4242" }));
    const dialog = within(await screen.findByRole("dialog", { name: "Delete payment method?" }));
    await userEvent.click(dialog.getByRole("button", { name: "Delete" }));
    const alert = await dialog.findByRole("alert");
    expect(alert.textContent).toContain("Failed to delete payment method");
    expect(alert.textContent).toContain("Payment method not found");

    fail = false;
    await userEvent.click(dialog.getByRole("button", { name: "Delete" }));
    expect(await screen.findByText("No payment methods saved yet.")).toBeDefined();
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("requires the billing address, sets the card up with amount 0, then saves it with its address", async () => {
    const { api } = renderBillingPage({
      confirm: { amount: 0 },
      extra: {
        [`POST ${APP}/payment-methods/`]: () => {
          api.state.paymentMethods = [paymentMethodFixture()];
          return jsonResponse(api.state.paymentMethods[0], 201);
        },
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Add Payment Method" }));
    const dialog = await screen.findByRole("dialog", { name: "Add Payment Method" });
    const form = within(dialog);
    await fillPaymentCard(dialog, { number: "4242424242424242", expiry: "03/2030" });
    await userEvent.click(form.getByRole("button", { name: "Add Payment Method" }));

    expect(form.getByText("Name is required")).toBeDefined();
    expect(form.getByText("Address is required")).toBeDefined();
    expect(form.getByText("Postal code is required")).toBeDefined();
    expect(api.callsTo(`POST ${APP}/create-payment-intent/`)).toHaveLength(0);

    await fillBillingAddress(dialog, {
      name: "Ada Lovelace",
      line1: "1 Main St",
      city: "Toronto",
      state: "ON",
      postalCode: "M5V 2T6",
      country: "CA",
    });
    expect((form.getByLabelText("Make this my default payment method") as HTMLInputElement).checked).toBe(
      true,
    );
    await userEvent.click(form.getByRole("button", { name: "Add Payment Method" }));

    await waitFor(() => expect(savedCard("Visa ending in 4242")).toBeDefined());
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(api.callsTo(`POST ${APP}/create-payment-intent/`)[0]?.body).toEqual({
      amount: 0,
      currency: "usd",
    });
    expect(api.callsTo(CONFIRM)[0]?.body).toMatchObject({ client_secret: "pi_sbx_1_secret_abc" });
    expect(api.callsTo(`POST ${APP}/payment-methods/`)[0]?.body).toEqual({
      billing_address: {
        name: "Ada Lovelace",
        line1: "1 Main St",
        city: "Toronto",
        state: "ON",
        postal_code: "M5V 2T6",
        country: "CA",
      },
      card: { number: "4242424242424242", exp_month: 3, exp_year: 2030, cvc: "123" },
      set_default: true,
    });
  });

  it.each([
    {
      step: "Failed to create payment method",
      route: `POST ${APP}/payment-methods/`,
      answer: { code: "bad_request", message: "Your card has expired.", status: 400 },
      card: { number: "4242424242424242", expiry: "0134", cvc: "123" },
    },
    {
      step: "Failed to setup payment method",
      route: `POST ${APP}/create-payment-intent/`,
      answer: { code: "not_found", message: "Application not found", status: 404 },
      card: { number: "4242 4242 4242 4242", expiry: "1/34", cvc: "999" },
    },
  ])("names the step that failed: '$step'", async ({ step, route, answer, card }) => {
    renderBillingPage({ extra: { [route]: () => jsonResponse(answer, answer.status) } });

    await userEvent.click(await screen.findByRole("button", { name: "Add Payment Method" }));
    const dialog = await screen.findByRole("dialog");
    const form = within(dialog);
    await fillPaymentCard(dialog, { ...card, ...AUSTIN });
    await userEvent.click(form.getByRole("button", { name: "Add Payment Method" }));

    const alert = await form.findByRole("alert");
    expect(alert.textContent).toContain(step);
    expect(alert.textContent).toContain(answer.message);
  });
});
