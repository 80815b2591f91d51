import type { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ChatClient } from "dify-client";
import OpenAI from "openai";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ExperimentArm } from "../../db/schema/index.ts";
import { fundWallet } from "../../test/caller.ts";
import { sseEvents } from "../../test/dify-world.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { CHARGE_META_KEY, VERSION_META_KEY } from "../mcp/call-app.ts";
import { armOf, bucketOf } from "./serving.ts";

// Pinning a prompt version through each protocol's REAL client (docs/decisions/057): openai with
// `model: "slug@v3"`, dify-client with the Promptmint-Version header, the MCP SDK with
// `_meta["promptmint/version"]`. Each gets the pinned version's answer and names it in the body.

const PRICE = 20;
const { server, vendor } = useVendorServer();
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
      // v3's own limit at the app's price (decision 063).
      max_input_tokens: expect.any(Number),
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

    // call_app declares a `version` argument too; it and _meta naming different ones is refused.
    const tool = (await client.listTools()).tools.find((t) => t.name === "call_app");
    expect(tool?.inputSchema.properties).toHaveProperty("version");
    const byArgument = (await client.callTool({
      name: "call_app",
      arguments: { slug, query: "hello", version: "v3" },
    })) as CallToolResult;
    expect(textOf(byArgument)).toContain("second: hello");
    expect(byArgument._meta?.[VERSION_META_KEY]).toBe("v3");
    const both = (await client.callTool({
      name: "call_app",
      arguments: { slug, query: "hello", version: "v3" },
      _meta: { [VERSION_META_KEY]: "v2" },
    })) as CallToolResult;
    expect(both.isError).toBe(true);
    expect(textOf(both)).toMatch(
      /^400 bad_request: .*version pins v3 but _meta\["promptmint\/version"\] pins v2/,
    );
    await client.close();
  });
});

/**
 * A version whose schemas are not production's (decision 057): production v2 writes a haiku about
 * `topic` as JSON `{haiku}`; v3 tells the weather in `city` as plain text; v4 takes `topic` again,
 * as plain text. A call is checked against, and answered as, the version that serves it.
 */
