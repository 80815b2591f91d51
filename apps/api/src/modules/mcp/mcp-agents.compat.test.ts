import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { PaymentRequired, SettleResponse } from "@x402/core/types";
import { beforeAll, describe, expect, it } from "vitest";
import { fundWallet } from "../../test/caller.ts";
import { answerAuthorization, MemoryOAuthProvider } from "../../test/mcp-oauth.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useX402Server } from "../../test/use-test-server.ts";
import { X402_TEST_NETWORK, X402_TEST_PAY_TO, x402Wallet } from "../../test/x402-facilitator.ts";
import {
  BALANCE_KEY_META_KEY,
  X402_PAYMENT_META_KEY,
  X402_PAYMENT_RESPONSE_META_KEY,
} from "./agent-payment.ts";
import { CHARGE_META_KEY } from "./call-app.ts";

// Issue 40 item 1, docs/decisions/074-mcp-oauth-beside-x402.md: with x402 on, an app's MCP URL and
// the catalogue stay OAuth protected resources (401 + WWW-Authenticate for every message without
// credentials, so the MCP SDK's OAuth client signs its user in), and agents without an account pay
// per tool call on their own endpoints, with x402's MCP binding (tool-result form).

const PRICE_CENTS = 7;
const PRICE_UNITS = String(PRICE_CENTS * 10_000);
const { server, vendor, facilitator } = useX402Server();
const creator = useCaller(server, "MCP x402 Seller");
const consumer = useCaller(server, "MCP x402 Buyer");
let slug = "";

beforeAll(async () => {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name: "Chat Buddy",
      description: "Chat Buddy, as a service",
      interaction_mode: "chat",
      visibility: "public",
      price_cents: PRICE_CENTS,
    },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  slug = app.slug;
  await fundWallet(consumer, 100);
});

const rpc = (method: string, params: Record<string, unknown> = {}) =>
  method.startsWith("notifications/")
    ? { jsonrpc: "2.0", method, params }
    : { jsonrpc: "2.0", id: 1, method, params };
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...headers,
    },
    body: JSON.stringify(body),
  });
const initialize = rpc("initialize", {
  protocolVersion: "2025-11-25",
  capabilities: {},
  clientInfo: { name: "probe", version: "1" },
});
const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("");

async function walletCents() {
  const { balance_micros, held_micros } = (await consumer.api("GET", "/api/wallet/")).body;
  return ((balance_micros as number) + (held_micros as number)) / 10_000;
}

