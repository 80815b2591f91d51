import type { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ChatClient } from "dify-client";
import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { fundWallet } from "../../test/caller.ts";
import { sseEvents } from "../../test/dify-world.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { CHARGE_META_KEY, VERSION_META_KEY } from "../mcp/call-app.ts";

// Pinning a prompt version through each protocol's REAL client (docs/decisions/057): openai with
// `model: "slug@v3"`, dify-client with the Promptmint-Version header, the MCP SDK with
// `_meta["promptmint/version"]`. Each gets the pinned version's answer and names it in the body.

const PRICE = 20;
const { server } = useVendorServer();
const creator = useCaller(server, "Pin Compat Seller");
const consumer = useCaller(server, "Pin Compat Buyer");
let key: string;
/** A live chat app: production is v2 ("first: …"), latest v3 ("second: …"), `staging` → v3. */
let slug: string;

beforeAll(async () => {
  ({ slug } = await createLiveApp(
    creator,
    { price_cents: PRICE, interaction_mode: "chat" },
    { model: "gpt-4-turbo", prompt_template: "first: {{query}}" },
  ));
  const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
    body: { prompt_template: "second: {{query}}" },
  });
  expect(saved.body).toMatchObject({ current_version: 3, production_version: 2 });
  const staged = await creator.api("PUT", `/api/prompts/${saved.body.id}/labels/staging`, {
    body: { version: 3 },
  });
  expect(staged.status).toBe(200);
  await fundWallet(consumer, 1000);
  key = (await consumer.api("POST", "/api/keys/", { body: { name: "pins" } })).body.key;
});

async function walletCents(): Promise<number> {
  const { balance_micros, held_micros } = (await consumer.api("GET", "/api/wallet/")).body;
  return ((balance_micros as number) + (held_micros as number)) / 10_000;
}

const openai = () => new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });

