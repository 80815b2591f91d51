import { decodePaymentRequiredHeader } from "@x402/core/http";
import { and, eq } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import { Receipt } from "mppx";
import OpenAI from "openai";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { agentRefunds, invocations, mppPayments, users, x402Payments } from "../../db/schema/index.ts";
import {
  AGENT_RAILS_STRIPE_KEY,
  agentBalanceOf,
  firstWordGate,
  mppAgent as railsMppAgent,
  useAgentRailsServer,
} from "../../test/agent-rails.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { x402Wallet } from "../../test/x402-facilitator.ts";
import { retryOwedRefunds } from "../billing/agent-payments/balances.ts";
import { mppPaymentBook } from "../billing/agent-payments/mpp-payments.ts";
import { createMppRail } from "../billing/agent-payments/mpp-rail.ts";
import { reconcile } from "../billing/reconcile.ts";

// Issue 40 (docs/decisions/070, 071): with x402 and MPP both on, one 402 offers both rails, and an
// agent with no account pays by either through the real clients (`@x402/fetch`, `mppx/client`):
// the payment goes to its payer's balance, the call is paid from it as a wallet call (a stream
// token by token), a call that fails leaves the money there, and a refund gives it back: through
// Stripe for MPP, owed for x402. Everything reconciles to the micro-dollar.

const PRICE_CENTS = 7;
const rails = useAgentRailsServer({ priceCents: PRICE_CENTS, mode: "completion", name: "Two Rails" });
const { server, vendor } = rails;

const db = () => server.database.db;
const mppAgent = (paymentMethod?: string) => railsMppAgent(rails.double, paymentMethod);
const balanceOf = (payerUserId: string) => agentBalanceOf(db(), payerUserId);

const completion = (query: string) => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ inputs: {}, query, response_mode: "blocking", user: "agent" }),
});

