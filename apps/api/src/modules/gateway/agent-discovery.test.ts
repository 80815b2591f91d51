import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentRequiredHeader, decodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import {
  type DiscoveryExtension,
  extractDiscoveryInfo,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
} from "@x402/extensions/bazaar";
import { eq } from "drizzle-orm";
import { validate as validateMppDiscovery } from "mppx/discovery";
import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { invocations } from "../../db/schema/index.ts";
import { fundWallet } from "../../test/caller.ts";
import { sseEvents } from "../../test/dify-world.ts";
import { useCaller, useX402Server } from "../../test/use-test-server.ts";
import {
  X402_TEST_ASSET,
  X402_TEST_NETWORK,
  X402_TEST_PAY_TO,
  x402Wallet,
} from "../../test/x402-facilitator.ts";
import { type Jwks, verifyReceipt } from "../billing/call-receipts-signing.ts";

// Discovery and signed receipts (issue 40 item 4, docs/decisions/073), on a real server with x402
// on (the loopback facilitator checks the signatures): the well-known documents list public paid
// apps and nothing private, the OpenAPI document carries x-payment-info, a 402 declares the bazaar
// extension x402's own validator accepts, and paid answers carry receipts that verify against the
// published keys — and stop verifying when touched.

const PRICE_CENTS = 7;
const { server, facilitator } = useX402Server();
const creator = useCaller(server, "Discovery Seller");
const buyer = useCaller(server, "Receipt Buyer");
const agent = x402Wallet();
const slugs = { public: "", chat: "", private: "", draft: "" };

async function createApp(
  name: string,
  options: { mode?: "completion" | "chat"; visibility?: string; live?: boolean } = {},
) {
  const { body: app, status } = await creator.api("POST", "/api/app/", {
    body: {
      name,
      description: `${name}, as a service`,
      interaction_mode: options.mode ?? "completion",
      visibility: options.visibility ?? "public",
      price_cents: PRICE_CENTS,
    },
  });
  expect(status, JSON.stringify(app)).toBe(201);
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  if (options.live === false) return app.slug as string;
  const live = await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, {
    body: { status: "live" },
  });
  expect(live.status).toBe(200);
  return app.slug as string;
}

beforeAll(async () => {
  slugs.public = await createApp("Discoverable Haiku");
  slugs.chat = await createApp("Discoverable Chat", { mode: "chat" });
  slugs.private = await createApp("Hidden Private", { visibility: "private" });
  slugs.draft = await createApp("Draft Thing", { live: false });
  facilitator.mint(agent.address, 1_000_000n);
});

const jwks = async (): Promise<Jwks> => {
  const response = await fetch(`${server.baseUrl}/.well-known/promptmint-receipt-keys.json`);
  expect(response.status).toBe(200);
  return (await response.json()) as Jwks;
};

async function appId(slug: string): Promise<string> {
  const { body } = await creator.api("GET", `/api/app/${slug}/`);
  return body.id as string;
}

