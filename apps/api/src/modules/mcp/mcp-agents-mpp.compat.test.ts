import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { McpClient } from "mppx/mcp/client";
import { describe, expect, it } from "vitest";
import { mppStripeCharge, useAgentRailsServer } from "../../test/agent-rails.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import {
  MPP_CREDENTIAL_META_KEY,
  MPP_PAYMENT_REQUIRED_META_KEY,
  MPP_RECEIPT_META_KEY,
} from "./agent-payment.ts";
import { CHARGE_META_KEY } from "./call-app.ts";

// Decision 074: with x402 and MPP both on, one unpaid tool result on the agents' MCP endpoint offers
// both (x402's PaymentRequired as its structuredContent, MPP's challenges in its _meta), and
// mppx's own MCP client (`McpClient.wrap`, stripe charge) pays it: captured once, the call answered
// with the receipt in _meta, a replayed credential refused.

const PRICE_CENTS = 7;
const rails = useAgentRailsServer({ priceCents: PRICE_CENTS, mode: "chat", name: "Chat Rails" });
const { server, vendor } = rails;

const agentUrl = () => new URL(`${server.baseUrl}/api/v1/agents/app/${rails.app.slug}/mcp`);
const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("");

async function connect() {
  const client = new Client({ name: "mpp-agent", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(agentUrl()));
  return client;
}

const stripeMethod = () => mppStripeCharge(rails.double);

describe("@modelcontextprotocol/sdk + mppx", () => {
  describe("the agents' endpoint, x402 and MPP on:", () => {
    it("tools/call without payment → refused: one isError result offering both rails (x402's PaymentRequired, MPP's challenges in _meta)", async () => {
      const client = await connect();
      const result = (await client.callTool({
        name: rails.app.slug,
        arguments: { query: "hi" },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        x402Version: 2,
        accepts: [{ scheme: "exact", amount: String(PRICE_CENTS * 10_000) }],
      });
      const mpp = result._meta?.[MPP_PAYMENT_REQUIRED_META_KEY] as {
        httpStatus: number;
        challenges: { method: string; intent: string }[];
      };
      expect(mpp.httpStatus).toBe(402);
      expect(mpp.challenges).toEqual([expect.objectContaining({ method: "stripe", intent: "charge" })]);
      await client.close();
    });

    it("mppx's McpClient pays with a Stripe token → works, captured once, the receipt in _meta; the same credential again refused payment_already_used, nothing run", async () => {
      const client = await connect();
      // What the wrapped client sends, recorded under it (McpClient.wrap calls the callTool it finds).
      const sent: unknown[] = [];
      const plainCallTool = client.callTool.bind(client);
      client.callTool = ((params, ...rest) => {
        const credential = params._meta?.[MPP_CREDENTIAL_META_KEY];
        if (credential) sent.push(credential);
        return plainCallTool(params, ...rest);
      }) as typeof client.callTool;
      McpClient.wrap(client, { methods: [stripeMethod()] });
      const captured = rails.double.capturedCents();
      const result = (await client.callTool({
        name: rails.app.slug,
        arguments: { query: "rain" },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe("echo: rain");
      expect(result._meta?.[CHARGE_META_KEY]).toMatchObject({
        charged_cents: PRICE_CENTS,
        paid_by: "wallet",
      });
      expect(result._meta?.[MPP_RECEIPT_META_KEY]).toMatchObject({ status: "success", method: "stripe" });
      // Stripe's smallest card charge is 50 cents (decision 071): the rest stays on the balance.
      expect(rails.double.capturedCents() - captured).toBe(50);
      expect(sent).toHaveLength(1);

      const calls = vendor.requests.length;
      const replay = (await plainCallTool({
        name: rails.app.slug,
        arguments: { query: "again" },
        _meta: { [MPP_CREDENTIAL_META_KEY]: sent[0] },
      })) as CallToolResult;
      expect(replay.isError).toBe(true);
      const refused = replay._meta?.[MPP_PAYMENT_REQUIRED_META_KEY] as {
        challenges: unknown[];
        problem?: { detail?: string };
      };
      expect(refused.challenges.length).toBeGreaterThan(0);
      expect(refused.problem?.detail).toContain("payment_already_used");
      expect(rails.double.capturedCents() - captured).toBe(50);
      expect(vendor.requests.length).toBe(calls);
      await client.close();
      await expectReconciled(server.database.db, "after an MCP call paid with MPP");
    });
  });
});
