import type { RuntimeConfig } from "@promptmint/contracts";
import { QueryClientProvider } from "@tanstack/react-query";
import { render, screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ReactNode } from "react";
import { createMemoryRouter, RouterProvider } from "react-router";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { RuntimeConfigProvider } from "../../lib/runtime-config";
import { packageFixture, paymentMethodFixture, subscriptionFixture } from "../../test/billing-fixtures";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { runtimeConfigFixture } from "../../test/fixtures";
import { fillBillingAddress } from "../../test/payment-card";
import { createTestQueryClient } from "../../test/render-route";
import { TopUpCard } from "../wallet/top-up-card";
import { AddPaymentMethodDialog } from "./add-payment-method-dialog";
import { CheckoutDialog } from "./checkout-dialog";

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

const topUpApi = () =>
  stubFetch({
    "POST /api/wallet/payment-intents/": () =>
      jsonResponse({
        id: "pi_1",
        client_secret: "pi_1_secret_xyz",
        amount: 1000,
        currency: "usd",
        gateway: "stripe",
      }),
    "GET /api/wallet/": () => jsonResponse({}),
  });

describe("top-up through Stripe", () => {
  it("uses Stripe's card field, confirms with the client_secret and says the credit is on its way", async () => {
    const stripe = fakeStripe();
    stripeJs.current = stripe;
    const api = topUpApi();
    renderWithConfig(<TopUpCard />);

    expect(screen.queryByLabelText("Card number")).toBeNull();
    expect(screen.queryByText("Sandbox payments — no real money moves")).toBeNull();
    expect(
      screen.queryByText("Stripe is not configured. Payment functionality is not available."),
    ).toBeNull();
    expect(screen.getByTestId("stripe-card-field")).toBeDefined();
    await waitFor(() => expect(stripe.card.mount).toHaveBeenCalled());
    expect(stripeJs.loadStripe).toHaveBeenCalledWith(`pk_test_${keyCount}`);
    expect(stripe.elements).toHaveBeenCalledWith(
      expect.objectContaining({ appearance: { theme: "stripe", variables: { colorPrimary: "#2563eb" } } }),
    );

    await userEvent.click(screen.getByRole("button", { name: "Top up $10.00" }));

    expect(await screen.findByText("Payment received — your balance updates in a moment")).toBeDefined();
    expect(api.callsTo("POST /api/wallet/payment-intents/")[0]?.body).toEqual({
      amount: 1000,
      currency: "usd",
    });
    expect(stripe.confirmCardPayment).toHaveBeenCalledWith("pi_1_secret_xyz", {
      payment_method: { card: stripe.card },
    });
    expect(api.callsTo("POST /api/billing/sandbox/confirm/")).toHaveLength(0);
  });

  it("says 'Payment was not completed successfully' when the payment is left needing action", async () => {
    const stripe = fakeStripe();
    stripe.confirmCardPayment.mockResolvedValue({ paymentIntent: { id: "pi_1", status: "requires_action" } });
    stripeJs.current = stripe;
    topUpApi();
    renderWithConfig(<TopUpCard />);
    await waitFor(() => expect(stripe.card.mount).toHaveBeenCalled());

    await userEvent.click(screen.getByRole("button", { name: "Top up $10.00" }));

    expect((await screen.findByRole("alert")).textContent).toBe("Payment was not completed successfully");
    expect(screen.queryByText("Payment received — your balance updates in a moment")).toBeNull();
  });

  it("refuses to pay with 'Stripe has not loaded yet' while Stripe is not loaded", async () => {
    stripeJs.current = null;
    const api = topUpApi();
    renderWithConfig(<TopUpCard />);
    await waitFor(() => expect(stripeJs.loadStripe).toHaveBeenCalled());

    await userEvent.click(screen.getByRole("button", { name: "Top up $10.00" }));

    expect(screen.getByText("Stripe has not loaded yet. Please try again.")).toBeDefined();
    expect(api.requests).toHaveLength(0);
  });
});

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
