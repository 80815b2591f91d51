import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createCaller } from "../../test/caller.ts";
import {
  BILLING_ADDRESS,
  type SeenRequest,
  type StripeTestServer,
  startStripeTestServer,
} from "../../test/fake-stripe.ts";
import type { TestServer } from "../../test/server.ts";
import { reconcile } from "./reconcile.ts";

let stripe: StripeTestServer;
let server: TestServer;
let seen: SeenRequest[];
let buyer: Caller;

beforeAll(async () => {
  stripe = await startStripeTestServer();
  server = stripe.server;
  seen = stripe.fake.seen;
  buyer = await createCaller(server.baseUrl, "Card Holder");
});
afterEach(async () => expect((await reconcile(server.database.db)).ok).toBe(true));
afterAll(() => stripe?.stop());

const deliver = (event: object, options?: { secret?: string; timestamp?: number }) =>
  stripe.deliver(event, options);
const succeeded = (id: string, piId: string, amount: number) => ({
  id,
  object: "event",
  type: "payment_intent.succeeded",
  data: {
    object: { id: piId, object: "payment_intent", amount, amount_received: amount, status: "succeeded" },
  },
});

describe("the Stripe gateway", () => {
  it("creates the customer once and a payment intent with our metadata through the official SDK", async () => {
    const first = await buyer.api("POST", "/api/wallet/payment-intents/", {
      body: { amount: 2500, currency: "usd" },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ gateway: "stripe", amount: 2500, currency: "usd" });
    expect(first.body.client_secret).toMatch(/^pi_\d+_secret_abc$/);
    await buyer.api("POST", "/api/wallet/payment-intents/", { body: { amount: 1000, currency: "usd" } });
    const customers = seen.filter((r) => r.path === "/v1/customers");
    expect(customers).toHaveLength(1);
    expect(customers[0]?.headers["idempotency-key"]).toMatch(/^customer-/);
    const intent = seen.find((r) => r.path === "/v1/payment_intents");
    expect(intent?.form.get("amount")).toBe("2500");
    expect(intent?.form.get("automatic_payment_methods[enabled]")).toBe("true");
    expect(intent?.form.get("metadata[purpose]")).toBe("top_up");
    expect(intent?.form.get("customer")).toMatch(/^cus_/);
    expect((await buyer.api("GET", "/api/wallet/")).body).toMatchObject({
      gateway: "stripe",
      balance_micros: 0,
    });
    const setup = await buyer.api("POST", "/api/wallet/payment-intents/", {
      body: { amount: 0, currency: "usd" },
    });
    expect(setup.body.client_secret).toMatch(/^seti_/);
    expect(
      (
        await buyer.api("POST", "/api/billing/sandbox/confirm/", {
          body: {
            client_secret: first.body.client_secret,
            card: { number: "4242424242424242", exp_month: 1, exp_year: 2099, cvc: "123" },
          },
        })
      ).status,
    ).toBe(400);
  });

  it("credits the wallet from the signed webhook, once, however often Stripe delivers it", async () => {
    const intent = await buyer.api("POST", "/api/wallet/payment-intents/", {
      body: { amount: 1800, currency: "usd" },
    });
    const before = (await buyer.api("GET", "/api/wallet/")).body.balance_micros / 10_000;
    const event = succeeded("evt_credit_1", intent.body.id, 1800);
    expect(await deliver(event)).toEqual({ status: 200, body: { received: true, duplicate: false } });
    expect(await deliver(event)).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect((await deliver({ ...event, id: "evt_credit_2" })).body.duplicate).toBe(false);
    expect((await buyer.api("GET", "/api/wallet/")).body.balance_micros / 10_000).toBe(before + 1800);
  });

  it("rejects a bad signature and a stale timestamp without applying anything", async () => {
    const intent = await buyer.api("POST", "/api/wallet/payment-intents/", {
      body: { amount: 700, currency: "usd" },
    });
    const before = (await buyer.api("GET", "/api/wallet/")).body.balance_micros / 10_000;
    const forged = await deliver(succeeded("evt_forged", intent.body.id, 700), { secret: "whsec_attacker" });
    expect(forged.status).toBe(400);
    expect(forged.body.message).toMatch(/Invalid Stripe signature/);
    const stale = await deliver(succeeded("evt_stale", intent.body.id, 700), {
      timestamp: Math.floor(Date.now() / 1000) - 301,
    });
    expect(stale.status).toBe(400);
    const unsigned = await fetch(`${server.baseUrl}/api/billing/stripe/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(unsigned.status).toBe(400);
    expect((await buyer.api("GET", "/api/wallet/")).body.balance_micros / 10_000).toBe(before);
    // The same event, properly signed later, is still applied: a rejected delivery was not recorded.
    expect((await deliver(succeeded("evt_forged", intent.body.id, 700))).body.duplicate).toBe(false);
    expect((await buyer.api("GET", "/api/wallet/")).body.balance_micros / 10_000).toBe(before + 700);
  });

  it("saves a card set up with Stripe Elements only when it belongs to the caller's customer", async () => {
    const { body: app } = await buyer.api("POST", "/api/app/", { body: { name: "Own app" } });
    const add = (body: object) =>
      buyer.api("POST", `/api/app/${app.slug}/payment-methods/`, {
        body: { billing_address: BILLING_ADDRESS, ...body },
      });
    const saved = await add({ stripe_payment_method_id: "pm_mine" });
    expect(saved.status).toBe(201);
    expect(saved.body).toMatchObject({
      card_brand: "visa",
      card_last4: "4242",
      card_exp_month: 8,
      card_exp_year: 2031,
      is_default: true,
    });
    expect((await add({ stripe_payment_method_id: "pm_theirs" })).status).toBe(404);
    const rawCard = await add({
      card: { number: "4242424242424242", exp_month: 1, exp_year: 2099, cvc: "123" },
    });
    expect(rawCard.body.fields).toEqual({
      stripe_payment_method_id: "is required when payments go through Stripe",
    });
  });

  it("marks a failed payment without moving money", async () => {
    const intent = await buyer.api("POST", "/api/wallet/payment-intents/", {
      body: { amount: 900, currency: "usd" },
    });
    const before = (await buyer.api("GET", "/api/wallet/")).body.balance_micros / 10_000;
    const failed = await deliver({
      id: "evt_failed_1",
      object: "event",
      type: "payment_intent.payment_failed",
      data: {
        object: {
          id: intent.body.id,
          object: "payment_intent",
          amount: 900,
          amount_received: 0,
          status: "requires_payment_method",
        },
      },
    });
    expect(failed.status).toBe(200);
    expect((await buyer.api("GET", "/api/wallet/")).body.balance_micros / 10_000).toBe(before);
  });
});
