import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { applications, invocations } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { answerAuthorization, MemoryOAuthProvider } from "../../test/mcp-oauth.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { APP_NOT_CALLABLE } from "../applications/callable-app.ts";
import { reconcile } from "../billing/reconcile.ts";
import { CHARGE_META_KEY } from "./call-app.ts";

let consumerKey: string;
let brokeKey: string;
const slugs = { haiku: "", chat: "", secret: "" };

const topicSchema = {
  type: "object",
  properties: { topic: { type: "string", maxLength: 40, description: "What the haiku is about" } },
  required: ["topic"],
  additionalProperties: false,
};

async function createApp(
  name: string,
  options: { mode: "completion" | "chat"; visibility: string; template?: string },
) {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name,
      description: `${name}, as a service`,
      interaction_mode: options.mode,
      visibility: options.visibility,
      price_cents: 30,
    },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
    body: {
      model: "gpt-4-turbo",
      ...(options.template ? { prompt_template: options.template, input_schema: topicSchema } : {}),
    },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  return app.slug as string;
}

const { server, vendor } = useVendorServer();
const creator = useCaller(server, "MCP Seller");
const consumer = useCaller(server, "MCP Buyer");

beforeAll(async () => {
  slugs.haiku = await createApp("Haiku Writer", {
    mode: "completion",
    visibility: "public",
    template: "Write a haiku about {{topic}}",
  });
  slugs.chat = await createApp("Chat Buddy", { mode: "chat", visibility: "public" });
  slugs.secret = await createApp("Secret Sauce", { mode: "completion", visibility: "private" });
  await fundWallet(consumer, 300);
  consumerKey = (await consumer.api("POST", "/api/keys/", { body: { name: "mcp" } })).body.key;
  const broke = await createCaller(server.baseUrl, "MCP Broke");
  brokeKey = (await broke.api("POST", "/api/keys/", { body: { name: "mcp" } })).body.key;
});

const appUrl = (slug: string) => new URL(`${server.baseUrl}/api/app/${slug}/mcp`);
const catalogueUrl = () => new URL(`${server.baseUrl}/api/mcp`);
const withKey = (key: string): StreamableHTTPClientTransportOptions => ({
  requestInit: { headers: { authorization: `Bearer ${key}` } },
});