describe("openai", () => {
  it("chat.completions with model slug@v3 answers v3, names it in system_fingerprint and keeps the model sent", async () => {
    const before = await walletCents();
    const pinned = await openai().chat.completions.create({
      model: `${slug}@v3`,
      messages: [{ role: "user", content: "hello" }],
    });
    expect(pinned.choices[0]?.message.content).toContain("second: hello");
    expect(pinned.system_fingerprint).toBe("v3");
    expect(pinned.model).toBe(`${slug}@v3`);
    expect(await walletCents()).toBe(before - PRICE);

    const unpinned = await openai().chat.completions.create({
      model: slug,
      messages: [{ role: "user", content: "hello" }],
    });
    expect(unpinned.choices[0]?.message.content).toContain("first: hello");
    expect(unpinned.system_fingerprint).toBe("v2");
    expect(unpinned.model).toBe(slug);
  });

  it("a streamed chat completion pinned to a label names the version in every chunk", async () => {
    const stream = await openai().chat.completions.create({
      model: `${slug}@staging`,
      messages: [{ role: "user", content: "hello" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    const fingerprints = new Set<string | undefined>();
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      fingerprints.add(chunk.system_fingerprint);
      expect(chunk.model).toBe(`${slug}@staging`);
    }
    expect(text).toContain("second: hello");
    expect([...fingerprints]).toEqual(["v3"]);
  });

  it("responses pinned with @latest name the version in metadata, streamed, stored and retrieved", async () => {
    const response = await openai().responses.create({ model: `${slug}@latest`, input: "hello" });
    expect(response.output_text).toContain("second: hello");
    expect(response.metadata).toEqual({ promptmint_version: "v3" });
    expect(response.model).toBe(`${slug}@latest`);
    const stored = await openai().responses.retrieve(response.id);
    expect(stored.metadata).toEqual({ promptmint_version: "v3" });

    const stream = await openai().responses.create({ model: `${slug}@v3`, input: "hello", stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === "response.completed") completed = event.response;
    expect(completed?.metadata).toEqual({ promptmint_version: "v3" });
    expect(completed?.output_text ?? completed?.output[0]).toBeDefined();

    const production = await openai().responses.create({ model: slug, input: "hello" });
    expect(production.metadata).toEqual({ promptmint_version: "v2" });
  });

  it("an unknown pin is the SDK's NotFoundError, model_not_found naming the version; nothing charged", async () => {
    const before = await walletCents();
    const error = await openai()
      .chat.completions.create({ model: `${slug}@v99`, messages: [{ role: "user", content: "hello" }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ status: 404, code: "model_not_found", param: "model" });
    expect((error as Error).message).toMatch(/no version v99/);
    const noLabel = await openai()
      .responses.create({ model: `${slug}@canary`, input: "hello" })
      .catch((caught: unknown) => caught);
    expect(noLabel).toBeInstanceOf(OpenAI.NotFoundError);
    expect((noLabel as Error).message).toMatch(/no label canary/);
    expect(await walletCents()).toBe(before);
  });

  it("models.retrieve of slug@v3 and slug@staging → the model object; an unknown version → 404 model_not_found", async () => {
    const plain = await openai().models.retrieve(slug);
    const pinned = await openai().models.retrieve(`${slug}@v3`);
    expect(pinned).toEqual({
      id: `${slug}@v3`,
      object: "model",
      created: expect.any(Number),
      owned_by: "promptmint",
      accepts_tools: false,
    });
    // `created` is when v3 was saved, after the app was.
    expect(pinned.created).toBeGreaterThanOrEqual(plain.created);
    // staging points at v3: the same model object under the name asked for.
    expect(await openai().models.retrieve(`${slug}@staging`)).toEqual({ ...pinned, id: `${slug}@staging` });
    for (const unknown of [`${slug}@v42`, `${slug}@no-such-label`]) {
      await expect(openai().models.retrieve(unknown), unknown).rejects.toMatchObject({
        status: 404,
        code: "model_not_found",
        param: "model",
        type: "invalid_request_error",
        message: expect.stringContaining(unknown.endsWith("v42") ? "v42" : "no-such-label"),
      });
    }
    await expect(openai().models.retrieve("no-such-app@v1")).rejects.toMatchObject({
      status: 404,
      code: "model_not_found",
      param: "model",
    });
    await expect(openai().models.retrieve(`${slug}@v 1`)).rejects.toMatchObject({
      status: 400,
      param: "model",
    });
  });
});

describe("dify-client", () => {
  /** dify-client's own methods send no extra header; its sendRequest takes headers (its 6th argument). */
  const client = () => new ChatClient(key, `${server.baseUrl}/api/app/${slug}`);
  const body = (stream: boolean) => ({
    inputs: {},
    query: "hello",
    user: "dify-pin",
    response_mode: stream ? "streaming" : "blocking",
  });

  it("pins with the Promptmint-Version header; the answer names the version in metadata and the header", async () => {
    const pinned = await client().sendRequest("POST", "/chat-messages", body(false), undefined, false, {
      "Promptmint-Version": "v3",
    });
    expect(pinned.data.answer).toContain("second: hello");
    expect(pinned.data.metadata).toMatchObject({ promptmint_version: "v3", usage: { charged_cents: PRICE } });
    expect(pinned.headers["promptmint-version"]).toBe("v3");
    // Its own createChatMessage, unpinned: production, named the same way.
    const production = await client().createChatMessage({}, "hello", "dify-pin", false, null);
    expect(production.data.answer).toContain("first: hello");
    expect(production.data.metadata.promptmint_version).toBe("v2");
  });

  it("names the version in a stream's message_end", async () => {
    const response = await client().sendRequest("POST", "/chat-messages", body(true), undefined, true, {
      "Promptmint-Version": "staging",
    });
    let text = "";
    for await (const chunk of response.data as Readable) text += chunk.toString();
    const events = sseEvents(text);
    const end = events.find((event) => event.event === "message_end");
    expect(end?.metadata).toMatchObject({ promptmint_version: "v3" });
    expect(
      events
        .filter((e) => e.event === "message")
        .map((e) => e.answer)
        .join(""),
    ).toContain("second: hello");
  });
});

describe("@modelcontextprotocol/sdk", () => {
  async function connect(path: string) {
    const client = new Client({ name: "pin-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.baseUrl}${path}`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    return client;
  }
  const textOf = (result: CallToolResult) =>
    result.content.map((part) => (part.type === "text" ? part.text : "")).join("");

  it("tools/call with _meta promptmint/version answers that version and names it in the result's _meta", async () => {
    const client = await connect(`/api/app/${slug}/mcp`);
    const pinned = (await client.callTool({
      name: slug,
      arguments: { query: "hello" },
      _meta: { [VERSION_META_KEY]: "v3" },
    })) as CallToolResult;
    expect(pinned.isError).toBeFalsy();
    expect(textOf(pinned)).toContain("second: hello");
    expect(pinned._meta?.[VERSION_META_KEY]).toBe("v3");
    expect(pinned._meta?.[CHARGE_META_KEY]).toMatchObject({ charged_cents: PRICE });

    const production = (await client.callTool({
      name: slug,
      arguments: { query: "hello" },
    })) as CallToolResult;
    expect(textOf(production)).toContain("first: hello");
    expect(production._meta?.[VERSION_META_KEY]).toBe("v2");
    await client.close();
  });

  it("the catalogue's call_app takes the pin in _meta; an unknown one is a tool error, nothing charged", async () => {
    const client = await connect("/api/mcp");
    const pinned = (await client.callTool({
      name: "call_app",
      arguments: { slug, query: "hello" },
      _meta: { [VERSION_META_KEY]: "staging" },
    })) as CallToolResult;
    expect(textOf(pinned)).toContain("second: hello");
    expect(pinned._meta?.[VERSION_META_KEY]).toBe("v3");

    const before = await walletCents();
    const missing = (await client.callTool({
      name: "call_app",
      arguments: { slug, query: "hello" },
      _meta: { [VERSION_META_KEY]: "v42" },
    })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(
      /^404 version_not_found: This app has no version v42.*Nothing was charged/,
    );
    expect(await walletCents()).toBe(before);
    await client.close();
  });
});