describe("well-known documents", () => {
  it("/.well-known/promptmint-agents.json → lists the public paid apps with price, endpoints, rails and the receipts' keys; no private or draft app", async () => {
    const response = await fetch(`${server.baseUrl}/.well-known/promptmint-agents.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toMatch(/public, max-age=\d+/);
    const doc = await response.json();
    const listed = doc.apps.map((app: { slug: string }) => app.slug);
    expect(listed).toEqual(expect.arrayContaining([slugs.public, slugs.chat]));
    expect(listed).not.toContain(slugs.private);
    expect(listed).not.toContain(slugs.draft);
    const haiku = doc.apps.find((app: { slug: string }) => app.slug === slugs.public);
    expect(haiku).toMatchObject({
      name: "Discoverable Haiku",
      description: "Discoverable Haiku, as a service",
      price: { model: "per_call", cents: PRICE_CENTS, amount: "0.07", currency: "USD", x402_amount: "70000" },
    });
    const kinds = haiku.endpoints.map((endpoint: { kind: string }) => endpoint.kind);
    expect(kinds).toEqual(["dify-completion", "openai-chat", "openai-responses", "mcp", "mcp-catalogue"]);
    expect(haiku.endpoints[0].url).toBe(`${server.baseUrl}/api/app/${slugs.public}/completion-messages`);
    expect(haiku.endpoints[1].example).toMatchObject({ model: slugs.public });
    // Agents reach MCP on their own endpoints; the app's own MCP URL asks for credentials (decision 074).
    expect(haiku.endpoints[3].url).toBe(`${server.baseUrl}/api/agents/app/${slugs.public}/mcp`);
    expect(haiku.endpoints[4].url).toBe(`${server.baseUrl}/api/agents/mcp`);
    // A chat app is also reachable through Dify's chat-messages.
    const chat = doc.apps.find((app: { slug: string }) => app.slug === slugs.chat);
    expect(chat.endpoints.map((endpoint: { kind: string }) => endpoint.kind)).toContain("dify-chat");
    expect(doc.rails.x402).toMatchObject({
      network: X402_TEST_NETWORK,
      asset: X402_TEST_ASSET,
      pay_to: X402_TEST_PAY_TO,
      scheme: "exact",
    });
    expect(doc.rails.mpp).toBeNull();
    expect(doc.receipts.jwks_uri).toBe(`${server.baseUrl}/.well-known/promptmint-receipt-keys.json`);
    expect(doc.pagination).toMatchObject({ offset: 0, total: 2, next: null });
    // Nothing of the server's secrets or owners.
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/owner_?id|sealed|secret|facilitator/i);
  });

  it("the well-known documents are open to any origin (no cookies), and answers expose Promptmint-Receipt to browsers", async () => {
    for (const path of [
      "/.well-known/promptmint-agents.json",
      "/.well-known/x402",
      "/.well-known/promptmint-receipt-keys.json",
    ]) {
      const response = await fetch(`${server.baseUrl}${path}`, {
        headers: { origin: "https://agent.example" },
      });
      expect(response.status, path).toBe(200);
      expect(response.headers.get("access-control-allow-origin"), path).toBe("*");
      expect(response.headers.get("access-control-allow-credentials"), path).toBeNull();
    }
    const challenge = await fetch(`${server.baseUrl}/api/app/${slugs.public}/completion-messages`, {
      method: "POST",
      headers: { origin: "https://agent.example", "content-type": "application/json" },
      body: JSON.stringify({ inputs: {}, query: "hi" }),
    });
    expect(challenge.status).toBe(402);
    expect(challenge.headers.get("access-control-expose-headers")).toMatch(/(^|, )promptmint-receipt(,|$)/);
  });

  it("pagination: limit=1 → one app and the next page's URL; limit above the bound → 400", async () => {
    const first = await (await fetch(`${server.baseUrl}/.well-known/promptmint-agents.json?limit=1`)).json();
    expect(first.apps).toHaveLength(1);
    expect(first.pagination.next).toBe(
      `${server.baseUrl}/.well-known/promptmint-agents.json?offset=1&limit=1`,
    );
    const second = await (await fetch(first.pagination.next)).json();
    expect(second.apps).toHaveLength(1);
    expect(second.apps[0].slug).not.toBe(first.apps[0].slug);
    expect(second.pagination.next).toBeNull();
    const tooMany = await fetch(`${server.baseUrl}/.well-known/promptmint-agents.json?limit=1000`);
    expect(tooMany.status).toBe(400);
  });

  it("/.well-known/x402 → x402scan's manifest: the paid resources of public apps only", async () => {
    const response = await fetch(`${server.baseUrl}/.well-known/x402`);
    expect(response.status).toBe(200);
    const doc = await response.json();
    expect(doc.version).toBe(1);
    expect(doc.resources).toContain(`POST /api/app/${slugs.public}/completion-messages`);
    expect(doc.resources).toContain(`POST /api/app/${slugs.chat}/chat-messages`);
    expect(doc.resources).toContain(`POST /api/agents/app/${slugs.public}/mcp`);
    expect(doc.resources.join(" ")).not.toContain(slugs.private);
    expect(doc.resources.join(" ")).not.toContain(slugs.draft);
    expect(doc.instructions).toContain("/.well-known/promptmint-agents.json");
  });

  it("/api/openapi.json → x-payment-info on every paid operation (MPP's discovery validator accepts it), none on free ones", async () => {
    const doc = await (await fetch(`${server.baseUrl}/api/openapi.json`)).json();
    const paid = [
      "/api/app/{slug}/completion-messages",
      "/api/app/{slug}/chat-messages",
      "/api/app/{slug}/workflows/run",
      "/api/v1/chat/completions",
      "/api/v1/responses",
      "/api/agents/app/{slug}/mcp",
      "/api/agents/mcp",
    ];
    // The OAuth-protected MCP endpoints take no agent payment (decision 074).
    expect(doc.paths["/api/app/{slug}/mcp"]?.post).toBeDefined();
    expect(doc.paths["/api/app/{slug}/mcp"].post["x-payment-info"]).toBeUndefined();
    expect(doc.paths["/api/mcp"].post["x-payment-info"]).toBeUndefined();
    for (const path of paid) {
      const info = doc.paths[path]?.post?.["x-payment-info"];
      expect(info, path).toMatchObject({ price_model: "per_call" });
      expect(info.pricing).toContain("app's own price");
      expect(info.discovery).toBe(`${server.baseUrl}/.well-known/promptmint-agents.json`);
      expect(info.offers).toEqual([
        expect.objectContaining({
          method: "x402",
          intent: "charge",
          amount: null,
          currency: "USD",
          network: X402_TEST_NETWORK,
          asset: X402_TEST_ASSET,
          pay_to: X402_TEST_PAY_TO,
        }),
      ]);
      expect(doc.paths[path].post.responses).toHaveProperty("402");
    }
    expect(doc.paths["/api/app/{slug}/parameters"]?.get?.["x-payment-info"]).toBeUndefined();
    const errors = validateMppDiscovery(doc).filter((problem) => problem.severity === "error");
    expect(errors, JSON.stringify(errors.slice(0, 5))).toEqual([]);
  });
});

describe("the 402's bazaar extension", () => {
  const decodeChallenge = (response: Response) => {
    expect(response.status).toBe(402);
    return decodePaymentRequiredHeader(response.headers.get("payment-required") ?? "");
  };

  it("Dify completion-messages → declares POST with its JSON body; x402's validator and extractor accept it", async () => {
    const url = `${server.baseUrl}/api/app/${slugs.public}/completion-messages`;
    const required = decodeChallenge(
      await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ inputs: {}, query: "hi", response_mode: "blocking", user: "agent" }),
      }),
    );
    const bazaar = required.extensions?.bazaar as DiscoveryExtension;
    expect(bazaar).toBeDefined();
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
    expect(validateDiscoveryExtensionSpec(bazaar as unknown as Record<string, unknown>).valid).toBe(true);
    expect(bazaar.info.input).toMatchObject({ type: "http", method: "POST", bodyType: "json" });
    // What a facilitator does with the payment that echoes it: the resource and its input, indexed.
    const discovered = extractDiscoveryInfo(
      {
        x402Version: 2,
        resource: required.resource,
        accepted: required.accepts[0] as PaymentRequirements,
        payload: {},
        extensions: required.extensions,
      },
      required.accepts[0] as PaymentRequirements,
    );
    expect(discovered).toMatchObject({ resourceUrl: url, method: "POST", x402Version: 2 });
    expect(discovered?.discoveryInfo.input).toMatchObject({ body: { inputs: {}, query: "Hello" } });
  });

  it("OpenAI chat/completions → the body names the app's slug as model", async () => {
    const required = decodeChallenge(
      await fetch(`${server.baseUrl}/api/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: slugs.public, messages: [{ role: "user", content: "hi" }] }),
      }),
    );
    const bazaar = required.extensions?.bazaar as DiscoveryExtension;
    expect(validateDiscoveryExtension(bazaar)).toEqual({ valid: true });
    expect(bazaar.info.input).toMatchObject({ method: "POST", body: { model: slugs.public } });
  });

  it("MCP tools/call (the agents' app server, the agents' catalogue) → declares the MCP tool; x402's validators accept it", async () => {
    // x402 over MCP is on the agents' endpoints, its requirements in the tool result (decision 074).
    const call = async (path: string, name: string, args: Record<string, unknown>) => {
      const response = await fetch(`${server.baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name, arguments: args },
        }),
      });
      expect(response.status).toBe(200);
      const { result } = await response.json();
      expect(result.isError).toBe(true);
      return result.structuredContent as PaymentRequired;
    };
    const own = await call(`/api/v1/agents/app/${slugs.public}/mcp`, slugs.public, { query: "hi" });
    const ownBazaar = own.extensions?.bazaar as DiscoveryExtension;
    expect(validateDiscoveryExtension(ownBazaar)).toEqual({ valid: true });
    expect(validateDiscoveryExtensionSpec(ownBazaar as unknown as Record<string, unknown>).valid).toBe(true);
    expect(ownBazaar.info.input).toMatchObject({
      type: "mcp",
      toolName: slugs.public,
      transport: "streamable-http",
    });
    const catalogue = await call("/api/v1/agents/mcp", "call_app", { slug: slugs.public, query: "hi" });
    const catalogueBazaar = catalogue.extensions?.bazaar as DiscoveryExtension;
    expect(validateDiscoveryExtension(catalogueBazaar)).toEqual({ valid: true });
    expect(catalogueBazaar.info.input).toMatchObject({ type: "mcp", toolName: "call_app" });
  });

  it("a paid call's PAYMENT-SIGNATURE (from @x402/fetch) echoes it, so the facilitator can index the resource", async () => {
    const response = await agent.fetch(`${server.baseUrl}/api/app/${slugs.public}/completion-messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ inputs: {}, query: "index me", response_mode: "blocking", user: "agent" }),
    });
    expect(response.status).toBe(200);
    const payload = decodePaymentSignatureHeader(agent.lastPayment?.signature ?? "");
    const discovered = extractDiscoveryInfo(payload, payload.accepted);
    expect(discovered).toMatchObject({
      resourceUrl: `${server.baseUrl}/api/app/${slugs.public}/completion-messages`,
      method: "POST",
    });
  });
});

