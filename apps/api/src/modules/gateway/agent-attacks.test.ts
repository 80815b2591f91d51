import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { and, eq, sql } from "drizzle-orm";
import OpenAI from "openai";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { invocations, ledgerAccounts, x402Payments } from "../../db/schema/index.ts";
import { firstWordGate } from "../../test/agent-rails.ts";
import { fundWallet } from "../../test/caller.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useX402Server } from "../../test/use-test-server.ts";
import { x402Wallet } from "../../test/x402-facilitator.ts";
import { ERROR_META_KEY } from "../mcp/call-app.ts";

// Issue 30's mechanisms attacked from outside (helper h2): payments and errors an agent's client
// can send or meet that the compat tests' well-behaved clients never do. Each was a 500, a wrong
// status, a header ignored in silence, or an error shape that differed between blocking and stream.

const PRICE_CENTS = 6;
const { server, vendor, facilitator } = useX402Server();
const creator = useCaller(server, "Attacked Seller");
const consumer = useCaller(server, "Keyed Buyer");
let slug = "";
let key = "";

beforeAll(async () => {
  const app = await createPromptApp(
    creator,
    { name: "Target", interaction_mode: "completion", visibility: "public", price_cents: PRICE_CENTS },
    { model: "gpt-4-turbo" },
  );
  const live = await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, {
    body: { status: "live" },
  });
  expect(live.status).toBe(200);
  slug = app.slug;
  await fundWallet(consumer, 500);
  key = (await consumer.api("POST", "/api/keys/", { body: { name: "attacks" } })).body.key;
});

const db = () => server.database.db;
const difyUrl = () => `${server.baseUrl}/api/app/${slug}/completion-messages`;
const difyBody = JSON.stringify({ inputs: {}, query: "hello", response_mode: "blocking", user: "agent" });
const base64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");

