import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  ErrorCode,
  type Tool,
  UrlElicitationRequiredError,
} from "@modelcontextprotocol/sdk/types.js";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { applications, invocations } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { reconcile } from "../billing/reconcile.ts";
import { PRICE_META_KEY } from "./app-tool.ts";
import { REMEDY_META_KEY } from "./payment-remedy.ts";

// What an MCP client sees of an app's tool, through the SDK's own Client: the output schema and
// structured results, the price, and what a refused payment tells it (MCP 2025-11-25).

const outputSchema = {
  type: "object",
  properties: {
    haiku: { type: "string", description: "The poem" },
    syllables: { type: "integer", minimum: 1 },
  },
  required: ["haiku", "syllables"],
  additionalProperties: false,
};
const slugs = { structured: "", plain: "" };
const keys = { rich: "", broke: "", limited: "" };

const { server, vendor } = useVendorServer();
const creator = useCaller(server, "Tool Seller");
const buyer = useCaller(server, "Tool Buyer");

async function createApp(name: string, priceCents: number, withOutput: boolean) {
  const app = await createPromptApp(
    creator,
    {
      name,
      description: `${name}, as a tool`,
      interaction_mode: "completion",
      visibility: "public",
      price_cents: priceCents,
    },
    {
      model: "gpt-4-turbo",
      prompt_template: "Write a haiku about {{topic}}",
      input_schema: {
        type: "object",
        properties: { topic: { type: "string", maxLength: 40 } },
        required: ["topic"],
        additionalProperties: false,
      },
      ...(withOutput ? { output_schema: outputSchema } : {}),
    },
  );
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  return app.slug;
}

beforeAll(async () => {
  slugs.structured = await createApp("Structured Haiku", 5, true);
  slugs.plain = await createApp("Plain Haiku", 7, false);
  await fundWallet(buyer, 100);
  keys.rich = (await buyer.api("POST", "/api/keys/", { body: { name: "mcp" } })).body.key;
  keys.limited = (
    await buyer.api("POST", "/api/keys/", {
      body: { name: "capped", spend_limit_cents: 1, limit_reset: "never" },
    })
  ).body.key;
  const broke = await createCaller(server.baseUrl, "Tool Broke");
  keys.broke = (await broke.api("POST", "/api/keys/", { body: { name: "mcp" } })).body.key;
});

