import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { and, eq } from "drizzle-orm";
import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { apiKeys, applications, invocations, ledgerAccounts, x402Payments } from "../../db/schema/index.ts";
import { agentBalanceOf, firstWordGate } from "../../test/agent-rails.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useX402Server } from "../../test/use-test-server.ts";
import {
  X402_TEST_ASSET,
  X402_TEST_NETWORK,
  X402_TEST_PAY_TO,
  x402Wallet,
} from "../../test/x402-facilitator.ts";

// x402 pay-per-call (issues 30 and 40, docs/decisions/052, 070): `@x402/fetch` with a viem wallet
// pays for calls through Dify and OpenAI (MCP: mcp/mcp-agents.compat.test.ts) with no Promptmint account, against a loopback
// facilitator that checks the EIP-3009 signatures for real. Each payment is settled first and paid
// into the payer's balance; the call is then paid from it like any wallet call, charged once, and
// everything reconciles.

const PRICE_CENTS = 7;
const PRICE_UNITS = String(PRICE_CENTS * 10_000);
const { server, vendor, facilitator } = useX402Server();
const creator = useCaller(server, "x402 Seller");
const slugs = { haiku: "", chat: "" };
const agent = x402Wallet();

async function createApp(name: string, mode: "completion" | "chat") {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name,
      description: `${name}, as a service`,
      interaction_mode: mode,
      visibility: "public",
      price_cents: PRICE_CENTS,
    },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  return app.slug as string;
}

beforeAll(async () => {
  slugs.haiku = await createApp("Haiku Writer", "completion");
  slugs.chat = await createApp("Chat Buddy", "chat");
  facilitator.mint(agent.address, 1_000_000n);
});

const db = () => server.database.db;

async function paymentsOf(payer: string) {
  return db().select().from(x402Payments).where(eq(x402Payments.payer, payer.toLowerCase()));
}

async function paymentOf(id: string | null) {
  const [row] = await db()
    .select()
    .from(x402Payments)
    .where(eq(x402Payments.id, id ?? ""));
  return row;
}

const balanceOf = (payerUserId: string) => agentBalanceOf(db(), payerUserId);

async function invocationOf(id: string) {
  const [row] = await db().select().from(invocations).where(eq(invocations.id, id));
  return row;
}

async function earningsMicros(): Promise<number> {
  const [app] = await db().select().from(applications).where(eq(applications.slug, slugs.haiku));
  const [account] = await db()
    .select({ balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, "earnings"), eq(ledgerAccounts.ownerId, app?.ownerId ?? "")));
  return Number(account?.balance ?? 0);
}