describe("mppx", () => {
  it("a call without credentials → one 402 offering both rails (PAYMENT-REQUIRED and WWW-Authenticate: Payment)", async () => {
    const response = await fetch(
      `${server.baseUrl}/api/app/${rails.app.slug}/completion-messages`,
      completion("hi"),
    );
    expect(response.status).toBe(402);
    const required = decodePaymentRequiredHeader(response.headers.get("payment-required") ?? "");
    expect(required.accepts[0]).toMatchObject({ scheme: "exact", amount: String(PRICE_CENTS * 10_000) });
    expect(response.headers.get("www-authenticate")).toMatch(/^Payment /);
    const body = await response.json();
    expect(body.remedy).toMatchObject({
      missing: "payment",
      x402: { accepted: true },
      mpp: { accepted: true, intent: "charge", method: "stripe" },
    });
  });

  it("discovery, the agents' document and the OpenAPI document → works, both rails listed", async () => {
    const document = await (await fetch(`${server.baseUrl}/.well-known/promptmint-agents.json`)).json();
    expect(document.rails ?? document.how_to_pay ?? document).toMatchObject({
      x402: expect.objectContaining({ x402_version: 2 }),
      mpp: expect.objectContaining({ methods: ["stripe"], currency: "usd" }),
    });
    const openapi = await (await fetch(`${server.baseUrl}/api/openapi.json`)).json();
    const info = openapi.paths[`/api/app/{slug}/completion-messages`]?.post?.["x-payment-info"];
    expect(JSON.stringify(info)).toContain('"mpp"');
  });

  it("with x402 on too, pays a Dify call → works, captured once through Stripe, paid into the balance, charged from it, a Payment-Receipt", async () => {
    const agent = mppAgent();
    const capturedBefore = rails.double.capturedCents();
    const response = await agent.fetch(
      `${server.baseUrl}/api/app/${rails.app.slug}/completion-messages`,
      completion("rain"),
    );
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.metadata.usage).toMatchObject({ charged_cents: PRICE_CENTS, paid_by: "wallet" });
    const receipt = Receipt.deserialize(response.headers.get("payment-receipt") ?? "");
    expect(receipt).toMatchObject({ status: "success", method: "stripe" });
    // Stripe's smallest card charge is 50 cents (decision 071): the rest stays on the balance.
    const charged = rails.double.capturedCents() - capturedBefore;
    expect(charged).toBe(50);
    const [payment] = await db()
      .select()
      .from(mppPayments)
      .where(eq(mppPayments.id, response.headers.get("promptmint-payment-id") ?? ""));
    expect(payment).toMatchObject({ status: "credited", amountMicros: 500_000 });
    const [invocation] = await db().select().from(invocations).where(eq(invocations.id, answer.id));
    expect(invocation).toMatchObject({
      status: "success",
      chargedCents: PRICE_CENTS,
      callerUserId: payment?.payerUserId,
    });
    await expect.poll(() => balanceOf(payment?.payerUserId ?? "")).toBe((50 - PRICE_CENTS) * 10_000);
    await expectReconciled(db(), "after an MPP-paid call");
  });

  it("pays an OpenAI chat.completions stream → works, token by token, charged once", async () => {
    const agent = mppAgent();
    const client = new OpenAI({
      apiKey: "unused",
      baseURL: `${server.baseUrl}/api/v1`,
      maxRetries: 0,
      defaultHeaders: { authorization: null },
      fetch: agent.fetch as typeof fetch,
    });
    // The model sends one word, then waits until that word reached this client (firstWordGate).
    const gate = firstWordGate();
    vendor.set({ kind: "echo", restAfter: gate.rest });
    const arrivals: number[] = [];
    let usage: unknown;
    try {
      const stream = await client.chat.completions.create({
        model: rails.app.slug,
        messages: [{ role: "user", content: "stream this answer word by word" }],
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.content) {
          arrivals.push(performance.now());
          gate.arrived();
        }
        if (chunk.usage) usage = chunk.usage;
      }
    } finally {
      vendor.set({ kind: "echo" });
    }
    expect(arrivals.length).toBeGreaterThanOrEqual(4);
    // The first word came before the model wrote the rest: passed on as it came.
    expect(gate.heldBack()).toBe(false);
    expect(usage).toMatchObject({ charged_cents: PRICE_CENTS, paid_by: "wallet" });
    await expectReconciled(db(), "after an MPP-paid stream");
  });

  it("a credential replayed → refused 402 payment_already_used, Stripe charged once", async () => {
    const agent = mppAgent();
    const url = `${server.baseUrl}/api/app/${rails.app.slug}/completion-messages`;
    const challenged = await fetch(url, completion("once"));
    const credential = await agent.createCredential(challenged);
    const send = () =>
      fetch(url, {
        ...completion("once"),
        headers: { "content-type": "application/json", authorization: credential },
      });
    const charges = rails.double.charges;
    expect((await send()).status).toBe(200);
    const replay = await send();
    expect(replay.status).toBe(402);
    expect((await replay.json()).message).toContain("payment_already_used");
    expect(rails.double.charges - charges).toBe(1);
  });

  it("an upstream 500 after payment → works, the money stays on the balance and a refund gives it back through Stripe", async () => {
    const agent = mppAgent();
    vendor.set({ kind: "status", status: 500, message: "down" });
    let key = "";
    let paymentId = "";
    try {
      const response = await agent.fetch(`${server.baseUrl}/api/app/${rails.app.slug}/completion-messages`, {
        ...completion("fail"),
        headers: { "content-type": "application/json", "promptmint-balance-key": "issue" },
      });
      expect(response.status).toBe(502);
      key = response.headers.get("promptmint-balance-key") ?? "";
      paymentId = response.headers.get("promptmint-payment-id") ?? "";
    } finally {
      vendor.set({ kind: "echo" });
    }
    const [payment] = await db().select().from(mppPayments).where(eq(mppPayments.id, paymentId));
    const payer = payment?.payerUserId ?? "";
    const before = await balanceOf(payer);
    expect(before).toBeGreaterThanOrEqual(500_000);
    const refundedBefore = rails.double.refundedCents();
    const refund = await fetch(`${server.baseUrl}/api/v1/agents/refund`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
    });
    const body = await refund.json();
    expect(body).toMatchObject({ status: "refunded", amount_micros: before });
    expect(rails.double.refundedCents() - refundedBefore).toBe(before / 10_000);
    expect(await balanceOf(payer)).toBe(0);
    await expectReconciled(db(), "after an MPP refund");
  });

  it("refunds again after more payments → works, each taken from what the payments have left, never refused by Stripe", async () => {
    for (let round = 0; round < 2; round++) {
      const response = await mppAgent().fetch(
        `${server.baseUrl}/api/app/${rails.app.slug}/completion-messages`,
        {
          ...completion(`round ${round}`),
          headers: { "content-type": "application/json", "promptmint-balance-key": "issue" },
        },
      );
      expect(response.status).toBe(200);
      const key = response.headers.get("promptmint-balance-key") ?? "";
      const [payment] = await db()
        .select()
        .from(mppPayments)
        .where(eq(mppPayments.id, response.headers.get("promptmint-payment-id") ?? ""));
      await expect.poll(() => balanceOf(payment?.payerUserId ?? "")).toBe((50 - PRICE_CENTS) * 10_000);
      const refundedBefore = rails.double.refundedCents();
      const refund = await fetch(`${server.baseUrl}/api/v1/agents/refund`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
      });
      expect(await refund.json()).toMatchObject({
        status: "refunded",
        amount_micros: (50 - PRICE_CENTS) * 10_000,
      });
      expect(rails.double.refundedCents() - refundedBefore).toBe(50 - PRICE_CENTS);
    }
    // No card payment was refunded beyond what it captured.
    for (const captured of rails.double.captured.values())
      expect(captured.refunded).toBeLessThanOrEqual(captured.amount);
    await expectReconciled(db(), "after refunds in sequence");
  });

  it("@x402/fetch beside it on the same endpoint → works, paid into its own balance", async () => {
    const agent = x402Wallet();
    rails.facilitator.mint(agent.address, 1_000_000n);
    const response = await agent.fetch(
      `${server.baseUrl}/api/app/${rails.app.slug}/completion-messages`,
      completion("snow"),
    );
    expect(response.status).toBe(200);
    expect((await response.json()).metadata.usage).toMatchObject({ paid_by: "wallet" });
    const payments = await db()
      .select()
      .from(x402Payments)
      .where(and(eq(x402Payments.payer, agent.address.toLowerCase()), eq(x402Payments.status, "credited")));
    expect(payments).toHaveLength(1);
    await expectReconciled(db(), "after both rails");
  });

  it("reconcile, an MPP payment or a refund made to disagree with its postings by hand → named", async () => {
    const [payment] = await db()
      .select()
      .from(mppPayments)
      .where(eq(mppPayments.status, "credited"))
      .limit(1);
    const [refund] = await db().select().from(agentRefunds).limit(1);
    if (!payment || !refund) throw new Error("the earlier tests made a payment and a refund");
    const report = async () => {
      const found = await reconcile(db());
      return { payments: found.mismatchedMppPayments, refunds: found.mismatchedAgentRefunds };
    };
    expect(await report()).toEqual({ payments: [], refunds: [] });
    await db()
      .update(mppPayments)
      .set({ amountMicros: payment.amountMicros + 1 })
      .where(eq(mppPayments.id, payment.id));
    await db()
      .update(agentRefunds)
      .set({ amountMicros: refund.amountMicros + 1 })
      .where(eq(agentRefunds.id, refund.id));
    try {
      const found = await report();
      expect(found.payments).toEqual([`MPP payment ${payment.id}`]);
      expect(found.refunds).toContain(`agent refund ${refund.id}`);
    } finally {
      await db()
        .update(mppPayments)
        .set({ amountMicros: payment.amountMicros })
        .where(eq(mppPayments.id, payment.id));
      await db()
        .update(agentRefunds)
        .set({ amountMicros: refund.amountMicros })
        .where(eq(agentRefunds.id, refund.id));
    }
    expect(await report()).toEqual({ payments: [], refunds: [] });
  });
});

