import type { RuntimeConfig } from "@promptmint/contracts";
import { QueryClientProvider } from "@tanstack/react-query";
import { render, screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ReactNode } from "react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { RuntimeConfigProvider } from "../../lib/runtime-config";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { runtimeConfigFixture } from "../../test/fixtures";
import { createTestQueryClient } from "../../test/render-route";
import { TopUpCard } from "./top-up-card";

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

describe("Apple Pay and Google Pay through Stripe's Express Checkout (SPEC §5, decision 083)", () => {
  /** A Stripe whose elements remember their handlers, so a test can play the wallet's part. */
  function fakeStripeWithWallets() {
    const base = fakeStripe();
    const handlers = new Map<string, (event: unknown) => unknown>();
    const express = {
      ...base.card,
      on: vi.fn((event: string, handler: (event: unknown) => unknown) => handlers.set(event, handler)),
    };
    const expressElements = {
      create: vi.fn(() => express),
      getElement: vi.fn(() => express),
      update: vi.fn(),
      submit: vi.fn(async () => ({})),
    };
    const cardElements = {
      create: vi.fn(() => base.card),
      getElement: vi.fn(() => base.card),
      update: vi.fn(),
    };
    return {
      ...base,
      handlers,
      expressElements,
      elements: vi.fn((options: { mode?: string }) => (options?.mode ? expressElements : cardElements)),
      confirmPayment: vi.fn(async (_options: unknown) => ({
        paymentIntent: { id: "pi_1", status: "succeeded" },
      })),
    };
  }

  it("offers the device's wallet for the amount chosen, creates the intent only once approved, and confirms it", async () => {
    const stripe = fakeStripeWithWallets();
    stripeJs.current = stripe;
    const api = topUpApi();
    renderWithConfig(<TopUpCard />);

    await waitFor(() => expect(stripe.expressElements.create).toHaveBeenCalled());
    expect(stripe.elements).toHaveBeenCalledWith(
      expect.objectContaining({ mode: "payment", amount: 1000, currency: "usd" }),
    );
    expect(stripe.expressElements.create).toHaveBeenCalledWith(
      "expressCheckout",
      expect.objectContaining({
        paymentMethods: expect.objectContaining({ applePay: "always", googlePay: "always" }),
      }),
    );
    await waitFor(() => expect(stripe.handlers.has("confirm")).toBe(true));
    expect(api.callsTo("POST /api/wallet/payment-intents/")).toHaveLength(0);

    await stripe.handlers.get("confirm")?.({ expressPaymentType: "apple_pay" });

    expect(await screen.findByText("Payment received — your balance updates in a moment")).toBeDefined();
    expect(api.callsTo("POST /api/wallet/payment-intents/")[0]?.body).toEqual({
      amount: 1000,
      currency: "usd",
    });
    expect(stripe.confirmPayment).toHaveBeenCalledWith(
      expect.objectContaining({ clientSecret: "pi_1_secret_xyz", redirect: "if_required" }),
    );
  });

  it("draws nothing where the device has no wallet, and says why a refused wallet payment failed", async () => {
    const stripe = fakeStripeWithWallets();
    stripe.confirmPayment.mockResolvedValue({ error: { message: "Your card was declined." } } as never);
    stripeJs.current = stripe;
    topUpApi();
    renderWithConfig(<TopUpCard />);
    await waitFor(() => expect(stripe.handlers.has("confirm")).toBe(true));

    await stripe.handlers.get("confirm")?.({ expressPaymentType: "google_pay" });
    expect((await screen.findByRole("alert")).textContent).toContain("Your card was declined.");

    stripe.handlers.get("ready")?.({ availablePaymentMethods: undefined });
    await waitFor(() => expect(screen.queryByTestId("express-checkout")).toBeNull());
  });
});