async function difyCall(headers: Record<string, string>) {
  const response = await fetch(difyUrl(), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: difyBody,
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

/** A correctly signed payment for one call of the app, from a funded wallet, not sent yet. */
async function signedPayment(): Promise<{ payload: PaymentPayload; header: string; payer: string }> {
  const agent = x402Wallet();
  facilitator.mint(agent.address, 1_000_000n);
  const challenge = await fetch(difyUrl(), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: difyBody,
  });
  expect(challenge.status).toBe(402);
  const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required") ?? "");
  const payload = await agent.client.createPaymentPayload(required);
  return { payload, header: encodePaymentSignatureHeader(payload), payer: agent.address.toLowerCase() };
}

async function chargedCalls(): Promise<number> {
  const [row] = await db()
    .select({ n: sql<number>`count(*)::int` })
    .from(invocations)
    .where(sql`${invocations.chargedCents} > 0`);
  return row?.n ?? 0;
}

describe("x402 payments a client gets wrong", () => {
  it("a PAYMENT-SIGNATURE that is JSON but not an object (null, a number, a string) → refused 402 invalid_payment, not 500", async () => {
    for (const value of [null, 42, "payment", true]) {
      const { status, headers, body } = await difyCall({ "payment-signature": base64(value) });
      expect(status, `PAYMENT-SIGNATURE ${JSON.stringify(value)}`).toBe(402);
      expect(body.message).toContain("invalid_payment");
      expect(decodePaymentRequiredHeader(headers.get("payment-required") ?? "").error).toContain(
        "invalid_payment",
      );
    }
  });

  it('x402Version as the string "2" → refused 402 unsupported_version saying what was sent', async () => {
    const { status, body } = await difyCall({ "payment-signature": base64({ x402Version: "2" }) });
    expect(status).toBe(402);
    expect(body.message).toContain('x402Version "2" is not accepted: send the number 2');
  });

  it("a matching payment with a malformed authorization → refused 402 naming the field, the facilitator never asked (was a 503 'unavailable')", async () => {
    const { payload } = await signedPayment();
    const authorization = (payload.payload as { authorization: Record<string, string> }).authorization;
    const broken: [string, Record<string, unknown>, string][] = [
      ["no value", { ...payload.payload, authorization: { ...authorization, value: undefined } }, "value"],
      [
        "from not an address",
        { ...payload.payload, authorization: { ...authorization, from: "0xabc" } },
        "from",
      ],
      ["nonce too short", { ...payload.payload, authorization: { ...authorization, nonce: "0x1" } }, "nonce"],
      [
        "validBefore a number",
        { ...payload.payload, authorization: { ...authorization, validBefore: 1 } },
        "validBefore",
      ],
      ["empty signature", { ...payload.payload, signature: "0x" }, "signature"],
      ["authorization a list", { ...payload.payload, authorization: [authorization] }, "authorization"],
    ];
    const verifications = facilitator.requests.verify;
    for (const [what, inner, field] of broken) {
      const { status, body } = await difyCall({
        "payment-signature": base64({ ...payload, payload: inner }),
      });
      expect(status, what).toBe(402);
      expect(body.message, what).toContain("invalid_payment");
      expect(body.message, what).toContain(field);
    }
    expect(facilitator.requests.verify).toBe(verifications);
    const { status } = await difyCall({ "payment-signature": encodePaymentSignatureHeader(payload) });
    expect(status).toBe(200);
  });
});

describe("credentials and an x402 payment on one request", () => {
  it("Dify: an API key beside PAYMENT-SIGNATURE → refused 400 naming payment-signature; nothing charged, the payment still unused", async () => {
    const { header, payer } = await signedPayment();
    const [wallet, charged] = [(await consumer.api("GET", "/api/wallet/")).body, await chargedCalls()];
    const { status, body } = await difyCall({ authorization: `Bearer ${key}`, "payment-signature": header });
    expect(status).toBe(400);
    expect(body).toMatchObject({
      code: "invalid_param",
      status: 400,
      fields: { "payment-signature": expect.any(String) },
    });
    expect(body.message).toContain("not both");
    expect(await chargedCalls()).toBe(charged);
    expect((await consumer.api("GET", "/api/wallet/")).body.balance_micros).toBe(wallet.balance_micros);
    expect(await db().select().from(x402Payments).where(eq(x402Payments.payer, payer))).toHaveLength(0);
    // The payment was never used: the agent can still spend it, once, without credentials.
    const paid = await difyCall({ "payment-signature": header });
    expect(paid.status).toBe(200);
    expect(decodePaymentResponseHeader(paid.headers.get("payment-response") ?? "").success).toBe(true);
    await expectReconciled(db(), "after a refused two-payer request");
  });

  it("openai SDK: an API key and a PAYMENT-SIGNATURE header → BadRequestError, param payment-signature", async () => {
    const { header } = await signedPayment();
    const client = new OpenAI({
      apiKey: key,
      baseURL: `${server.baseUrl}/api/v1`,
      maxRetries: 0,
      defaultHeaders: { "payment-signature": header },
    });
    const charged = await chargedCalls();
    const error = await client.chat.completions
      .create({ model: slug, messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("payment-signature");
    expect(await chargedCalls()).toBe(charged);
  });

  it("MCP SDK: a bearer key and PAYMENT-SIGNATURE on the transport → refused 400 at connect, nothing charged", async () => {
    const { header } = await signedPayment();
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/api/app/${slug}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}`, "payment-signature": header } },
    });
    const client = new Client({ name: "two-payers", version: "1.0.0" });
    const error = await client.connect(transport).catch((e: unknown) => e);
    expect(String(error)).toContain("400");
    expect(String(error)).toContain("PAYMENT-SIGNATURE");
    await client.close();
  });
});

describe("a model provider's 429, in every shape", () => {
  it("openai SDK stream: the error event says rate_limit_exceeded / requests, as the blocking 429 does", async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });
    vendor.set({ kind: "status", status: 429, message: "slow down", headers: { "retry-after": "7" } });
    try {
      const blocking = (await client.chat.completions
        .create({ model: slug, messages: [{ role: "user", content: "hi" }] })
        .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(blocking).toBeInstanceOf(OpenAI.RateLimitError);
      const streamed = await (async () => {
        const stream = await client.chat.completions.create({
          model: slug,
          messages: [{ role: "user", content: "hi" }],
          stream: true,
        });
        for await (const _ of stream);
      })().catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
      expect(streamed).toBeInstanceOf(OpenAI.APIError);
      expect(streamed).toMatchObject({ code: blocking.code, type: blocking.type });
      expect(streamed).toMatchObject({ code: "rate_limit_exceeded", type: "requests" });

      const response = await client.responses.create({ model: slug, input: "hi", stream: true });
      let failed: { error?: { code?: string } | null } | undefined;
      for await (const event of response) if (event.type === "response.failed") failed = event.response;
      expect(failed?.error?.code).toBe("rate_limit_exceeded");
    } finally {
      vendor.set({ kind: "echo" });
    }
  });

  it("MCP SDK tools/call: the tool error's _meta says status 429 and how long to wait, nothing charged", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/api/app/${slug}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    });
    const client = new Client({ name: "rate-limited", version: "1.0.0" });
    await client.connect(transport);
    vendor.set({ kind: "status", status: 429, message: "slow down", headers: { "retry-after": "7" } });
    const charged = await chargedCalls();
    try {
      const result = (await client.callTool({ name: slug, arguments: { query: "hi" } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result._meta?.[ERROR_META_KEY]).toEqual({
        status: 429,
        code: "upstream_rate_limited",
        retry_after_seconds: 7,
      });
      expect(await chargedCalls()).toBe(charged);
    } finally {
      vendor.set({ kind: "echo" });
      await client.close();
    }
  });
});

describe("a URL the router cannot read", () => {
  it("under /api/v1 → 400 in OpenAI's shape (was Fastify's FST_ERR_BAD_URL body); elsewhere {code, message, status}", async () => {
    const openAi = await fetch(`${server.baseUrl}/api/v1/responses/%zz`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(openAi.status).toBe(400);
    const body = await openAi.json();
    expect(body).toEqual({
      error: {
        message: expect.stringContaining("not valid"),
        type: "invalid_request_error",
        param: null,
        code: "invalid_url",
      },
    });
    const dify = await fetch(`${server.baseUrl}/api/app/${slug}/%zz`, { method: "POST" });
    expect(dify.status).toBe(400);
    expect(await dify.json()).toMatchObject({ code: "bad_request", status: 400 });
  });
});

describe("one x402 balance, several streams at once", () => {
  // The facilitator verifies each payment against the payer's funds alone, before any is spent:
  // all three pass verify. Since issue 40 each is settled before its call runs (paid into the
  // payer's balance): the funds settle one, the facilitator refuses the other two (402, before any
  // content), and the one paid call streams as it comes, nothing held back.
  const streamOnce = async (
    agent: ReturnType<typeof x402Wallet>,
    url: string,
    body: unknown,
    gate: ReturnType<typeof firstWordGate>,
  ) => {
    const response = await agent.fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    let text = "";
    let arrived = false;
    const decoder = new TextDecoder();
    for await (const chunk of response.body ?? []) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (!arrived && text.includes("echo")) {
        arrived = true;
        gate.arrived();
      }
    }
    return {
      status: response.status,
      answered: text.includes("secret"),
      text,
      paymentId: response.headers.get("promptmint-payment-id"),
    };
  };

  for (const protocol of ["openai", "dify"] as const) {
    it(`${protocol}: three concurrent streams paid from one call's funds → one settled, credited and streamed word by word; two refused 402 by the facilitator before any content`, async () => {
      const agent = x402Wallet();
      facilitator.mint(agent.address, BigInt(PRICE_CENTS * 10_000)); // USDC's 6 decimals: one call
      const vendorCalls = vendor.requests.length;
      // The model sends one word, then waits until that word reached its client (firstWordGate).
      const gate = firstWordGate();
      vendor.set({ kind: "echo", restAfter: gate.rest });
      const [url, body] =
        protocol === "openai"
          ? [
              `${server.baseUrl}/api/v1/chat/completions`,
              { model: slug, messages: [{ role: "user", content: "secret answer please" }], stream: true },
            ]
          : [difyUrl(), { inputs: {}, query: "secret answer please", response_mode: "streaming", user: "a" }];
      const results = await Promise.all([0, 1, 2].map(() => streamOnce(agent, url, body, gate)));
      vendor.set({ kind: "echo" });

      const answered = results.filter((result) => result.answered);
      expect(answered).toHaveLength(1);
      expect(answered[0]?.status).toBe(200);
      // Streamed as it came: its first word reached the client before the model wrote the rest.
      expect(gate.heldBack()).toBe(false);
      for (const refused of results.filter((result) => !result.answered)) {
        expect(refused.status).toBe(402);
        expect(refused.text).toMatch(/could not be settled/i);
        expect(refused.text).not.toContain("echo");
      }
      // Only the paid call reached the model.
      expect(vendor.requests.length).toBe(vendorCalls + 1);
      const payments = await db()
        .select()
        .from(x402Payments)
        .where(eq(x402Payments.payer, agent.address.toLowerCase()));
      expect(payments.map((payment) => payment.status).sort()).toEqual(["credited", "failed", "failed"]);
      const credited = payments.filter((payment) => payment.status === "credited");
      expect(answered[0]?.paymentId).toBe(credited[0]?.id);
      // What moved on chain is what was credited: one transfer, for the credited payment.
      const transfers = facilitator.transfers.filter(
        (transfer) => transfer.from.toLowerCase() === agent.address.toLowerCase(),
      );
      expect(transfers.map((transfer) => transfer.transaction)).toEqual(
        credited.map((payment) => payment.txHash),
      );
      expect(facilitator.balanceOf(agent.address)).toBe(0n);
      // The one call was charged once, from the payer's balance, as a wallet call.
      const payerUserId = credited[0]?.payerUserId ?? "";
      const calls = await db().select().from(invocations).where(eq(invocations.callerUserId, payerUserId));
      expect(calls.map((call) => [call.status, call.chargedCents])).toEqual([["success", PRICE_CENTS]]);
      await vi.waitFor(async () => expect(await heldOf(payerUserId)).toBe(0), { timeout: 15_000 });
      expect(await walletOf(payerUserId)).toBe(0);
      await expectReconciled(db());
    });
  }
});

/** What a user's wallet and held accounts hold, in µ$. */
async function accountOf(userId: string, kind: "wallet" | "held"): Promise<number> {
  const [row] = await db()
    .select({ balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.ownerId, userId), eq(ledgerAccounts.kind, kind)));
  return Number(row?.balance ?? 0);
}
const walletOf = (userId: string) => accountOf(userId, "wallet");
const heldOf = (userId: string) => accountOf(userId, "held");