describe("mppx", () => {
  it("a refund over several payments when Stripe fails midway → works, what Stripe refunded is refunded in the books and what it could not is owed (never owed whole when Stripe paid a part)", async () => {
    // Two MPP payments of one payer (one card) whose calls fail: 100 cents on its balance, in two
    // captures of 50. Stripe refunds the first part, then fails every try of the second.
    const agent = mppAgent("pm_card_two_payments");
    vendor.set({ kind: "status", status: 500, message: "down" });
    let key = "";
    const paymentIds: string[] = [];
    try {
      for (const query of ["one", "two"]) {
        const response = await agent.fetch(
          `${server.baseUrl}/api/app/${rails.app.slug}/completion-messages`,
          {
            ...completion(query),
            headers: { "content-type": "application/json", "promptmint-balance-key": "issue" },
          },
        );
        expect(response.status).toBe(502);
        key ||= response.headers.get("promptmint-balance-key") ?? "";
        paymentIds.push(response.headers.get("promptmint-payment-id") ?? "");
      }
    } finally {
      vendor.set({ kind: "echo" });
    }
    const [payment] = await db()
      .select()
      .from(mppPayments)
      .where(eq(mppPayments.id, paymentIds[0] ?? ""));
    const payer = payment?.payerUserId ?? "";
    expect(await balanceOf(payer)).toBe(1_000_000);
    const refundedBefore = rails.double.refundedCents();
    let refundRequests = 0;
    rails.double.fault = (path) =>
      path === "/v1/refunds" && refundRequests++ >= 1 ? { kind: "fail" } : undefined;
    let body: Record<string, unknown>;
    try {
      const refund = await fetch(`${server.baseUrl}/api/v1/agents/refund`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
      });
      expect(refund.status).toBe(200);
      body = await refund.json();
    } finally {
      rails.double.fault = undefined;
    }
    const stripeRefunded = (rails.double.refundedCents() - refundedBefore) * 10_000;
    expect(stripeRefunded).toBe(500_000);
    const rows = await db().select().from(agentRefunds).where(eq(agentRefunds.payerUserId, payer));
    const sum = (status: string) =>
      rows.filter((row) => row.status === status).reduce((total, row) => total + Number(row.amountMicros), 0);
    // The books say what moved: 50 cents refunded through Stripe, 50 cents still owed.
    expect(sum("refunded")).toBe(stripeRefunded);
    expect(sum("owed")).toBe(500_000);
    expect(body).toMatchObject({ amount_micros: 1_000_000 });
    expect(await balanceOf(payer)).toBe(0);
    await expectReconciled(db(), "after an MPP refund Stripe paid in part");
  });
});