async function connect(url: URL, options: StreamableHTTPClientTransportOptions) {
  const client = new Client({ name: "promptmint-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url, options));
  return client;
}

/** The consumer's money: available plus held (a lease's unspent rest is held until it idles out). */
async function walletCents(caller = consumer) {
  const { balance_micros, held_micros } = (await caller.api("GET", "/api/wallet/")).body;
  return ((balance_micros as number) + (held_micros as number)) / 10_000;
}

async function invocationsOf(slug: string) {
  const [app] = await server.database.db.select().from(applications).where(eq(applications.slug, slug));
  return server.database.db
    .select({ status: invocations.status, chargedCents: invocations.chargedCents })
    .from(invocations)
    .where(and(eq(invocations.applicationId, app?.id ?? "")));
}

const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("");

describe("@modelcontextprotocol/sdk", () => {
  it("tools/list → works", async () => {
    const client = await connect(appUrl(slugs.haiku), withKey(consumerKey));
    const { tools } = await client.listTools();
    const stored = (await creator.api("GET", `/api/app/${slugs.haiku}/prompt/`)).body.active_version
      .input_schema;
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ name: slugs.haiku, title: "Haiku Writer", inputSchema: stored });
    expect(tools[0]?.description).toContain("Haiku Writer, as a service");
    expect(tools[0]?.description).toContain("$0.30 per call");
    const chat = await connect(appUrl(slugs.chat), withKey(consumerKey));
    expect((await chat.listTools()).tools[0]?.inputSchema).toMatchObject({
      properties: { query: { type: "string" } },
      required: ["query"],
    });
    await client.close();
    await chat.close();
  });

  it("tools/call → works", async () => {
    const before = await walletCents();
    const client = await connect(appUrl(slugs.haiku), withKey(consumerKey));
    const result = (await client.callTool({
      name: slugs.haiku,
      arguments: { topic: "rain" },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("echo: Write a haiku about rain");
    expect(result._meta?.[CHARGE_META_KEY]).toMatchObject({ charged_cents: 30, paid_by: "wallet" });
    expect(await walletCents()).toBe(before - 30);
    expect(await invocationsOf(slugs.haiku)).toEqual([{ status: "success", chargedCents: 30 }]);
    await client.close();
  });

  it("tools/call with inputs the schema refuses → refused 400 topic", async () => {
    const before = await walletCents();
    const client = await connect(appUrl(slugs.haiku), withKey(consumerKey));
    const result = (await client.callTool({ name: slugs.haiku, arguments: { topic: 7 } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^400 bad_request: .*topic/);
    expect(await walletCents()).toBe(before);
    await client.close();
  });

  it("tools/call with an empty wallet → refused 402 payment_required", async () => {
    const client = await connect(appUrl(slugs.haiku), withKey(brokeKey));
    const result = (await client.callTool({
      name: slugs.haiku,
      arguments: { topic: "money" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("402 payment_required");
    expect(textOf(result)).toContain("$0.30 per call");
    expect(textOf(result)).toContain(`${server.baseUrl}/wallet`);
    expect((await invocationsOf(slugs.haiku)).filter((row) => row.chargedCents > 0)).toHaveLength(1);
    await client.close();
  });

  it("tools/call when the model fails → refused 502 upstream_failed", async () => {
    const before = await walletCents();
    const client = await connect(appUrl(slugs.chat), withKey(consumerKey));
    vendor.set({ kind: "status", status: 500, message: "boom" });
    try {
      const result = (await client.callTool({
        name: slugs.chat,
        arguments: { query: "hi" },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain("502 upstream_failed");
    } finally {
      vendor.set({ kind: "echo" });
    }
    expect(await walletCents()).toBe(before);
    expect(await invocationsOf(slugs.chat)).toEqual([{ status: "error", chargedCents: 0 }]);
    await client.close();
  });

  it("search_apps → works", async () => {
    const client = await connect(catalogueUrl(), withKey(consumerKey));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
      "search_apps",
      "describe_app",
      "call_app",
    ]);
    const result = (await client.callTool({
      name: "search_apps",
      arguments: { query: "haiku" },
    })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({
      apps: [{ slug: slugs.haiku, name: "Haiku Writer", price_cents: 30 }],
      total: 1,
    });
    const all = (await client.callTool({ name: "search_apps", arguments: {} })) as CallToolResult;
    const found = (all.structuredContent as { apps: { slug: string }[] }).apps.map((app) => app.slug);
    expect(found).toEqual(expect.arrayContaining([slugs.haiku, slugs.chat]));
    expect(found).not.toContain(slugs.secret);
    await client.close();
  });

  it("describe_app → works", async () => {
    const client = await connect(catalogueUrl(), withKey(consumerKey));
    const result = (await client.callTool({
      name: "describe_app",
      arguments: { slug: slugs.haiku },
    })) as CallToolResult;
    expect(result.structuredContent).toMatchObject({
      slug: slugs.haiku,
      price_cents: 30,
      pending_price_cents: null,
      price: "$0.30 per call",
      input_schema: topicSchema,
    });
    expect(String(result.structuredContent?.how_to_call)).toContain(`/api/app/${slugs.haiku}/mcp`);
    await client.close();
  });

  it("call_app → works", async () => {
    const before = await walletCents();
    const client = await connect(catalogueUrl(), withKey(consumerKey));
    const result = (await client.callTool({
      name: "call_app",
      arguments: { slug: slugs.chat, query: "Hello there" },
    })) as CallToolResult;
    expect(textOf(result)).toBe("echo: Hello there");
    expect(await walletCents()).toBe(before - 30);
    expect((await invocationsOf(slugs.chat)).filter((row) => row.status === "success")).toEqual([
      { status: "success", chargedCents: 30 },
    ]);
    await client.close();
  });

  it("unknown app → refused 404 not_found", async () => {
    await expect(connect(appUrl("no-such-app"), withKey(consumerKey))).rejects.toMatchObject({ code: 404 });
    const client = await connect(catalogueUrl(), withKey(consumerKey));
    const result = (await client.callTool({
      name: "call_app",
      arguments: { slug: "no-such-app" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(`404 not_found: ${APP_NOT_CALLABLE}`);
    await client.close();
  });

  it("another user's private app → refused 404 not_found", async () => {
    await expect(connect(appUrl(slugs.secret), withKey(consumerKey))).rejects.toMatchObject({ code: 404 });
    const client = await connect(catalogueUrl(), withKey(consumerKey));
    const result = (await client.callTool({
      name: "describe_app",
      arguments: { slug: slugs.secret },
    })) as CallToolResult;
    expect(textOf(result)).toBe(`404 not_found: ${APP_NOT_CALLABLE}`);
    await client.close();
    const owner = (await creator.api("POST", "/api/keys/", { body: { name: "mine" } })).body.key;
    const own = await connect(appUrl(slugs.secret), withKey(owner));
    expect((await own.listTools()).tools[0]?.name).toBe(slugs.secret);
    await own.close();
  });

  it("OAuth sign-in: auth() with dynamic registration, PKCE and consent → works", async () => {
    const redirectUrl = "http://127.0.0.1:9/callback";
    const provider = new MemoryOAuthProvider(redirectUrl);
    const serverUrl = appUrl(slugs.haiku);
    expect(await auth(provider, { serverUrl })).toBe("REDIRECT");
    expect(provider.information?.client_id).toBeTruthy();
    const authorizationUrl = provider.authorizationUrl as URL;
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("resource")).toBe(serverUrl.toString());

    const { consentHtml, callback } = await answerAuthorization(authorizationUrl, {
      email: consumer.email,
      password: "correct-horse-7",
      redirectUrl,
      decision: "allow",
    });
    expect(consentHtml).toContain("Desk Agent");
    expect(consentHtml).toContain("paid from your wallet");
    const code = callback.searchParams.get("code");
    expect(code).toBeTruthy();
    expect(await auth(provider, { serverUrl, authorizationCode: code as string })).toBe("AUTHORIZED");

    const before = await walletCents();
    const client = await connect(serverUrl, { authProvider: provider });
    const result = (await client.callTool({
      name: slugs.haiku,
      arguments: { topic: "snow" },
    })) as CallToolResult;
    expect(textOf(result)).toBe("echo: Write a haiku about snow");
    expect(await walletCents()).toBe(before - 30);
    await client.close();
    expect((await reconcile(server.database.db)).ok).toBe(true);
  });
});