describe("@modelcontextprotocol/sdk", () => {
  describe("with x402 on, the OAuth endpoints:", () => {
    it("every message without credentials (initialize too) → refused 401 naming the resource metadata", async () => {
      const messages = [
        initialize,
        rpc("tools/list"),
        rpc("ping"),
        rpc("notifications/initialized"),
        rpc("tools/call", { name: slug, arguments: { query: "hi" } }),
      ];
      for (const path of [`/api/app/${slug}/mcp`, `/api/v1/app/${slug}/mcp`, "/api/mcp", "/api/v1/mcp"])
        for (const message of messages) {
          const response = await post(path, message);
          expect({ path, method: message.method, status: response.status }).toEqual({
            path,
            method: message.method,
            status: 401,
          });
          expect(response.headers.get("www-authenticate")).toBe(
            `Bearer resource_metadata="${server.baseUrl}/.well-known/oauth-protected-resource${path}", scope="mcp"`,
          );
          expect(response.headers.get("payment-required")).toBeNull();
        }
      expect(facilitator.requests.verify + facilitator.requests.settle).toBe(0);
    });

    it("MCP SDK client with an OAuth provider → gets the 401, signs in, calls the paid tool from the wallet, charged once", async () => {
      const redirectUrl = "http://127.0.0.1:9/callback";
      const provider = new MemoryOAuthProvider(redirectUrl);
      const serverUrl = new URL(`${server.baseUrl}/api/app/${slug}/mcp`);
      // The first connection has no token: its initialize meets the 401, and the SDK's own OAuth
      // client registers, builds the PKCE authorization URL for this endpoint and asks to open it.
      const first = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider });
      await expect(new Client({ name: "desk-agent", version: "1.0.0" }).connect(first)).rejects.toThrow(
        /Unauthorized/,
      );
      const authorizationUrl = provider.authorizationUrl as URL;
      expect(authorizationUrl).toBeDefined();
      expect(authorizationUrl.searchParams.get("resource")).toBe(serverUrl.toString());
      expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
      const { callback } = await answerAuthorization(authorizationUrl, {
        email: consumer.email,
        password: "correct-horse-7",
        redirectUrl,
        decision: "allow",
      });
      await first.finishAuth(callback.searchParams.get("code") as string);
      expect(provider.saved?.access_token).toBeTruthy();

      const before = await walletCents();
      const transfers = facilitator.transfers.length;
      const client = new Client({ name: "desk-agent", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider }));
      const [tool] = (await client.listTools()).tools;
      expect(tool?.name).toBe(slug);
      const result = (await client.callTool({ name: slug, arguments: { query: "rain" } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe("echo: rain");
      expect(result._meta?.[CHARGE_META_KEY]).toMatchObject({
        charged_cents: PRICE_CENTS,
        paid_by: "wallet",
      });
      expect(result._meta?.[X402_PAYMENT_RESPONSE_META_KEY]).toBeUndefined();
      expect(await walletCents()).toBe(before - PRICE_CENTS);
      expect(facilitator.transfers.length).toBe(transfers);
      await client.close();
      await expectReconciled(server.database.db, "after an OAuth MCP call with x402 on");
    });

    it("credentials beside an x402 payment header → refused 400, nothing charged", async () => {
      const response = await post(`/api/app/${slug}/mcp`, rpc("tools/list"), {
        authorization: "Bearer pm_not_checked",
        "payment-signature": "e30=",
      });
      expect(response.status).toBe(400);
    });
  });
});