async function connect(slug: string, key: string, capabilities: Record<string, unknown> = {}) {
  const client = new Client({ name: "tools-test", version: "1.0.0" }, { capabilities });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/api/app/${slug}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

async function chargedInvocations(slug: string) {
  const [app] = await server.database.db.select().from(applications).where(eq(applications.slug, slug));
  const rows = await server.database.db
    .select({ status: invocations.status, chargedCents: invocations.chargedCents })
    .from(invocations)
    .where(eq(invocations.applicationId, app?.id ?? ""));
  return rows.filter((row) => row.chargedCents > 0);
}

const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("");

describe("@modelcontextprotocol/sdk", () => {
  it("tools/list: outputSchema, price in the description and in _meta → works", async () => {
    const client = await connect(slugs.structured, keys.rich);
    const [tool] = (await client.listTools()).tools as Tool[];
    expect(tool?.outputSchema).toEqual(outputSchema);
    expect(tool?.description).toContain("Costs $0.05 per call");
    expect(tool?._meta?.[PRICE_META_KEY]).toEqual({
      amount: "0.05",
      amount_cents: 5,
      currency: "USD",
      per: "call",
      paid_from: ["plan", "wallet"],
      upcoming: null,
    });
    await client.close();
  });

  it("tools/list of an app without an output schema: no outputSchema → works", async () => {
    const client = await connect(slugs.plain, keys.rich);
    const [tool] = (await client.listTools()).tools;
    expect(tool).not.toHaveProperty("outputSchema");
    expect(tool?._meta?.[PRICE_META_KEY]).toMatchObject({ amount: "0.07", amount_cents: 7 });
    await client.close();
  });

  it("tools/call: structuredContent, checked by the Client against outputSchema → works", async () => {
    vendor.set({ kind: "reply", text: '{"haiku": "Rain on the tin roof", "syllables": 17}' });
    try {
      const client = await connect(slugs.structured, keys.rich);
      await client.listTools(); // the Client keeps the tool's output schema to check results with
      const result = (await client.callTool({
        name: slugs.structured,
        arguments: { topic: "rain" },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ haiku: "Rain on the tin roof", syllables: 17 });
      expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
      await client.close();
    } finally {
      vendor.set({ kind: "echo" });
    }
    expect(await chargedInvocations(slugs.structured)).toEqual([{ status: "success", chargedCents: 5 }]);
  });

  it("tools/call when the answer does not match the output schema → refused 502 upstream_failed", async () => {
    vendor.set({ kind: "reply", text: '{"haiku": "no count"}' });
    try {
      const client = await connect(slugs.structured, keys.rich);
      const result = (await client.callTool({
        name: slugs.structured,
        arguments: { topic: "snow" },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^502 upstream_failed: .*syllables/);
      expect(result).not.toHaveProperty("structuredContent");
      await client.close();
    } finally {
      vendor.set({ kind: "echo" });
    }
    expect(await chargedInvocations(slugs.structured)).toHaveLength(1);
  });
  it("tools/call with an empty wallet: top-up link, remedy in _meta → refused 402 payment_required", async () => {
    const client = await connect(slugs.plain, keys.broke);
    const result = (await client.callTool({
      name: slugs.plain,
      arguments: { topic: "money" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("402 payment_required");
    expect(textOf(result)).toContain(`${server.baseUrl}/wallet`);
    expect(textOf(result)).toContain(`${server.baseUrl}/explore/${slugs.plain}#plans`);
    // The remedy the same refusal carries in a Dify or OpenAI 402 (gateway/payment-remedy.test.ts
    // compares them), plus the tool's price.
    expect(result._meta?.[REMEDY_META_KEY]).toEqual({
      missing: "insufficient_funds",
      top_up_url: `${server.baseUrl}/wallet`,
      plans_url: `${server.baseUrl}/explore/${slugs.plain}#plans`,
      price_cents: 7,
      balance_micros: 0,
      price: expect.objectContaining({ amount: "0.07", amount_cents: 7, currency: "USD", per: "call" }),
    });
    await client.close();
    expect(await chargedInvocations(slugs.plain)).toEqual([]);
  });

  it("tools/call past the key's spend limit: remedy names the API keys page → refused 402 key_limit_reached", async () => {
    const client = await connect(slugs.plain, keys.limited);
    const result = (await client.callTool({
      name: slugs.plain,
      arguments: { topic: "limits" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("402 key_limit_reached");
    expect(textOf(result)).toContain(`Fix it at ${server.baseUrl}/api-keys.`);
    expect(textOf(result)).not.toContain("subscribe");
    expect(result._meta?.[REMEDY_META_KEY]).toMatchObject({
      missing: "spend_limit_reached",
      keys_url: `${server.baseUrl}/api-keys`,
      limit: { kind: "key_spend_limit", limit_cents: 1, period: "never", resets_at: null },
      price: expect.objectContaining({ amount_cents: 7 }),
    });
    expect(result._meta?.[REMEDY_META_KEY]).not.toHaveProperty("top_up_url");
    await client.close();
    expect(await chargedInvocations(slugs.plain)).toEqual([]);
  });

  it("tools/call with an empty wallet, elicitation.url declared → refused -32042 URL elicitation of the top-up page", async () => {
    const client = await connect(slugs.plain, keys.broke, { elicitation: { url: {} } });
    const refused = await client.callTool({ name: slugs.plain, arguments: { topic: "money" } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(UrlElicitationRequiredError);
    const error = refused as UrlElicitationRequiredError;
    expect(error.code).toBe(ErrorCode.UrlElicitationRequired);
    expect(error.elicitations).toEqual([
      {
        mode: "url",
        elicitationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        url: `${server.baseUrl}/wallet`,
        message: expect.stringContaining("Insufficient balance: this call costs $0.07"),
      },
    ]);
    await client.close();
    expect(await chargedInvocations(slugs.plain)).toEqual([]);
  });

  it("tools/call past the key's spend limit, elicitation.url declared → refused -32042 URL elicitation of the API keys page", async () => {
    const client = await connect(slugs.plain, keys.limited, { elicitation: { url: {} } });
    const refused = await client.callTool({ name: slugs.plain, arguments: { topic: "limits" } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(UrlElicitationRequiredError);
    expect((refused as UrlElicitationRequiredError).elicitations).toEqual([
      {
        mode: "url",
        elicitationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        url: `${server.baseUrl}/api-keys`,
        message: expect.stringContaining("This API key's spend limit of $0.01"),
      },
    ]);
    await client.close();
    expect(await chargedInvocations(slugs.plain)).toEqual([]);
  });

  it("tools/call with an empty wallet, only form elicitation declared → refused 402 payment_required", async () => {
    const client = await connect(slugs.plain, keys.broke, { elicitation: { form: {} } });
    const result = (await client.callTool({
      name: slugs.plain,
      arguments: { topic: "money" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result._meta?.[REMEDY_META_KEY]).toMatchObject({ missing: "insufficient_funds" });
    await client.close();
  });

  it("tools/call after the refusals: charged once, the ledger reconciles → works", async () => {
    const client = await connect(slugs.plain, keys.rich, { elicitation: { url: {} } });
    const result = (await client.callTool({
      name: slugs.plain,
      arguments: { topic: "sun" },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    await client.close();
    expect(await chargedInvocations(slugs.plain)).toEqual([{ status: "success", chargedCents: 7 }]);
    expect((await reconcile(server.database.db)).ok).toBe(true);
  });
});
