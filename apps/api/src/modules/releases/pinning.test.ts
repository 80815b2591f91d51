import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { applications, invocations } from "../../db/schema/index.ts";
import { fundWallet } from "../../test/caller.ts";
import { embedWidget } from "../../test/embed-widget.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";

// Pinning through each protocol over plain HTTP (docs/decisions/057): the conventions' edges —
// an unknown pin in each protocol's own error shape with nothing charged, a pin given twice, a
// malformed one, the Idempotency-Key's fingerprint — and the widget's calls recording their version.

const PRICE = 15;
const { server } = useVendorServer();
const creator = useCaller(server, "Pin Seller");
const consumer = useCaller(server, "Pin Buyer");
/** A live chat app: production v2 ("first: …"), latest v3 ("second: …"). */
let slug: string;

beforeAll(async () => {
  ({ slug } = await createLiveApp(
    creator,
    { price_cents: PRICE, interaction_mode: "chat" },
    { model: "gpt-4-turbo", prompt_template: "first: {{query}}" },
  ));
  await creator.api("PATCH", `/api/app/${slug}/prompt/`, { body: { prompt_template: "second: {{query}}" } });
  await fundWallet(consumer, 1000);
  await fundWallet(creator, 1000);
});

async function walletCents(): Promise<number> {
  const { balance_micros, held_micros } = (await consumer.api("GET", "/api/wallet/")).body;
  return ((balance_micros as number) + (held_micros as number)) / 10_000;
}

const chat = (model: string, headers: Record<string, string> = {}) =>
  consumer.api("POST", "/api/v1/chat/completions", {
    body: { model, messages: [{ role: "user", content: "hello" }] },
    headers,
  });

/** One MCP tools/call (stateless Streamable HTTP: no handshake needed), its JSON-RPC result. */
async function mcpCall(path: string, params: object, headers: Record<string, string> = {}) {
  const response = await consumer.api("POST", path, {
    body: { jsonrpc: "2.0", id: 1, method: "tools/call", params },
    headers: { accept: "application/json, text/event-stream", ...headers },
  });
  expect(response.status).toBe(200);
  const body =
    typeof response.body === "string"
      ? JSON.parse(/^data: (.*)$/m.exec(response.body)?.[1] ?? "null")
      : response.body;
  return body.result as { isError?: boolean; content: { text: string }[]; _meta?: Record<string, unknown> };
}

