import type { RuntimeConfig } from "@promptmint/contracts";
import { QueryClientProvider } from "@tanstack/react-query";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ReactNode } from "react";
import { createMemoryRouter, RouterProvider } from "react-router";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { CheckoutDialog } from "../../components/billing/checkout-dialog";
import { RuntimeConfigProvider } from "../../lib/runtime-config";
import { packageFixture, paymentMethodFixture, subscriptionFixture } from "../../test/billing-fixtures";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { runtimeConfigFixture } from "../../test/fixtures";
import { fillBillingAddress } from "../../test/payment-card";
import { createTestQueryClient } from "../../test/render-route";
import { AddPaymentMethodDialog } from "./add-payment-method-dialog";

// Stripe.js is never fetched in tests: `loadStripe` resolves the fake of the test (null = not loaded).
const stripeJs = vi.hoisted(() => ({ current: null as unknown, loadStripe: (_key: string) => {} }));
vi.mock("@stripe/stripe-js/pure", () => ({
  loadStripe: (key: string) => {
    stripeJs.loadStripe(key);
    return Promise.resolve(stripeJs.current);
  },
}));

function fakeStripe() {
  const card = {
    mount: vi.fn(),
    destroy: vi.fn(),
    unmount: vi.fn(),
    on: vi.fn(),
    off: vi.fn(),
    update: vi.fn(),
    clear: vi.fn(),
  };
  const elements = { create: vi.fn(() => card), getElement: vi.fn(() => card), update: vi.fn() };
  return {
    card,
    elements: vi.fn(() => elements),
    createToken: vi.fn(),
    createPaymentMethod: vi.fn(),
    confirmCardPayment: vi.fn(async (_secret: string, _data: unknown) => ({
      paymentIntent: { id: "pi_1", status: "succeeded" },
    })),
    confirmCardSetup: vi.fn(async (_secret: string, _data: unknown) => ({
      setupIntent: { id: "seti_1", status: "succeeded", payment_method: "pm_stripe_123" },
    })),
  };
}

let keyCount = 0;
let stripeConfig: RuntimeConfig;

beforeEach(() => {
  keyCount += 1;
  // A fresh key per test: the page loads Stripe once per publishable key.
  stripeConfig = {
    ...runtimeConfigFixture(),
    sandbox: { llm: false, payments: false },
    stripe_publishable_key: `pk_test_${keyCount}`,
  };
  stripeJs.loadStripe = vi.fn();
});

function renderWithConfig(ui: ReactNode, config: RuntimeConfig = stripeConfig) {
  return render(
    <QueryClientProvider client={createTestQueryClient()}>
      <RuntimeConfigProvider config={config}>{ui}</RuntimeConfigProvider>
    </QueryClientProvider>,
  );
}

describe("adding a card through Stripe", () => {
  it("sets the card up with the SetupIntent's secret and saves Stripe's payment method id", async () => {
    const stripe = fakeStripe();
    stripeJs.current = stripe;
    const api = stubFetch({
      "POST /api/app/my-app/create-payment-intent/": () =>
        jsonResponse({
          id: "seti_1",
          client_secret: "seti_1_secret_abc",
          amount: 0,
          currency: "usd",
          gateway: "stripe",
        }),
      "POST /api/app/my-app/payment-methods/": () => jsonResponse(paymentMethodFixture(), 201),
      "GET /api/app/my-app/payment-methods/": () => jsonResponse([]),
    });
    const onClose = vi.fn();
    renderWithConfig(<AddPaymentMethodDialog appSlug="my-app" open firstCard onClose={onClose} />);
    const dialog = await screen.findByRole("dialog", { name: "Add Payment Method" });
    const form = within(dialog);
    expect(form.queryByLabelText("Card number")).toBeNull();
    expect(form.getByTestId("stripe-card-field")).toBeDefined();
    await waitFor(() => expect(stripe.card.mount).toHaveBeenCalled());

    await fillBillingAddress(dialog, {
      name: "Ada Lovelace",
      line1: "1 Main St",
      city: "Toronto",
      postalCode: "M5V 2T6",
      country: "CA",
    });
    await userEvent.click(form.getByRole("button", { name: "Add Payment Method" }));

    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(api.callsTo("POST /api/app/my-app/create-payment-intent/")[0]?.body).toEqual({
      amount: 0,
      currency: "usd",
    });
    expect(stripe.confirmCardSetup).toHaveBeenCalledWith("seti_1_secret_abc", {
      payment_method: {
        card: stripe.card,
        billing_details: {
          name: "Ada Lovelace",
          address: { line1: "1 Main St", city: "Toronto", postal_code: "M5V 2T6", country: "CA" },
        },
      },
    });
    expect(api.callsTo("POST /api/app/my-app/payment-methods/")[0]?.body).toEqual({
      billing_address: {
        name: "Ada Lovelace",
        line1: "1 Main St",
        city: "Toronto",
        postal_code: "M5V 2T6",
        country: "CA",
      },
      stripe_payment_method_id: "pm_stripe_123",
      set_default: true,
    });
  });
});