describe("@modelcontextprotocol/sdk + @x402/evm", () => {
  describe("the agents' endpoint, x402's MCP binding:", () => {
    const agentUrl = () => new URL(`${server.baseUrl}/api/v1/agents/app/${slug}/mcp`);

    async function connectAgent(url: URL) {
      const client = new Client({ name: "x402-agent", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(url));
      return client;
    }

    it("initialize, tools/list, ping without credentials → works, nothing asked to pay", async () => {
      const client = await connectAgent(agentUrl());
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([slug]);
      expect(tools[0]?.description).toContain("paid per call without an account");
      expect(tools[0]?.outputSchema).toBeUndefined();
      await client.ping();
      await client.close();
      expect(facilitator.requests.verify + facilitator.requests.settle).toBe(0);
    });

    it("credentials on the agents' endpoint → refused 400 naming the OAuth endpoint", async () => {
      const response = await post(`/api/v1/agents/app/${slug}/mcp`, initialize, {
        authorization: "Bearer x",
      });
      expect(response.status).toBe(400);
      expect(JSON.stringify(await response.json())).toContain("/api/app/{slug}/mcp");
    });

    it("a JSON-RPC batch → refused 400 whole, as on every MCP endpoint", async () => {
      const response = await post(`/api/v1/agents/app/${slug}/mcp`, [rpc("tools/list"), rpc("ping")]);
      expect(response.status).toBe(400);
      expect((await response.json()).error).toMatchObject({
        code: -32600,
        data: { code: "batch_not_supported" },
      });
    });

    it("an app that is not public → refused 404, no requirements", async () => {
      const response = await post("/api/v1/agents/app/no-such-app/mcp", initialize);
      expect(response.status).toBe(404);
    });

    it("tools/call without payment → refused: isError with the PaymentRequired (structuredContent and content[0].text), nothing run", async () => {
      const client = await connectAgent(agentUrl());
      const calls = vendor.requests.length;
      const result = (await client.callTool({
        name: slug,
        arguments: { query: "unpaid" },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      const required = result.structuredContent as unknown as PaymentRequired;
      expect(required).toMatchObject({
        x402Version: 2,
        resource: { url: agentUrl().toString() },
        accepts: [
          { scheme: "exact", network: X402_TEST_NETWORK, amount: PRICE_UNITS, payTo: X402_TEST_PAY_TO },
        ],
      });
      expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
      expect(result._meta?.["promptmint/error"]).toMatchObject({ status: 402, code: "payment_required" });
      expect(vendor.requests.length).toBe(calls);
      await client.close();
    });

    it("paid in _meta['x402/payment'], then the same payment again → works once, settled once (the settlement in _meta); the replay refused payment_already_used", async () => {
      const agent = x402Wallet();
      facilitator.mint(agent.address, 1_000_000n);
      const client = await connectAgent(agentUrl());
      const unpaid = (await client.callTool({ name: slug, arguments: { query: "hello" } })) as CallToolResult;
      const payment = await agent.client.createPaymentPayload(
        unpaid.structuredContent as unknown as PaymentRequired,
      );
      const transfers = facilitator.transfers.length;

      const paid = (await client.callTool({
        name: slug,
        arguments: { query: "hello" },
        _meta: { [X402_PAYMENT_META_KEY]: payment },
      })) as CallToolResult;
      expect(paid.isError).toBeFalsy();
      expect(textOf(paid)).toBe("echo: hello");
      // Settled first into the payer's balance, then paid from it like any wallet call (decision 070).
      expect(paid._meta?.[CHARGE_META_KEY]).toMatchObject({ charged_cents: PRICE_CENTS, paid_by: "wallet" });
      const settlement = paid._meta?.[X402_PAYMENT_RESPONSE_META_KEY] as SettleResponse;
      expect(settlement).toMatchObject({ success: true, network: X402_TEST_NETWORK });
      expect(facilitator.transfers.slice(transfers)).toEqual([
        expect.objectContaining({ from: agent.address, to: X402_TEST_PAY_TO, value: BigInt(PRICE_UNITS) }),
      ]);
      expect(settlement.transaction).toBe(facilitator.transfers.at(-1)?.transaction);

      const calls = vendor.requests.length;
      const replay = (await client.callTool({
        name: slug,
        arguments: { query: "again" },
        _meta: { [X402_PAYMENT_META_KEY]: payment },
      })) as CallToolResult;
      expect(replay.isError).toBe(true);
      expect(replay.structuredContent).toMatchObject({ x402Version: 2, accepts: [{ amount: PRICE_UNITS }] });
      expect((replay.structuredContent as { error?: string }).error).toContain("payment_already_used");
      expect(facilitator.transfers.length).toBe(transfers + 1);
      expect(vendor.requests.length).toBe(calls);
      await client.close();
      await expectReconciled(server.database.db, "after an MCP call paid with x402's MCP binding");
    });

    it("a payment the facilitator refuses to settle → refused: isError with the requirements and the reason, nothing run", async () => {
      const agent = x402Wallet();
      facilitator.mint(agent.address, 1_000_000n);
      const client = await connectAgent(agentUrl());
      const unpaid = (await client.callTool({ name: slug, arguments: { query: "x" } })) as CallToolResult;
      const payment = await agent.client.createPaymentPayload(
        unpaid.structuredContent as unknown as PaymentRequired,
      );
      const calls = vendor.requests.length;
      facilitator.setSettlement("refuse");
      try {
        const refused = (await client.callTool({
          name: slug,
          arguments: { query: "x" },
          _meta: { [X402_PAYMENT_META_KEY]: payment },
        })) as CallToolResult;
        expect(refused.isError).toBe(true);
        expect(refused.structuredContent).toMatchObject({
          x402Version: 2,
          accepts: [{ amount: PRICE_UNITS }],
        });
        expect((refused.structuredContent as { error?: string }).error).toBeTruthy();
      } finally {
        facilitator.setSettlement("settle");
      }
      expect(vendor.requests.length).toBe(calls);
      expect(facilitator.transfers.filter((t) => t.from === agent.address)).toHaveLength(0);
      await client.close();
    });

    it("a budget and the balance key asked on the POST → the key in the result's _meta; with it the app's own MCP URL answers, paid from the balance", async () => {
      const agent = x402Wallet();
      facilitator.mint(agent.address, 1_000_000n);
      const headers = { "promptmint-prepay-cents": "30", "promptmint-balance-key": "issue" };
      const client = new Client({ name: "x402-agent", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(agentUrl(), { requestInit: { headers } }));
      const unpaid = (await client.callTool({
        name: slug,
        arguments: { query: "budget" },
      })) as CallToolResult;
      expect(unpaid.structuredContent).toMatchObject({ accepts: [{ amount: "300000" }] });
      const payment = await agent.client.createPaymentPayload(
        unpaid.structuredContent as unknown as PaymentRequired,
      );
      const transfers = facilitator.transfers.length;
      const paid = (await client.callTool({
        name: slug,
        arguments: { query: "budget" },
        _meta: { [X402_PAYMENT_META_KEY]: payment },
      })) as CallToolResult;
      expect(paid.isError).toBeFalsy();
      const key = paid._meta?.[BALANCE_KEY_META_KEY] as string;
      expect(key).toMatch(/^pm_/);
      await client.close();
      expect(facilitator.transfers.length - transfers).toBe(1);

      // The balance key is an API key: the OAuth endpoint takes it, and the balance pays.
      const keyed = new Client({ name: "x402-agent-keyed", version: "1.0.0" });
      await keyed.connect(
        new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/api/app/${slug}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      const again = (await keyed.callTool({
        name: slug,
        arguments: { query: "from the balance" },
      })) as CallToolResult;
      expect(again.isError).toBeFalsy();
      expect(textOf(again)).toBe("echo: from the balance");
      expect(again._meta?.[CHARGE_META_KEY]).toMatchObject({ charged_cents: PRICE_CENTS, paid_by: "wallet" });
      expect(facilitator.transfers.length - transfers).toBe(1);
      await keyed.close();
      await expectReconciled(server.database.db, "after MCP calls paid from an x402 budget");
    });

    it("the agents' catalogue: search free, call_app answers the named app's requirements, then paid → works", async () => {
      const agent = x402Wallet();
      facilitator.mint(agent.address, 1_000_000n);
      const client = await connectAgent(new URL(`${server.baseUrl}/api/v1/agents/mcp`));
      const found = (await client.callTool({
        name: "search_apps",
        arguments: { query: "chat" },
      })) as CallToolResult;
      expect(found.structuredContent).toMatchObject({ apps: [{ slug }] });
      const args = { slug, query: "catalogue" };
      const unpaid = (await client.callTool({ name: "call_app", arguments: args })) as CallToolResult;
      expect(unpaid.isError).toBe(true);
      expect(unpaid.structuredContent).toMatchObject({
        resource: { url: `${server.baseUrl}/api/v1/agents/mcp` },
        accepts: [{ amount: PRICE_UNITS }],
      });
      const transfers = facilitator.transfers.length;
      const payment = await agent.client.createPaymentPayload(
        unpaid.structuredContent as unknown as PaymentRequired,
      );
      const paid = (await client.callTool({
        name: "call_app",
        arguments: args,
        _meta: { [X402_PAYMENT_META_KEY]: payment },
      })) as CallToolResult;
      expect(paid.isError).toBeFalsy();
      expect(textOf(paid)).toBe("echo: catalogue");
      expect(paid._meta?.[X402_PAYMENT_RESPONSE_META_KEY]).toMatchObject({ success: true });
      expect(facilitator.transfers.length - transfers).toBe(1);
      await client.close();
    });
  });
});