describe("@modelcontextprotocol/sdk", () => {
  // Versions whose schemas differ from production's (decision 057).
  const object = (name: string) => ({
    type: "object",
    properties: { [name]: { type: "string" } },
    required: [name],
    additionalProperties: false,
  });
  let schemaSlug: string;
  let promptId: string;
  beforeAll(async () => {
    ({ slug: schemaSlug } = await createLiveApp(
      creator,
      { price_cents: PRICE, interaction_mode: "completion" },
      {
        model: "gpt-4-turbo",
        prompt_template: "A haiku about {{topic}}",
        input_schema: object("topic"),
        output_schema: object("haiku"),
      },
    ));
    const saved = await creator.api("PATCH", `/api/app/${schemaSlug}/prompt/`, {
      body: { prompt_template: "The weather in {{city}}", input_schema: object("city"), output_schema: null },
    });
    expect(saved.body).toMatchObject({ current_version: 3, production_version: 2 });
    promptId = saved.body.id as string;
  });
  // Asked for the schema (the system prompt quotes it), the model answers with JSON; else it echoes.
  beforeEach(() =>
    vendor.set({
      kind: "respond",
      answer: (request) =>
        request.messages.some((m) => m.role === "system" && m.content?.includes("JSON schema"))
          ? '{"haiku": "Rain on the roof"}'
          : `echo: ${request.messages.at(-1)?.content}`,
    }),
  );
  afterEach(() => vendor.set({ kind: "echo" }));

  async function connect(apiKey: string, headers: Record<string, string> = {}) {
    const client = new Client({ name: "schema-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/api/app/${schemaSlug}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${apiKey}`, ...headers } },
      }),
    );
    return client;
  }
  const textOf = (result: CallToolResult) =>
    result.content.map((part) => (part.type === "text" ? part.text : "")).join("");

  it("a tools/call pinned in _meta is checked against the pinned version's inputs and answered as it", async () => {
    const client = await connect(key);
    const pinned = (await client.callTool({
      name: schemaSlug,
      arguments: { city: "Oslo" },
      _meta: { [VERSION_META_KEY]: "v3" },
    })) as CallToolResult;
    expect(pinned.isError).toBeFalsy();
    expect(textOf(pinned)).toBe("echo: The weather in Oslo");
    expect(pinned.structuredContent).toBeUndefined();
    expect(pinned._meta?.[VERSION_META_KEY]).toBe("v3");

    const before = await walletCents();
    const productionInputs = (await client.callTool({
      name: schemaSlug,
      arguments: { topic: "rain" },
      _meta: { [VERSION_META_KEY]: "v3" },
    })) as CallToolResult;
    expect(productionInputs.isError).toBe(true);
    expect(textOf(productionInputs)).toMatch(/^400 bad_request: .*inputs\.city/);
    expect(await walletCents()).toBe(before);

    const production = (await client.callTool({
      name: schemaSlug,
      arguments: { topic: "rain" },
    })) as CallToolResult;
    expect(production.structuredContent).toEqual({ haiku: "Rain on the roof" });
    expect(production._meta?.[VERSION_META_KEY]).toBe("v2");
    await client.close();
  });

  it("tools/list shows production's schemas, or the version the Promptmint-Version header pins", async () => {
    const listed = await connect(key);
    const [production] = (await listed.listTools()).tools;
    expect(Object.keys(production?.inputSchema.properties ?? {})).toEqual(["topic"]);
    expect(production?.outputSchema).toMatchObject({ properties: { haiku: { type: "string" } } });
    // The SDK checks a result against the output schema it was listed with: a _meta pin to a
    // version without one is refused by the client itself (why the header pin exists).
    await expect(
      listed.callTool({ name: schemaSlug, arguments: { city: "Oslo" }, _meta: { [VERSION_META_KEY]: "v3" } }),
    ).rejects.toThrow(/structured content/);
    await listed.close();

    const headerPinned = await connect(key, { "promptmint-version": "v3" });
    const [v3] = (await headerPinned.listTools()).tools;
    expect(Object.keys(v3?.inputSchema.properties ?? {})).toEqual(["city"]);
    expect(v3?.outputSchema).toBeUndefined();
    const answered = (await headerPinned.callTool({
      name: schemaSlug,
      arguments: { city: "Oslo" },
    })) as CallToolResult;
    expect(textOf(answered)).toBe("echo: The weather in Oslo");
    expect(answered._meta?.[VERSION_META_KEY]).toBe("v3");
    await headerPinned.close();

    // A header pin the app lacks lists production's; the call is the tool error naming it.
    const missing = await connect(key, { "promptmint-version": "v42" });
    expect(Object.keys((await missing.listTools()).tools[0]?.inputSchema.properties ?? {})).toEqual([
      "topic",
    ]);
    const refused = (await missing.callTool({
      name: schemaSlug,
      arguments: { topic: "rain" },
    })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^404 version_not_found: This app has no version v42/);
    await missing.close();
  });

  it("an experiment's arm without production's output schema answers as itself, not as production", async () => {
    const saved = await creator.api("PATCH", `/api/app/${schemaSlug}/prompt/`, {
      body: {
        prompt_template: "Plain words on {{topic}}",
        input_schema: object("topic"),
        output_schema: null,
      },
    });
    expect(saved.body.current_version).toBe(4);
    const started = await creator.api("POST", `/api/prompts/${promptId}/experiments/`, {
      body: {
        arms: [
          { version: 2, percent: 1 },
          { version: 4, percent: 99 },
        ],
        sticky_by: "key",
      },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    // A key of the consumer's that the experiment puts on v4's arm (its bucket, as serving.ts works it out).
    let armKey = "";
    while (!armKey) {
      const made = await consumer.api("POST", "/api/keys/", { body: { name: "arm" } });
      const bucket = bucketOf(started.body.id as string, `key:${made.body.id as string}`);
      if (armOf(started.body.arms as ExperimentArm[], bucket).version === 4) armKey = made.body.key as string;
    }
    try {
      const client = await connect(armKey);
      const served = (await client.callTool({
        name: schemaSlug,
        arguments: { topic: "rain" },
      })) as CallToolResult;
      expect(served.isError).toBeFalsy();
      expect(textOf(served)).toBe("echo: Plain words on rain");
      expect(served.structuredContent).toBeUndefined();
      expect(served._meta?.[VERSION_META_KEY]).toBe("v4");
      await client.close();
    } finally {
      await creator.api("POST", `/api/prompts/${promptId}/experiments/${started.body.id}/stop`);
    }
  });
});