describe("signed receipts", () => {
  it("a blocking Dify call paid by x402 → Promptmint-Receipt verifies with the published keys and names the app, price, payer and invocation", async () => {
    const response = await agent.fetch(`${server.baseUrl}/api/app/${slugs.public}/completion-messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        inputs: {},
        query: "a receipt please",
        response_mode: "blocking",
        user: "agent",
      }),
    });
    expect(response.status).toBe(200);
    const answer = await response.json();
    const token = response.headers.get("promptmint-receipt") ?? "";
    expect(token.split(".")).toHaveLength(3);
    const claims = await verifyReceipt(token, await jwks(), { issuer: server.baseUrl });
    expect(claims).toMatchObject({
      iss: server.baseUrl,
      app: { id: await appId(slugs.public), slug: slugs.public },
      price_cents: PRICE_CENTS,
      charged_cents: PRICE_CENTS,
      currency: "USD",
      paid_by: "x402",
      payer: { label: `x402:${X402_TEST_NETWORK}:${agent.address.toLowerCase()}` },
      invocation_id: answer.message_id,
      jti: answer.message_id,
    });
    expect(Math.abs(claims.iat - Date.now() / 1000)).toBeLessThan(60);
    // The invocation it names is the call's, paid by the payer it names.
    const [invocation] = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.id, claims.invocation_id));
    expect(invocation).toMatchObject({
      status: "success",
      chargedCents: PRICE_CENTS,
      callerUserId: claims.payer.user_id,
    });
    // The body's usage carries the same receipt.
    expect(answer.metadata.usage.receipt).toBe(token);
  });

  it("a tampered receipt (a cheaper price, or another invocation) → does not verify", async () => {
    const response = await agent.fetch(`${server.baseUrl}/api/app/${slugs.public}/completion-messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ inputs: {}, query: "tamper", response_mode: "blocking", user: "agent" }),
    });
    const token = response.headers.get("promptmint-receipt") ?? "";
    const keys = await jwks();
    const [header, payload, signature] = token.split(".");
    const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString());
    for (const change of [{ charged_cents: 1 }, { invocation_id: crypto.randomUUID() }]) {
      const forged = Buffer.from(JSON.stringify({ ...claims, ...change })).toString("base64url");
      await expect(verifyReceipt(`${header}.${forged}.${signature}`, keys)).rejects.toThrow();
    }
    // A signature flipped by one character.
    const flipped = `${signature?.[0] === "A" ? "B" : "A"}${signature?.slice(1)}`;
    await expect(verifyReceipt(`${header}.${payload}.${flipped}`, keys)).rejects.toThrow();
    await expect(verifyReceipt(token, keys)).resolves.toMatchObject({ charged_cents: PRICE_CENTS });
  });

  it("an OpenAI stream paid by x402 → its usage chunk (the last event with content) carries the receipt", async () => {
    const client = new OpenAI({
      apiKey: "unused",
      baseURL: `${server.baseUrl}/api/v1`,
      maxRetries: 0,
      defaultHeaders: { authorization: null },
      fetch: agent.fetch,
    });
    const stream = await client.chat.completions.create({
      model: slugs.public,
      messages: [{ role: "user", content: "stream with a receipt" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: { receipt?: string; charged_cents?: number } | undefined;
    let id = "";
    for await (const chunk of stream) {
      id = chunk.id;
      if (chunk.usage) usage = chunk.usage as typeof usage;
    }
    expect(usage?.charged_cents).toBe(PRICE_CENTS);
    const claims = await verifyReceipt(usage?.receipt ?? "", await jwks());
    expect(claims).toMatchObject({
      app: { slug: slugs.public },
      paid_by: "x402",
      charged_cents: PRICE_CENTS,
    });
    expect(id).toContain(claims.invocation_id.replaceAll("-", ""));
  });

  it("a Dify stream paid by x402 → message_end's usage carries the receipt", async () => {
    const response = await agent.fetch(`${server.baseUrl}/api/app/${slugs.chat}/chat-messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ inputs: {}, query: "stream it", response_mode: "streaming", user: "agent" }),
    });
    expect(response.status).toBe(200);
    const events = sseEvents(await response.text());
    const end = events.find((event) => event.event === "message_end");
    expect(end).toBeDefined();
    const claims = await verifyReceipt(end?.metadata.usage.receipt ?? "", await jwks());
    expect(claims).toMatchObject({
      app: { slug: slugs.chat },
      paid_by: "x402",
      invocation_id: end?.message_id,
    });
  });

  it("MCP tools/call paid by x402 → the result's _meta carries the receipt", async () => {
    // x402 over MCP: the agents' endpoint and x402's MCP binding (decision 074).
    const client = new Client({ name: "receipt-agent", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/api/v1/agents/app/${slugs.public}/mcp`)),
    );
    const unpaid = (await client.callTool({
      name: slugs.public,
      arguments: { query: "mcp receipt" },
    })) as CallToolResult;
    const payment = await agent.client.createPaymentPayload(
      unpaid.structuredContent as unknown as PaymentRequired,
    );
    const result = (await client.callTool({
      name: slugs.public,
      arguments: { query: "mcp receipt" },
      _meta: { "x402/payment": payment },
    })) as CallToolResult;
    await client.close();
    expect(result.isError).toBeFalsy();
    const token = result._meta?.["promptmint/receipt"] as string;
    const claims = await verifyReceipt(token, await jwks());
    const charge = result._meta?.["promptmint/charge"] as { message_id: string };
    expect(claims).toMatchObject({
      app: { slug: slugs.public },
      paid_by: "x402",
      invocation_id: charge.message_id,
    });
  });

  it("a call paid from a wallet (signed in) → the receipt says wallet and names the buyer's user id, no label", async () => {
    await fundWallet(buyer, 500);
    const response = await buyer.api("POST", `/api/app/${slugs.public}/completion-messages`, {
      body: { inputs: {}, query: "from my wallet", response_mode: "blocking", user: "buyer" },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const claims = await verifyReceipt(response.headers.get("promptmint-receipt") ?? "", await jwks());
    expect(claims).toMatchObject({
      paid_by: "wallet",
      charged_cents: PRICE_CENTS,
      price_cents: PRICE_CENTS,
      invocation_id: response.body.message_id,
    });
    const [invocation] = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.id, claims.invocation_id));
    expect(claims.payer.user_id).toBe(invocation?.callerUserId);
    expect(claims.payer).not.toHaveProperty("label");
  });

  it("an Idempotency-Key replay → the same receipt again (header and body), not a second one", async () => {
    const send = () =>
      buyer.api("POST", `/api/app/${slugs.public}/completion-messages`, {
        body: { inputs: {}, query: "once", response_mode: "blocking", user: "buyer" },
        headers: { "idempotency-key": `receipt-${crypto.randomUUID()}` },
      });
    const key = `receipt-${crypto.randomUUID()}`;
    const first = await buyer.api("POST", `/api/app/${slugs.public}/completion-messages`, {
      body: { inputs: {}, query: "once", response_mode: "blocking", user: "buyer" },
      headers: { "idempotency-key": key },
    });
    const again = await buyer.api("POST", `/api/app/${slugs.public}/completion-messages`, {
      body: { inputs: {}, query: "once", response_mode: "blocking", user: "buyer" },
      headers: { "idempotency-key": key },
    });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const token = first.headers.get("promptmint-receipt");
    expect(token).toBeTruthy();
    expect(again.headers.get("promptmint-receipt")).toBe(token);
    expect(again.body.metadata.usage.receipt).toBe(token);
    // Another key is another call, with a receipt of its own.
    const other = await send();
    expect(other.headers.get("promptmint-receipt")).not.toBe(token);
  });

  it("a Responses stream paid by x402 → response.completed's usage carries the receipt", async () => {
    const response = await agent.fetch(`${server.baseUrl}/api/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: slugs.public, input: "stream a response", stream: true }),
    });
    expect(response.status).toBe(200);
    const events = (await response.text())
      .split("\n\n")
      .flatMap((block) => block.split("\n").filter((line) => line.startsWith("data: ")))
      .map((line) => JSON.parse(line.slice(6)));
    const completed = events.find((event) => event.type === "response.completed");
    expect(completed).toBeDefined();
    const claims = await verifyReceipt(completed?.response.usage.receipt ?? "", await jwks());
    expect(claims).toMatchObject({
      app: { slug: slugs.public },
      paid_by: "x402",
      charged_cents: PRICE_CENTS,
    });
  });

  it("the owner's own call (charged nothing) → no receipt", async () => {
    // The owner's call is free, its model cost is the creator's: their wallet must cover it.
    await fundWallet(creator, 500);
    const response = await creator.api("POST", `/api/app/${slugs.public}/completion-messages`, {
      body: { inputs: {}, query: "mine", response_mode: "blocking", user: "owner" },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.metadata.usage).toMatchObject({ charged_cents: 0, paid_by: "owner" });
    expect(response.headers.get("promptmint-receipt")).toBeNull();
    expect(response.body.metadata.usage.receipt).toBeUndefined();
  });
});