describe("plan checkout through Stripe", () => {
  const checkoutApi = (savedCards: object[]) =>
    stubFetch({
      "POST /api/app/my-app/create-payment-intent/": () =>
        jsonResponse({
          id: "seti_9",
          client_secret: "seti_9_secret_abc",
          amount: 0,
          currency: "usd",
          gateway: "stripe",
        }),
      "POST /api/app/my-app/payment-methods/": () =>
        jsonResponse(paymentMethodFixture({ id: "pm-new", is_default: false }), 201),
      "GET /api/app/my-app/payment-methods/": () => jsonResponse(savedCards),
      "POST /api/app/my-app/subscriptions/": () =>
        jsonResponse(subscriptionFixture({ status: "incomplete", renews_from: "card" }), 201),
      "GET /api/app/my-app/subscriptions/": () => jsonResponse([]),
      "GET /api/wallet/": () => jsonResponse({}),
    });
  async function openCheckout(onClose: () => void) {
    const router = createMemoryRouter([
      { path: "/", element: <CheckoutDialog appSlug="my-app" plan={packageFixture()} onClose={onClose} /> },
    ]);
    renderWithConfig(<RouterProvider router={router} />);
    return within(await screen.findByRole("dialog", { name: "Subscribe to Pro" }));
  }

  it("sets a new card up with Stripe, saves it, and subscribes with it so Stripe renews on it", async () => {
    const stripe = fakeStripe();
    stripeJs.current = stripe;
    const api = checkoutApi([]);
    const onClose = vi.fn();
    const form = await openCheckout(onClose);
    expect(form.queryByLabelText("Card number")).toBeNull();
    expect(form.getByText("Saved, then charged each period")).toBeDefined();
    await waitFor(() => expect(stripe.card.mount).toHaveBeenCalled());

    await userEvent.type(form.getByLabelText("Name on card"), "Ada Lovelace");
    await userEvent.type(form.getByLabelText("Address line 1"), "1 Main St");
    await userEvent.type(form.getByLabelText("City"), "Austin");
    await userEvent.type(form.getByLabelText("Postal code"), "78701");
    await userEvent.click(form.getByRole("button", { name: /^Subscribe for/ }));

    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(api.callsTo("POST /api/app/my-app/create-payment-intent/")[0]?.body).toEqual({
      amount: 0,
      currency: "usd",
    });
    expect(stripe.confirmCardSetup).toHaveBeenCalledWith("seti_9_secret_abc", {
      payment_method: {
        card: stripe.card,
        billing_details: {
          name: "Ada Lovelace",
          address: { line1: "1 Main St", city: "Austin", postal_code: "78701", country: "US" },
        },
      },
    });
    expect(stripe.confirmCardPayment).not.toHaveBeenCalled();
    expect(api.callsTo("POST /api/app/my-app/payment-methods/")[0]?.body).toMatchObject({
      stripe_payment_method_id: "pm_stripe_123",
      set_default: false,
    });
    expect(api.callsTo("POST /api/app/my-app/subscriptions/")[0]?.body).toEqual({
      package_id: "plan-pro",
      payment_method_id: "pm-new",
    });
  });

  it("offers the default saved card first and subscribes with it without asking for a card", async () => {
    const stripe = fakeStripe();
    stripeJs.current = stripe;
    const api = checkoutApi([paymentMethodFixture({ id: "pm-1", card_last4: "4242", is_default: true })]);
    const onClose = vi.fn();
    const form = await openCheckout(onClose);
    const saved = await form.findByRole("radio", { name: "Visa •••• 4242" });
    expect((saved as HTMLInputElement).checked).toBe(true);
    expect(form.getByRole("radio", { name: "Use a new card" })).toBeDefined();
    expect(
      form.getByText(/is charged to your card ending 4242 now and at the start of each period/),
    ).toBeDefined();

    await userEvent.click(form.getByRole("button", { name: /^Subscribe for/ }));

    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(api.callsTo("POST /api/app/my-app/subscriptions/")[0]?.body).toEqual({
      package_id: "plan-pro",
      payment_method_id: "pm-1",
    });
    expect(api.callsTo("POST /api/app/my-app/create-payment-intent/")).toHaveLength(0);
    expect(stripe.confirmCardSetup).not.toHaveBeenCalled();
  });
});
