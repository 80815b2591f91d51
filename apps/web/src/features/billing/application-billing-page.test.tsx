import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { APP, CONFIRM, renderBillingPage } from "../../test/billing-api";
import { packageFixture, paymentMethodFixture, subscriptionFixture } from "../../test/billing-fixtures";
import { jsonResponse } from "../../test/fetch-stub";
import { fillPaymentCard } from "../../test/payment-card";

function subscriptionItem(name: string): HTMLElement {
  return within(screen.getByRole("list", { name: "Subscriptions" })).getByRole("listitem", { name });
}

function planCard(name: string): HTMLElement {
  return within(screen.getByRole("list", { name: "Available plans" })).getByRole("listitem", { name });
}

/** Fills the checkout's card and billing address. */
function fillCardAndAddress(dialog: HTMLElement, number = "4242424242424242") {
  return fillPaymentCard(dialog, {
    number,
    name: "Ada Lovelace",
    line1: "12 St James's Square",
    city: "London",
    postalCode: "SW1Y 4LB",
    country: "GB",
  });
}

const PLANS = [
  packageFixture({ id: "plan-basic", name: "Basic", price_cents: 200, features: {} }),
  packageFixture({
    id: "plan-pro",
    name: "Pro",
    price_cents: 500,
    features: { Support: "Email", SLA: "99.9%" },
  }),
  packageFixture({ id: "plan-old", name: "Legacy", price_cents: 900, is_active: false }),
];