describe("mppx", () => {
  it("a refund whose Stripe answer was lost → works, owed until the sweep asks Stripe again with the same key: refunded once, the books follow", async () => {
    const agent = mppAgent("pm_card_lost_refund");
    vendor.set({ kind: "status", status: 500, message: "down" });
    let key = "";
    let paymentId = "";
    try {
      const response = await agent.fetch(`${server.baseUrl}/api/app/${rails.app.slug}/completion-messages`, {
        ...completion("lost"),
        headers: { "content-type": "application/json", "promptmint-balance-key": "issue" },
      });
      expect(response.status).toBe(502);
      key = response.headers.get("promptmint-balance-key") ?? "";
      paymentId = response.headers.get("promptmint-payment-id") ?? "";
    } finally {
      vendor.set({ kind: "echo" });
    }
    const [payment] = await db().select().from(mppPayments).where(eq(mppPayments.id, paymentId));
    const payer = payment?.payerUserId ?? "";
    // Stripe never answers the refund: it stays owed, through the payment it goes back through.
    rails.double.fault = (path) => (path === "/v1/refunds" ? { kind: "fail" } : undefined);
    try {
      const refund = await fetch(`${server.baseUrl}/api/v1/agents/refund`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}` },
      });
      expect(await refund.json()).toMatchObject({ status: "owed", amount_micros: 500_000 });
    } finally {
      rails.double.fault = undefined;
    }
    const [owed] = await db().select().from(agentRefunds).where(eq(agentRefunds.payerUserId, payer));
    expect(owed).toMatchObject({ status: "owed", through: payment?.reference });
    const rail = createMppRail(
      {
        secretKey: "agent-rails-challenge-key-0123456789abcdef",
        stripeSecretKey: AGENT_RAILS_STRIPE_KEY,
        stripeApiUrl: rails.double.url,
        networkId: "internal",
        realm: "rails-test",
        challengeTtlSeconds: 300,
      },
      { maxNetworkRetries: 0 },
    );
    // What a lost answer hides: Stripe did refund it, under the rail's key for this refund.
    const [user] = await db().select({ subject: users.subject }).from(users).where(eq(users.id, payer));
    const refundedBefore = rails.double.refundedCents();
    const lost = await rail.refund(
      { rail: "mpp", subject: user?.subject ?? "", label: "" },
      500_000,
      [{ reference: payment?.reference ?? "", amountMicros: 500_000 }],
      owed?.id ?? "",
    );
    expect(lost.kind).toBe("refunded");
    expect(rails.double.refundedCents() - refundedBefore).toBe(50);
    // Not before its wait; then once.
    const enabled = new Map([["mpp" as const, { rail, book: mppPaymentBook(db(), rail) }]]);
    const log = pino({ level: "silent" }) as unknown as FastifyBaseLogger;
    expect(await retryOwedRefunds(db(), enabled, log)).toBe(0);
    await db()
      .update(agentRefunds)
      .set({ updatedAt: new Date(Date.now() - 3_600_000) })
      .where(eq(agentRefunds.id, owed?.id ?? ""));
    expect(await retryOwedRefunds(db(), enabled, log)).toBe(1);
    expect(await retryOwedRefunds(db(), enabled, log)).toBe(0);
    expect(rails.double.refundedCents() - refundedBefore).toBe(50);
    const [paid] = await db()
      .select()
      .from(agentRefunds)
      .where(eq(agentRefunds.id, owed?.id ?? ""));
    expect(paid).toMatchObject({ status: "refunded" });
    expect(await balanceOf(payer)).toBe(0);
    await expectReconciled(db(), "after a lost MPP refund answer swept");
  });
});