describe("@x402/fetch", () => {
  describe("no credentials", () => {
    it("a paid call → 402 PAYMENT-REQUIRED (x402 v2, exact, the price in micro-dollars, payTo, network)", async () => {
      const url = `${server.baseUrl}/api/app/${slugs.haiku}/completion-messages`;
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ inputs: {}, query: "hello", response_mode: "blocking", user: "agent" }),
      });
      expect(response.status).toBe(402);
      const header = response.headers.get("payment-required");
      expect(header).toBeTruthy();
      const required = decodePaymentRequiredHeader(header ?? "");
      expect(required.x402Version).toBe(2);
      expect(required.resource.url).toBe(url);
      expect(required.resource.description).toContain("Haiku Writer");
      expect(required.accepts).toHaveLength(1);
      expect(required.accepts[0]).toMatchObject({
        scheme: "exact",
        network: X402_TEST_NETWORK,
        asset: X402_TEST_ASSET,
        amount: PRICE_UNITS,
        payTo: X402_TEST_PAY_TO,
        maxTimeoutSeconds: 300,
        extra: { name: "USDC", version: "2" },
      });
      // Dify's error shape, with the machine-readable remedy.
      const body = await response.json();
      expect(body).toMatchObject({
        code: "payment_required",
        status: 402,
        remedy: {
          missing: "payment",
          price_cents: PRICE_CENTS,
          x402: { accepted: true, x402_version: 2, amount: PRICE_UNITS, pay_to: X402_TEST_PAY_TO },
        },
      });
      expect(await paymentsOf(agent.address)).toHaveLength(0);
    });

    it("a free endpoint → refused 401 (x402 pays for calls only)", async () => {
      const response = await fetch(`${server.baseUrl}/api/app/${slugs.haiku}/parameters`);
      expect(response.status).toBe(401);
    });
  });

  describe("pays for one call", () => {
    it("Dify completion-messages (fetch) → works, paid into the balance and charged once from it, the creator earns as from a wallet call", async () => {
      const before = await earningsMicros();
      const transfersBefore = facilitator.transfers.length;
      const response = await agent.fetch(`${server.baseUrl}/api/app/${slugs.haiku}/completion-messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          inputs: {},
          query: "a haiku about rain",
          response_mode: "blocking",
          user: "agent",
        }),
      });
      expect(response.status).toBe(200);
      const answer = await response.json();
      // Paid into the payer's balance, then paid from it exactly as a wallet call (decision 070).
      expect(answer.metadata.usage).toMatchObject({ charged_cents: PRICE_CENTS, paid_by: "wallet" });
      const settlement = decodePaymentResponseHeader(response.headers.get("payment-response") ?? "");
      expect(settlement).toMatchObject({ success: true, network: X402_TEST_NETWORK });
      // One transfer of exactly the price, to the receiving address.
      expect(facilitator.transfers.slice(transfersBefore)).toEqual([
        expect.objectContaining({ from: agent.address, to: X402_TEST_PAY_TO, value: BigInt(PRICE_UNITS) }),
      ]);
      expect(settlement.transaction).toBe(facilitator.transfers.at(-1)?.transaction);
      const payment = await paymentOf(response.headers.get("promptmint-payment-id"));
      expect(payment).toMatchObject({
        status: "credited",
        amountMicros: 70_000,
        txHash: settlement.transaction,
        invocationId: null,
      });
      const invocation = await invocationOf(answer.id);
      expect(invocation).toMatchObject({
        status: "success",
        chargedCents: PRICE_CENTS,
        feeMicros: 7_000,
        callerUserId: payment?.payerUserId,
      });
      // Paid in, then spent: nothing left on the balance once the lease has posted what it spent.
      await expect.poll(() => balanceOf(payment?.payerUserId ?? "")).toBe(0);
      // The same rules as a wallet-paid call: the fee (PLATFORM_FEE_PERCENT 10) and the model cost
      // of the platform's keys come out of the price; the creator earns the rest.
      const deducted = Number(invocation?.modelCostDeductedMicros);
      expect(deducted).toBeGreaterThan(0);
      expect(deducted).toBe(Number(invocation?.modelCostMicros));
      // The payer's lease closes once idle, and posts the call's split (decision 020).
      await expect
        .poll(async () => (await earningsMicros()) - before, { timeout: 10_000 })
        .toBe(70_000 - 7_000 - deducted);
      await expectReconciled(db(), "after a Dify call paid by x402");
    });

    it("OpenAI chat.completions (openai SDK, fetch: wrapFetchWithPayment) → works, charged once", async () => {
      const client = new OpenAI({
        apiKey: "unused",
        baseURL: `${server.baseUrl}/api/v1`,
        maxRetries: 0,
        // No Promptmint credentials: the agent pays per call instead.
        defaultHeaders: { authorization: null },
        fetch: agent.fetch,
      });
      const before = facilitator.transfers.length;
      const completion = await client.chat.completions.create({
        model: slugs.haiku,
        messages: [{ role: "user", content: "a haiku about snow" }],
      });
      expect(completion.choices[0]?.message.content).toBeTruthy();
      expect(completion.usage).toMatchObject({ charged_cents: PRICE_CENTS, paid_by: "wallet" });
      expect(facilitator.transfers.length - before).toBe(1);
      const id = completion.id
        .replace(/^chatcmpl-/, "")
        .replace(/(.{8})(.{4})(.{4})(.{4})(.{12})/, "$1-$2-$3-$4-$5");
      expect(await invocationOf(id)).toMatchObject({ status: "success", chargedCents: PRICE_CENTS });
      await expectReconciled(db(), "after an OpenAI call paid by x402");
    });

    it("OpenAI responses.create (x402, no account) → works, charged once, kept for its payer, continued with its balance key", async () => {
      const client = new OpenAI({
        apiKey: "unused",
        baseURL: `${server.baseUrl}/api/v1`,
        maxRetries: 0,
        defaultHeaders: { authorization: null },
        fetch: agent.fetch,
      });
      const before = facilitator.transfers.length;
      // A budget of three calls, and the key to spend the rest of it without paying again.
      const { data: response, response: raw } = await client.responses
        .create(
          { model: slugs.haiku, input: "a haiku about ice" },
          {
            headers: {
              "promptmint-prepay-cents": String(3 * PRICE_CENTS),
              "promptmint-balance-key": "issue",
            },
          },
        )
        .withResponse();
      expect(response.usage).toMatchObject({ charged_cents: PRICE_CENTS, paid_by: "wallet" });
      // Kept for its payer (decision 054): the payer's account-less user is who paid.
      expect(response).toMatchObject({ store: true });
      expect(facilitator.transfers.length - before).toBe(1);
      expect(facilitator.transfers.at(-1)?.value).toBe(BigInt(3 * PRICE_CENTS * 10_000));
      // Without credentials a continuation cannot say whose it is: refused, nothing paid.
      await expect(
        client.responses.create({ model: slugs.haiku, input: "more", previous_response_id: response.id }),
      ).rejects.toMatchObject({ status: 400, param: "previous_response_id" });
      expect(facilitator.transfers.length - before).toBe(1);
      const balanceKey = raw.headers.get("promptmint-balance-key") ?? "";
      expect(balanceKey).toMatch(/^pm_/);
      const withKey = new OpenAI({ apiKey: balanceKey, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });
      const next = await withKey.responses.create({
        model: slugs.haiku,
        input: "and one about frost",
        previous_response_id: response.id,
      });
      expect(next.usage).toMatchObject({ charged_cents: PRICE_CENTS, paid_by: "wallet" });
      // Paid from the budget: no new transfer, one call's price left.
      expect(facilitator.transfers.length - before).toBe(1);
      const balance = await fetch(`${server.baseUrl}/api/v1/agents/balance`, {
        headers: { authorization: `Bearer ${balanceKey}` },
      });
      expect(await balance.json()).toMatchObject({ rail: "x402", balance_micros: PRICE_CENTS * 10_000 });
      await expectReconciled(db(), "after a Responses call paid by x402");
    });

    it("OpenAI chat.completions streamed → works, token by token (paid before it starts), charged once", async () => {
      const client = new OpenAI({
        apiKey: "unused",
        baseURL: `${server.baseUrl}/api/v1`,
        maxRetries: 0,
        defaultHeaders: { authorization: null },
        fetch: agent.fetch,
      });
      const before = facilitator.transfers.length;
      // The model sends one word, then waits until that word reached this client (firstWordGate).
      const gate = firstWordGate();
      vendor.set({ kind: "echo", restAfter: gate.rest });
      const arrivals: number[] = [];
      let text = "";
      let usage: unknown;
      try {
        const stream = await client.chat.completions.create({
          model: slugs.haiku,
          messages: [{ role: "user", content: "stream a haiku word by word" }],
          stream: true,
          stream_options: { include_usage: true },
        });
        for await (const chunk of stream) {
          const piece = chunk.choices[0]?.delta?.content ?? "";
          if (piece) {
            arrivals.push(performance.now());
            gate.arrived();
          }
          text += piece;
          if (chunk.usage) usage = chunk.usage;
        }
      } finally {
        vendor.set({ kind: "echo" });
      }
      expect(text).toContain("stream a haiku");
      expect(arrivals.length).toBeGreaterThanOrEqual(4);
      // The first word came before the model wrote the rest: passed on as it came.
      expect(gate.heldBack()).toBe(false);
      expect(usage).toMatchObject({ charged_cents: PRICE_CENTS, paid_by: "wallet" });
      expect(facilitator.transfers.length - before).toBe(1);
      await expectReconciled(db(), "after a streamed call paid by x402");
    });

    it("the payer's wallet → works, one credit per payment", async () => {
      const [payment] = await paymentsOf(agent.address);
      const rows = await db()
        .select({ kind: ledgerAccounts.kind })
        .from(ledgerAccounts)
        .where(eq(ledgerAccounts.ownerId, payment?.payerUserId ?? ""));
      expect(rows.map((row) => row.kind)).toContain("wallet");
      const credited = (await paymentsOf(agent.address)).filter((row) => row.status === "credited");
      expect(credited.length).toBe(facilitator.transfers.filter((t) => t.from === agent.address).length);
    });
    // MCP: agents pay with x402's MCP binding on their own endpoints (mcp/mcp-agents.compat.test.ts,
    // decision 074); the OAuth endpoints answer 401 without credentials whatever x402 says.
  });

  describe("never paid", () => {
    it("a replayed PAYMENT-SIGNATURE → refused 402 payment_already_used", async () => {
      let signature = "";
      const recording = x402Wallet();
      facilitator.mint(recording.address, 1_000_000n);
      const url = `${server.baseUrl}/api/app/${slugs.haiku}/completion-messages`;
      const body = JSON.stringify({ inputs: {}, query: "once", response_mode: "blocking", user: "agent" });
      const first = await recording.fetch(
        new Request(url, { method: "POST", headers: { "content-type": "application/json" }, body }),
      );
      expect(first.status).toBe(200);
      const [payment] = await paymentsOf(recording.address);
      signature = Buffer.from(JSON.stringify(payment?.payload)).toString("base64");
      const transfers = facilitator.transfers.length;
      const replay = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "payment-signature": signature },
        body,
      });
      expect(replay.status).toBe(402);
      const refused = await replay.json();
      expect(refused.message).toContain("payment_already_used");
      expect(decodePaymentRequiredHeader(replay.headers.get("payment-required") ?? "").error).toContain(
        "payment_already_used",
      );
      expect(facilitator.transfers.length).toBe(transfers);
      expect(await paymentsOf(recording.address)).toHaveLength(1);
      await expectReconciled(db(), "after a replay");
    });

    it("an upstream 500 after payment → works, 502 with the money kept on the payer's balance, and a refund request returns it", async () => {
      const failing = x402Wallet();
      facilitator.mint(failing.address, 1_000_000n);
      vendor.set({ kind: "status", status: 500, message: "the model is down" });
      let balanceKey = "";
      try {
        const response = await failing.fetch(`${server.baseUrl}/api/app/${slugs.haiku}/completion-messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "promptmint-balance-key": "issue" },
          body: JSON.stringify({ inputs: {}, query: "fail", response_mode: "blocking", user: "agent" }),
        });
        expect(response.status).toBe(502);
        balanceKey = response.headers.get("promptmint-balance-key") ?? "";
      } finally {
        vendor.set({ kind: "echo" });
      }
      // Paid in (the money moved), the call failed and charged nothing: it is on the balance.
      expect(facilitator.transfers.filter((t) => t.from === failing.address)).toHaveLength(1);
      const [payment] = await paymentsOf(failing.address);
      expect(payment).toMatchObject({ status: "credited" });
      const payer = payment?.payerUserId ?? "";
      const failed = await db().select().from(invocations).where(eq(invocations.callerUserId, payer));
      expect(failed).toEqual([expect.objectContaining({ status: "error", chargedCents: 0 })]);
      await expect.poll(() => balanceOf(payer)).toBe(PRICE_CENTS * 10_000);
      await expectReconciled(db(), "after a failed call paid by x402");
      // Asked back: x402 has no refund, so it is owed to the address, out of the balance at once.
      const refund = await fetch(`${server.baseUrl}/api/v1/agents/refund`, {
        method: "POST",
        headers: { authorization: `Bearer ${balanceKey}` },
      });
      expect(await refund.json()).toMatchObject({ status: "owed", amount_micros: PRICE_CENTS * 10_000 });
      expect(refund.status).toBe(200);
      expect(await balanceOf(payer)).toBe(0);
      // Asked again: nothing is left to give twice.
      const again = await fetch(`${server.baseUrl}/api/v1/agents/refund`, {
        method: "POST",
        headers: { authorization: `Bearer ${balanceKey}` },
      });
      expect(await again.json()).toMatchObject({ status: "nothing", amount_micros: 0 });
      await expectReconciled(db(), "after an x402 refund");
    });

    it("an account's key on the agents' refund → refused 403, its wallet is not refunded through the API", async () => {
      const { body: key } = await creator.api("POST", "/api/keys/", { body: { name: "not an agent" } });
      const refund = await fetch(`${server.baseUrl}/api/v1/agents/refund`, {
        method: "POST",
        headers: { authorization: `Bearer ${key.key}` },
      });
      expect(await refund.json()).toMatchObject({ code: "forbidden" });
      expect(refund.status).toBe(403);
    });

    it("a balance key asked by a payer that holds as many as it may → works, the paid call answered and the reason in promptmint-balance-key-refused", async () => {
      const keyed = x402Wallet();
      facilitator.mint(keyed.address, 1_000_000n);
      const send = () =>
        keyed.fetch(`${server.baseUrl}/api/app/${slugs.haiku}/completion-messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "promptmint-balance-key": "issue" },
          body: JSON.stringify({ inputs: {}, query: "keys", response_mode: "blocking", user: "agent" }),
        });
      const first = await send();
      expect(first.headers.get("promptmint-balance-key")).toMatch(/^pm_/);
      const [payment] = await paymentsOf(keyed.address);
      const payer = payment?.payerUserId ?? "";
      await db()
        .insert(apiKeys)
        .values(
          Array.from({ length: 49 }, (_, i) => ({
            userId: payer,
            name: `k${i}`,
            prefix: "pm_x",
            keyHash: `h${i}${payer}`,
          })),
        );
      const refused = await send();
      expect(refused.status).toBe(200);
      expect(refused.headers.get("promptmint-balance-key")).toBeNull();
      expect(refused.headers.get("promptmint-balance-key-refused")).toMatch(/active keys/);
      expect((await refused.json()).metadata.usage).toMatchObject({ charged_cents: PRICE_CENTS });
      await expectReconciled(db(), "after a refused balance key");
    });

    it("a budget asked wrongly → refused 400 promptmint-prepay-cents, nothing paid", async () => {
      const response = await fetch(`${server.baseUrl}/api/app/${slugs.haiku}/completion-messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "promptmint-prepay-cents": "lots" },
        body: JSON.stringify({ inputs: {}, query: "x", response_mode: "blocking", user: "agent" }),
      });
      expect(response.status).toBe(400);
      expect((await response.json()).fields).toHaveProperty("promptmint-prepay-cents");
    });

    it("a settlement the facilitator refuses → refused 402 before the call runs, nothing charged", async () => {
      const refused = x402Wallet();
      facilitator.mint(refused.address, 1_000_000n);
      facilitator.setSettlement("refuse");
      try {
        const response = await refused.fetch(`${server.baseUrl}/api/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: slugs.haiku, messages: [{ role: "user", content: "hi" }] }),
        });
        expect(response.status).toBe(402);
        const body = await response.json();
        expect(body.error).toMatchObject({ type: "insufficient_quota", code: "payment_required" });
        expect(body.error.message).toContain("could not be settled");
        expect(body.choices).toBeUndefined();
      } finally {
        facilitator.setSettlement("settle");
      }
      const [payment] = await paymentsOf(refused.address);
      expect(payment).toMatchObject({ status: "failed" });
      // The call never ran: nothing was recorded for its payer.
      const calls = await db()
        .select()
        .from(invocations)
        .where(eq(invocations.callerUserId, payment?.payerUserId ?? ""));
      expect(calls).toHaveLength(0);
      await expectReconciled(db(), "after a refused settlement");
    });

    it("an Idempotency-Key retried with a new payment → works, the first answer; the new payment is kept on the balance", async () => {
      const retrying = x402Wallet();
      facilitator.mint(retrying.address, 1_000_000n);
      const send = () =>
        retrying.fetch(`${server.baseUrl}/api/app/${slugs.haiku}/completion-messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": "agent-retry-1" },
          body: JSON.stringify({ inputs: {}, query: "retry me", response_mode: "blocking", user: "agent" }),
        });
      const first = await send();
      expect(first.status).toBe(200);
      const firstBody = await first.json();
      const again = await send();
      expect(again.status).toBe(200);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect((await again.json()).id).toBe(firstBody.id);
      // The retry's payment was paid in before the key was looked up: it stays on the balance.
      expect(facilitator.transfers.filter((t) => t.from === retrying.address)).toHaveLength(2);
      const payments = await paymentsOf(retrying.address);
      expect(payments.map((row) => row.status)).toEqual(["credited", "credited"]);
      await expect.poll(() => balanceOf(payments[0]?.payerUserId ?? "")).toBe(PRICE_CENTS * 10_000);
      await expectReconciled(db(), "after an Idempotency-Key retry paid by x402");
    });

    it("payment-identifier: a retry naming the same id with a new authorization → works, not paid again, answered once", async () => {
      const retrying = x402Wallet();
      facilitator.mint(retrying.address, 1_000_000n);
      const url = `${server.baseUrl}/api/app/${slugs.haiku}/completion-messages`;
      const body = JSON.stringify({
        inputs: {},
        query: "once only",
        response_mode: "blocking",
        user: "agent",
      });
      const challenge = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
      expect(required.extensions).toHaveProperty("payment-identifier");
      const paymentId = "pay_agent_retry_0001";
      const signed = async () => {
        const payload = await retrying.client.createPaymentPayload(required);
        payload.extensions = { "payment-identifier": { info: { required: false, id: paymentId } } };
        return Buffer.from(JSON.stringify(payload)).toString("base64");
      };
      const send = async () =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", "payment-signature": await signed() },
          body,
        });
      const first = await send();
      expect(first.status).toBe(200);
      const firstBody = await first.json();
      const retry = await send();
      expect(retry.status).toBe(200);
      expect(retry.headers.get("promptmint-payment-replayed")).toBe("true");
      expect((await retry.json()).id).toBe(firstBody.id);
      // One transfer, one payment row: the retry's authorization was never settled.
      expect(facilitator.transfers.filter((t) => t.from === retrying.address)).toHaveLength(1);
      expect(await paymentsOf(retrying.address)).toHaveLength(1);
      // A malformed id is refused by name, not ignored.
      const bad = await retrying.client.createPaymentPayload(required);
      bad.extensions = { "payment-identifier": { info: { required: false, id: "short" } } };
      const refused = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "payment-signature": Buffer.from(JSON.stringify(bad)).toString("base64"),
        },
        body,
      });
      expect(refused.status).toBe(400);
      expect((await refused.json()).fields).toHaveProperty("payment-identifier");
      await expectReconciled(db(), "after a payment-identifier retry");
    });

    it("a private app → 404, like a missing one (no challenge, no payment)", async () => {
      // Live and priced (on the sandbox model, which 3¢ covers): only its visibility hides it.
      const hidden = await createPromptApp(
        creator,
        {
          name: "Hidden",
          description: "d",
          interaction_mode: "completion",
          visibility: "private",
          price_cents: 3,
        },
        { model: "sandbox" },
      );
      const live = await creator.api("PATCH", `/api/app/${hidden.slug}/update_status/`, {
        body: { status: "live" },
      });
      expect(live.status).toBe(200);
      const response = await agent.fetch(`${server.baseUrl}/api/app/${hidden.slug}/completion-messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ inputs: {}, query: "x", response_mode: "blocking", user: "agent" }),
      });
      expect(response.status).toBe(404);
      expect(response.headers.get("payment-required")).toBeNull();
    });

    it("a payment for another amount → refused 402 requirements_mismatch, before the call runs", async () => {
      const cheap = x402Wallet();
      facilitator.mint(cheap.address, 1_000_000n);
      const url = `${server.baseUrl}/api/app/${slugs.haiku}/completion-messages`;
      const body = JSON.stringify({ inputs: {}, query: "cheap", response_mode: "blocking", user: "agent" });
      const challenge = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
      const lowered = { ...required, accepts: required.accepts.map((a) => ({ ...a, amount: "1" })) };
      const payload = await cheap.client.createPaymentPayload(lowered);
      const vendorCalls = vendor.requests.length;
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "payment-signature": Buffer.from(JSON.stringify(payload)).toString("base64"),
        },
        body,
      });
      expect(response.status).toBe(402);
      expect((await response.json()).message).toContain("requirements_mismatch");
      expect(vendor.requests.length).toBe(vendorCalls);
      expect(await paymentsOf(cheap.address)).toHaveLength(0);
    });
  });
});