describe("billing and subscriptions", () => {
  it("shows a spinner, then 'Failed to load billing data' when a list fails", async () => {
    renderBillingPage({ extra: { [`GET ${APP}/packages/`]: () => jsonResponse({ message: "down" }, 500) } });

    expect(screen.getByRole("status").textContent).toContain("Loading billing...");
    expect((await screen.findByRole("alert")).textContent).toContain("Failed to load billing data");
  });

  it("badges subscriptions by status and offers Cancel only on an active one that is not ending", async () => {
    renderBillingPage({
      subscriptions: [
        subscriptionFixture({
          id: "s1",
          package_name: "Pro",
          calls_used: 2,
          calls_included: 2,
          days_remaining: 12,
        }),
        subscriptionFixture({ id: "s2", package_name: "Team", cancel_at_period_end: true }),
        subscriptionFixture({ id: "s3", package_name: "Old", status: "canceled" }),
        subscriptionFixture({ id: "s4", package_name: "Late", status: "past_due" }),
        subscriptionFixture({ id: "s5", package_name: "Carded", renews_from: "card" }),
        subscriptionFixture({ id: "s6", package_name: "Waiting", status: "incomplete", renews_from: "card" }),
      ],
    });

    const pro = within(await screen.findByRole("listitem", { name: "Pro" }));
    expect(pro.getByText("active").className).toContain("green");
    expect(pro.getByText("2 / 2")).toBeDefined();
    expect(pro.getByText(/12 days remaining · from your wallet/)).toBeDefined();
    expect(within(subscriptionItem("Carded")).getByText(/· charged to your card/)).toBeDefined();
    const waiting = within(subscriptionItem("Waiting"));
    expect(waiting.getByText("incomplete").className).toContain("yellow");
    expect(waiting.getByText("Waiting for Stripe to confirm the card payment")).toBeDefined();
    expect(waiting.queryByRole("button", { name: /Cancel/ })).toBeNull();
    expect(pro.getByRole("button", { name: "Cancel Pro subscription" })).toBeDefined();

    const team = within(subscriptionItem("Team"));
    expect(team.getByText("Canceling")).toBeDefined();
    expect(team.queryByRole("button", { name: /Cancel/ })).toBeNull();
    const old = within(subscriptionItem("Old"));
    expect(old.getByText("canceled").className).toContain("red");
    expect(old.queryByRole("button", { name: /Cancel/ })).toBeNull();
    const late = within(subscriptionItem("Late"));
    expect(late.getByText("past due").className).toContain("yellow");
    expect(late.queryByRole("button", { name: /Cancel/ })).toBeNull();
  });

  it("cancels after confirmation and reloads the list, which then shows 'Canceling'", async () => {
    const route = `POST ${APP}/subscriptions/sub-1/cancel/`;
    const { api } = renderBillingPage({
      subscriptions: [subscriptionFixture()],
      extra: {
        [route]: () => {
          api.state.subscriptions = [subscriptionFixture({ cancel_at_period_end: true })];
          return jsonResponse(api.state.subscriptions[0]);
        },
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Cancel Pro subscription" }));
    const dialog = await screen.findByRole("dialog", { name: "Cancel subscription?" });
    // Two buttons that cannot be mistaken for each other: keep it, or cancel it.
    expect(within(dialog).getByRole("button", { name: "Keep Subscription" })).toBeDefined();
    expect(within(dialog).queryByRole("button", { name: "Cancel" })).toBeNull();
    await userEvent.click(within(dialog).getByRole("button", { name: "Cancel Subscription" }));

    expect(await within(subscriptionItem("Pro")).findByText("Canceling")).toBeDefined();
    expect(api.callsTo(route)).toHaveLength(1);
    expect(api.callsTo(`GET ${APP}/subscriptions/`)).toHaveLength(2);
    expect(within(subscriptionItem("Pro")).queryByRole("button", { name: /Cancel/ })).toBeNull();
  });

  it("says 'Failed to cancel subscription' when the cancel fails", async () => {
    renderBillingPage({
      subscriptions: [subscriptionFixture()],
      extra: {
        [`POST ${APP}/subscriptions/sub-1/cancel/`]: () =>
          jsonResponse({ code: "conflict", message: "Already canceled", status: 409 }, 409),
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Cancel Pro subscription" }));
    const dialog = await screen.findByRole("dialog");
    await userEvent.click(within(dialog).getByRole("button", { name: "Cancel Subscription" }));

    const alert = await within(dialog).findByRole("alert");
    expect(alert.textContent).toContain("Failed to cancel subscription");
    expect(alert.textContent).toContain("Already canceled");
  });

  it("resumes a subscription that is canceling, and the list then shows it renewing", async () => {
    const route = `PATCH ${APP}/subscriptions/sub-1/`;
    const { api } = renderBillingPage({
      subscriptions: [subscriptionFixture({ cancel_at_period_end: true })],
      extra: {
        [route]: () => {
          api.state.subscriptions = [subscriptionFixture()];
          return jsonResponse(api.state.subscriptions[0]);
        },
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Resume Pro subscription" }));

    expect(
      await within(subscriptionItem("Pro")).findByRole("button", { name: "Cancel Pro subscription" }),
    ).toBeDefined();
    expect(api.callsTo(route)[0]?.body).toEqual({ cancel_at_period_end: false });
    expect(within(subscriptionItem("Pro")).queryByText("Canceling")).toBeNull();
  });

  it("never asks a consumer's page for the owner's record of someone else's app", async () => {
    const { api } = renderBillingPage({ packages: [packageFixture()] });

    expect(await screen.findByRole("button", { name: "Subscribe to Pro" })).toBeDefined();
    expect(api.callsTo("GET /api/app/").length).toBeGreaterThan(0);
    expect(api.callsTo(`GET ${APP}/`)).toHaveLength(0);
  });

  it("orders plans as a person compares them: on offer first, cheapest first, withdrawn last", async () => {
    const [basic, pro, legacy] = PLANS;
    renderBillingPage({ packages: [legacy, pro, basic].filter((plan) => plan !== undefined) });

    const list = await screen.findByRole("list", { name: "Available plans" });
    const names = within(list)
      .getAllByRole("heading", { level: 3 })
      .map((heading) => heading.textContent);
    expect(names).toEqual(["Basic", "Pro", "Legacy"]);
  });

  it("lists plans with price per currency, features, a 'Popular' ribbon for pro and 'Not Available' when inactive", async () => {
    renderBillingPage({ packages: PLANS });

    await screen.findByRole("list", { name: "Available plans" });
    const pro = within(planCard("Pro"));
    expect(pro.getByText("Popular")).toBeDefined();
    expect(pro.getByText("$5.00/usd")).toBeDefined();
    expect(pro.getByText("For teams calling every day.")).toBeDefined();
    expect(pro.getByText("Support: Email")).toBeDefined();
    expect(pro.getByText("SLA: 99.9%")).toBeDefined();
    expect(pro.getByText("100 calls included per period")).toBeDefined();
    expect(pro.getByRole("button", { name: "Subscribe to Pro" })).toBeDefined();

    expect(within(planCard("Basic")).queryByText("Popular")).toBeNull();
    expect(within(planCard("Basic")).getByText("$2.00/usd")).toBeDefined();
    const legacy = within(planCard("Legacy")).getByRole("button", { name: "Not Available" });
    expect(legacy.hasAttribute("disabled")).toBe(true);
    expect(screen.getByText("Sandbox payments — no real money moves")).toBeDefined();
  });

  it("checks out with a card: payment intent for price × 100, sandbox confirm, then the subscription", async () => {
    const { api } = renderBillingPage({
      packages: PLANS,
      extra: {
        [`POST ${APP}/subscriptions/`]: ({ body }) => {
          api.state.subscriptions = [
            subscriptionFixture({ package_id: (body as { package_id: string }).package_id }),
          ];
          return jsonResponse(api.state.subscriptions[0], 201);
        },
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Subscribe to Pro" }));
    const dialog = await screen.findByRole("dialog", { name: "Subscribe to Pro" });
    const form = within(dialog);
    expect(form.getByText("Includes:")).toBeDefined();
    expect(form.getByText("SLA: 99.9%")).toBeDefined();
    expect(
      form.getByText(
        "By subscribing, you agree to our terms of service and privacy policy. You can cancel your subscription at any time.",
      ),
    ).toBeDefined();
    const countries = within(form.getByLabelText("Country"))
      .getAllByRole("option")
      .map((option) => (option as HTMLOptionElement).value);
    expect(countries).toEqual(["US", "CA", "GB", "AU", "DE", "FR", "ES", "IT", "NL"]);

    await fillCardAndAddress(dialog);
    await userEvent.click(form.getByRole("button", { name: "Subscribe for $5.00/usd" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    const paths = api.requests.filter((r) => r.method === "POST").map((r) => r.path);
    expect(paths).toEqual([
      `${APP}/create-payment-intent/`,
      "/api/billing/sandbox/confirm/",
      `${APP}/subscriptions/`,
    ]);
    expect(api.callsTo(`POST ${APP}/create-payment-intent/`)[0]?.body).toEqual({
      amount: 500,
      currency: "usd",
      package_id: "plan-pro",
    });
    expect(api.callsTo(CONFIRM)[0]?.body).toEqual({
      client_secret: "pi_sbx_1_secret_abc",
      card: { number: "4242424242424242", exp_month: 12, exp_year: 2034, cvc: "123" },
    });
    expect(api.callsTo(`POST ${APP}/subscriptions/`)[0]?.body).toEqual({
      package_id: "plan-pro",
      payment_intent_id: "pi_sbx_1",
    });
    expect(await screen.findByRole("list", { name: "Subscriptions" })).toBeDefined();
    expect(within(planCard("Pro")).getByRole("button", { name: "Current Plan" })).toBeDefined();
  });

  it("offers a card saved earlier first, so it is not typed again, and pays with it (sandbox)", async () => {
    const { api } = renderBillingPage({
      packages: PLANS,
      paymentMethods: [paymentMethodFixture({ id: "pm-1", card_last4: "4444", card_brand: "mastercard" })],
      extra: {
        [`POST ${APP}/subscriptions/`]: ({ body }) =>
          jsonResponse(subscriptionFixture({ package_id: (body as { package_id: string }).package_id }), 201),
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Subscribe to Pro" }));
    const form = within(await screen.findByRole("dialog", { name: "Subscribe to Pro" }));
    const saved = await form.findByRole("radio", { name: "Mastercard •••• 4444" });
    expect((saved as HTMLInputElement).checked).toBe(true);
    expect(form.getByRole("radio", { name: "Use a new card" })).toBeDefined();
    expect(form.queryByLabelText("Card number")).toBeNull();
    expect(
      form.getByText(/charged to your card ending 4444 now; the following periods are paid from your wallet/),
    ).toBeDefined();

    await userEvent.click(form.getByRole("button", { name: "Subscribe for $5.00/usd" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(api.callsTo(CONFIRM)[0]?.body).toEqual({
      client_secret: "pi_sbx_1_secret_abc",
      payment_method_id: "pm-1",
    });
    expect(api.callsTo(`POST ${APP}/subscriptions/`)[0]?.body).toEqual({
      package_id: "plan-pro",
      payment_intent_id: "pi_sbx_1",
    });
  });

  it("pays the first period with Google Pay on the sandbox (SPEC §5), no card typed, then subscribes", async () => {
    const { api } = renderBillingPage({
      packages: PLANS,
      extra: {
        [`POST ${APP}/subscriptions/`]: ({ body }) =>
          jsonResponse(subscriptionFixture({ package_id: (body as { package_id: string }).package_id }), 201),
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Subscribe to Pro" }));
    const form = within(await screen.findByRole("dialog", { name: "Subscribe to Pro" }));
    await userEvent.click(await form.findByRole("radio", { name: "Google Pay" }));
    expect(form.queryByLabelText("Card number")).toBeNull();
    expect(
      form.getByText(/is paid with Google Pay now; the following periods are paid from your wallet/),
    ).toBeDefined();

    await userEvent.click(form.getByRole("button", { name: "Subscribe for $5.00/usd" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(api.callsTo(CONFIRM)[0]?.body).toEqual({
      client_secret: "pi_sbx_1_secret_abc",
      wallet: "google_pay",
    });
    expect(api.callsTo(`POST ${APP}/subscriptions/`)[0]?.body).toEqual({
      package_id: "plan-pro",
      payment_intent_id: "pi_sbx_1",
    });
  });

  it("still takes a new card when 'Use a new card' is chosen over the saved one", async () => {
    const { api } = renderBillingPage({
      packages: PLANS,
      paymentMethods: [paymentMethodFixture({ id: "pm-1", card_last4: "4444" })],
      extra: {
        [`POST ${APP}/subscriptions/`]: () =>
          jsonResponse(subscriptionFixture({ package_id: "plan-pro" }), 201),
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Subscribe to Pro" }));
    const dialog = await screen.findByRole("dialog", { name: "Subscribe to Pro" });
    await userEvent.click(await within(dialog).findByRole("radio", { name: "Use a new card" }));
    await fillCardAndAddress(dialog);
    await userEvent.click(within(dialog).getByRole("button", { name: "Subscribe for $5.00/usd" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(api.callsTo(CONFIRM)[0]?.body).toMatchObject({ card: { number: "4242424242424242" } });
  });

  it("says 'Payment was not completed successfully' when the card needs action, and does not subscribe", async () => {
    const { api } = renderBillingPage({
      packages: PLANS,
      confirm: { status: "requires_action", message: "Needs 3DS" },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Subscribe to Pro" }));
    const dialog = await screen.findByRole("dialog");
    await fillCardAndAddress(dialog, "4000002500003155");
    await userEvent.click(within(dialog).getByRole("button", { name: "Subscribe for $5.00/usd" }));

    expect((await within(dialog).findByRole("alert")).textContent).toBe(
      "Payment was not completed successfully",
    );
    expect(api.callsTo(`POST ${APP}/subscriptions/`)).toHaveLength(0);
  });

  it("says 'Payment was not completed successfully' with the decline as detail", async () => {
    renderBillingPage({ packages: PLANS, confirm: { status: "failed", message: "Your card was declined." } });

    await userEvent.click(await screen.findByRole("button", { name: "Subscribe to Pro" }));
    const dialog = await screen.findByRole("dialog");
    await fillCardAndAddress(dialog, "4000000000000002");
    await userEvent.click(within(dialog).getByRole("button", { name: "Subscribe for $5.00/usd" }));

    const alert = await within(dialog).findByRole("alert");
    expect(within(alert).getByText("Payment was not completed successfully").tagName).toBe("P");
    expect(within(alert).getByText("Your card was declined.")).toBeDefined();
  });

  it("requires the card and billing address before paying", async () => {
    const { api } = renderBillingPage({ packages: PLANS });

    await userEvent.click(await screen.findByRole("button", { name: "Subscribe to Pro" }));
    const dialog = within(await screen.findByRole("dialog"));
    await userEvent.click(dialog.getByRole("button", { name: "Subscribe for $5.00/usd" }));

    expect(dialog.getByText("Card number is required")).toBeDefined();
    expect(dialog.getByText("Address is required")).toBeDefined();
    expect(dialog.getByText("City is required")).toBeDefined();
    expect(api.callsTo(`POST ${APP}/create-payment-intent/`)).toHaveLength(0);
  });

  it("pays from the wallet without a payment intent, showing a 402's message with a way to the wallet", async () => {
    const message = "Insufficient balance: the plan costs $5.00 and your wallet has $1.00 available.";
    const { api } = renderBillingPage({
      packages: PLANS,
      extra: {
        [`POST ${APP}/subscriptions/`]: () =>
          jsonResponse({ code: "payment_required", message, status: 402 }, 402),
      },
    });

    await userEvent.click(await screen.findByRole("button", { name: "Subscribe to Pro" }));
    const dialog = within(await screen.findByRole("dialog"));
    await userEvent.click(dialog.getByRole("radio", { name: "Pay from wallet" }));
    expect(dialog.queryByLabelText("Card number")).toBeNull();
    await userEvent.click(dialog.getByRole("button", { name: "Subscribe for $5.00/usd" }));

    const alert = await dialog.findByRole("alert");
    expect(alert.textContent).toContain("Failed to initiate subscription");
    expect(alert.textContent).toContain(message);
    expect(within(alert).getByRole("link", { name: "Go to your wallet" }).getAttribute("href")).toBe(
      "/wallet",
    );
    expect(api.callsTo(`POST ${APP}/subscriptions/`)[0]?.body).toEqual({ package_id: "plan-pro" });
    expect(api.callsTo(`POST ${APP}/create-payment-intent/`)).toHaveLength(0);
  });
});