describe("pinning", () => {
  it("answers an unknown pin in each protocol's own shape, and charges nothing in any", async () => {
    const before = await walletCents();
    const dify = await consumer.api("POST", `/api/app/${slug}/chat-messages`, {
      body: { inputs: {}, query: "hello", response_mode: "blocking", user: "u" },
      headers: { "promptmint-version": "v99" },
    });
    expect(dify.status).toBe(404);
    expect(dify.body).toMatchObject({ code: "version_not_found", message: "This app has no version v99" });

    const viaModel = await chat(`${slug}@v99`);
    expect(viaModel.status).toBe(404);
    expect(viaModel.body).toEqual({
      error: {
        message: "This app has no version v99",
        type: "invalid_request_error",
        param: "model",
        code: "model_not_found",
      },
    });
    const viaHeader = await chat(slug, { "promptmint-version": "canary" });
    expect(viaHeader.status).toBe(404);
    expect(viaHeader.body.error).toMatchObject({
      message: "This app has no label canary",
      code: "model_not_found",
      param: null,
    });
    const responses = await consumer.api("POST", "/api/v1/responses", {
      body: { model: `${slug}@v99`, input: "hello", stream: true },
    });
    expect(responses.status).toBe(404);
    expect(responses.body.error).toMatchObject({ code: "model_not_found", param: "model" });

    const tool = await mcpCall(`/api/app/${slug}/mcp`, {
      name: slug,
      arguments: { query: "hello" },
      _meta: { "promptmint/version": "v99" },
    });
    expect(tool.isError).toBe(true);
    expect(tool.content[0]?.text).toMatch(/404 version_not_found: This app has no version v99/);
    expect(tool._meta?.["promptmint/version"]).toBeUndefined();

    expect(await walletCents()).toBe(before);
    const [app] = await server.database.db.select().from(applications).where(eq(applications.slug, slug));
    const recorded = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.applicationId, app?.id ?? ""));
    expect(recorded).toEqual([]);
  });

  it("takes the OpenAI pin from model or the header; both naming different versions is a 400 naming model", async () => {
    const viaHeader = await chat(slug, { "promptmint-version": "v3" });
    expect(viaHeader.status).toBe(200);
    expect(viaHeader.body).toMatchObject({ model: slug, system_fingerprint: "v3" });
    expect(viaHeader.headers.get("promptmint-version")).toBe("v3");
    expect(viaHeader.body.choices[0].message.content).toContain("second: hello");

    const same = await chat(`${slug}@3`, { "promptmint-version": "v3" });
    expect(same.status).toBe(200);
    expect(same.body.system_fingerprint).toBe("v3");

    const before = await walletCents();
    const conflicting = await chat(`${slug}@v2`, { "promptmint-version": "latest" });
    expect(conflicting.status).toBe(400);
    expect(conflicting.body.error).toMatchObject({ param: "model", code: "bad_request" });
    expect(conflicting.body.error.message).toMatch(
      /model pins v2 but the Promptmint-Version header pins latest/,
    );
    for (const model of [`${slug}@`, `${slug}@v1.2`, `@v2`]) {
      const malformed = await chat(model);
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.param).toBe("model");
    }
    expect(await walletCents()).toBe(before);
  });

  it("continues a stored response under a pinned model, and the header pin is part of an Idempotency-Key's request", async () => {
    const first = await consumer.api("POST", "/api/v1/responses", {
      body: { model: `${slug}@v3`, input: "hi" },
    });
    expect(first.status).toBe(200);
    const next = await consumer.api("POST", "/api/v1/responses", {
      body: { model: `${slug}@v2`, input: "again", previous_response_id: first.body.id },
    });
    expect(next.status).toBe(200);
    expect(next.body.metadata).toEqual({ promptmint_version: "v2" });

    const key = `pin-${Math.random()}`;
    const once = await chat(slug, { "idempotency-key": key, "promptmint-version": "v3" });
    expect(once.status).toBe(200);
    const replayed = await chat(slug, { "idempotency-key": key, "promptmint-version": "v3" });
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.body.system_fingerprint).toBe("v3");
    // The same body pinned elsewhere is another request: refused, not answered with v3's answer.
    const other = await chat(slug, { "idempotency-key": key, "promptmint-version": "v2" });
    expect(other.status).toBe(422);
    expect(other.body.error.message).toMatch(/already used with a different request/);
  });

  it("takes an MCP pin from the Promptmint-Version header too; a malformed or conflicting one is a tool error", async () => {
    const viaHeader = await mcpCall(
      `/api/app/${slug}/mcp`,
      { name: slug, arguments: { query: "hello" } },
      { "promptmint-version": "latest" },
    );
    expect(viaHeader.isError).toBeFalsy();
    expect(viaHeader.content[0]?.text).toContain("second: hello");
    expect(viaHeader._meta?.["promptmint/version"]).toBe("v3");

    const before = await walletCents();
    const conflicting = await mcpCall(
      "/api/mcp",
      { name: "call_app", arguments: { slug, query: "hello" }, _meta: { "promptmint/version": "v2" } },
      { "promptmint-version": "v3" },
    );
    expect(conflicting.isError).toBe(true);
    expect(conflicting.content[0]?.text).toMatch(
      /^400 bad_request: .*_meta\["promptmint\/version"\] pins v2/,
    );
    const malformed = await mcpCall(`/api/app/${slug}/mcp`, {
      name: slug,
      arguments: { query: "hello" },
      _meta: { "promptmint/version": 3 },
    });
    expect(malformed.isError).toBe(true);
    expect(malformed.content[0]?.text).toMatch(/_meta\["promptmint\/version"\] must be a string/);
    expect(await walletCents()).toBe(before);
  });

  it("records the version that answered a widget visitor's call (widgets pin nothing: production)", async () => {
    const widget = embedWidget(server.baseUrl, "https://shop.example");
    const { slug: embedSlug, id } = await widget.createEmbedApp(creator, {
      prompt: { prompt_template: "widget: {{query}}" },
    });
    // A newer version, not released: the widget keeps answering with production.
    await creator.api("PATCH", `/api/app/${embedSlug}/prompt/`, {
      body: { prompt_template: "draft: {{query}}" },
    });
    const { token } = await widget.loadWidget(embedSlug, "https://shop.example/");
    const sent = await widget.sendMessage(embedSlug, token, { body: { query: "hello" } });
    expect(sent.status).toBe(200);
    expect(sent.body.answer).toContain("widget: hello");
    const [row] = await server.database.db
      .select({ version: invocations.appVersion })
      .from(invocations)
      .where(eq(invocations.applicationId, id));
    expect(row?.version).toBe(2);
  });
});
