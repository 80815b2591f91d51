import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { useCaller, useX402Server } from "../../test/use-test-server.ts";
import { X402_TEST_NETWORK } from "../../test/x402-facilitator.ts";
import { REMEDY_META_KEY } from "../mcp/payment-remedy.ts";

// The 402's machine-readable remedy (issue 30 item 5, lib/payment-remedy.ts) in each protocol's
// own error shape: what is missing, the links, the figures or the limit hit, and the x402 offer.
// One refusal, one remedy: Dify's body, OpenAI's error and MCP's tool error carry the same object.

const PRICE_CENTS = 7;
const { server } = useX402Server();
const creator = useCaller(server, "Remedy Seller");
let slug = "";

beforeAll(async () => {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name: "Remedy App",
      description: "d",
      interaction_mode: "completion",
      visibility: "public",
      price_cents: PRICE_CENTS,
    },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  slug = app.slug;
});

describe("the 402 remedy in each protocol's shape", () => {
  it("Dify: {code, message, status} plus the remedy: insufficient funds, the top-up and plans links, x402 accepted", async () => {
    const broke = await createCaller(server.baseUrl, "x402 Broke");
    const key = (await broke.api("POST", "/api/keys/", { body: { name: "broke" } })).body.key;
    const response = await broke.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: key,
      body: { inputs: {}, query: "hi", response_mode: "blocking", user: "u" },
    });
    expect(response.status).toBe(402);
    expect(response.body).toMatchObject({
      code: "payment_required",
      status: 402,
      remedy: {
        missing: "insufficient_funds",
        top_up_url: `${server.baseUrl}/wallet`,
        plans_url: `${server.baseUrl}/explore/${slug}#plans`,
        price_cents: PRICE_CENTS,
        balance_micros: 0,
        x402: { accepted: true, amount: "70000", network: X402_TEST_NETWORK },
      },
    });
    expect(typeof response.body.message).toBe("string");
  });

  it("OpenAI: {error: {message, type, param, code}} plus error.remedy, and the key's spend limit that was hit", async () => {
    const limited = await createCaller(server.baseUrl, "x402 Limited");
    await fundWallet(limited, 100);
    const key = (
      await limited.api("POST", "/api/keys/", {
        body: { name: "capped", spend_limit_cents: 5, limit_reset: "daily" },
      })
    ).body.key;
    const client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });
    const error = await client.chat.completions
      .create({ model: slug, messages: [{ role: "user", content: "hi" }] })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(402);
    expect(error.error).toMatchObject({
      type: "insufficient_quota",
      code: "key_limit_reached",
      param: null,
      remedy: {
        missing: "spend_limit_reached",
        price_cents: PRICE_CENTS,
        limit: { kind: "key_spend_limit", limit_cents: 5, spent_micros: 0, period: "daily" },
        x402: { accepted: true },
      },
    });
    expect(error.error.remedy.limit.resets_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  describe("one refusal, one remedy, through Dify, OpenAI and MCP", () => {
    /** The remedy of one call of the app with this key, through each protocol's own client. */
    async function remediesOf(key: string) {
      const dify = await creator.api("POST", `/api/app/${slug}/completion-messages`, {
        auth: key,
        body: { inputs: {}, query: "hi", response_mode: "blocking", user: "u" },
      });
      expect(dify.status).toBe(402);
      const client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });
      const openai = await client.chat.completions
        .create({ model: slug, messages: [{ role: "user", content: "hi" }] })
        .catch((caught) => caught);
      expect(openai).toBeInstanceOf(OpenAI.APIError);
      expect(openai.status).toBe(402);
      const mcp = new Client({ name: "remedy-test", version: "1.0.0" });
      await mcp.connect(
        new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/api/app/${slug}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      const tool = (await mcp.callTool({ name: slug, arguments: { query: "hi" } })) as CallToolResult;
      await mcp.close();
      expect(tool.isError).toBe(true);
      const { price, ...mcpRemedy } = (tool._meta?.[REMEDY_META_KEY] ?? {}) as Record<string, unknown>;
      expect(price).toMatchObject({ amount: "0.07", amount_cents: PRICE_CENTS, per: "call" });
      return { dify: dify.body.remedy, openai: openai.error.remedy, mcp: mcpRemedy, text: tool.content };
    }

    it("an empty wallet: insufficient_funds, the wallet and the plans, x402, the same in all three", async () => {
      const broke = await createCaller(server.baseUrl, "Remedy Broke");
      const key = (await broke.api("POST", "/api/keys/", { body: { name: "broke" } })).body.key;
      const { dify, openai, mcp, text } = await remediesOf(key);
      expect(dify).toEqual({
        missing: "insufficient_funds",
        top_up_url: `${server.baseUrl}/wallet`,
        plans_url: `${server.baseUrl}/explore/${slug}#plans`,
        price_cents: PRICE_CENTS,
        balance_micros: 0,
        x402: expect.objectContaining({ accepted: true, amount: "70000" }),
      });
      expect(openai).toEqual(dify);
      expect(mcp).toEqual(dify);
      expect(JSON.stringify(text)).toContain(
        `Or subscribe to a plan at ${server.baseUrl}/explore/${slug}#plans.`,
      );
    });

    it("a key past its spend limit: spend_limit_reached, the API keys page, no top-up link, the same in all three", async () => {
      const limited = await createCaller(server.baseUrl, "Remedy Limited");
      await fundWallet(limited, 100);
      const key = (
        await limited.api("POST", "/api/keys/", {
          body: { name: "capped", spend_limit_cents: 5, limit_reset: "never" },
        })
      ).body.key;
      const { dify, openai, mcp, text } = await remediesOf(key);
      expect(dify).toEqual({
        missing: "spend_limit_reached",
        keys_url: `${server.baseUrl}/api-keys`,
        plans_url: `${server.baseUrl}/explore/${slug}#plans`,
        price_cents: PRICE_CENTS,
        limit: { kind: "key_spend_limit", limit_cents: 5, spent_micros: 0, period: "never", resets_at: null },
        x402: expect.objectContaining({ accepted: true }),
      });
      expect(openai).toEqual(dify);
      expect(mcp).toEqual(dify);
      expect(JSON.stringify(text)).toContain(`Fix it at ${server.baseUrl}/api-keys.`);
    });
  });
});
