import { ChatClient, CompletionClient } from "dify-client";
import { eq } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { invocations } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { createTestDatabase } from "../../test/database.ts";
import { startTestServer } from "../../test/server.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { APP_NOT_CALLABLE } from "../applications/callable-app.ts";

let consumerKey: string;

const { server, vendor } = useVendorServer({
  OPENAI_API_KEY: "sk-vendor-test",
  LLM_TIMEOUT_SECONDS: "2",
});
const creator = useCaller(server, "Creator");
const consumer = useCaller(server, "Consumer");

beforeAll(async () => {
  consumerKey = (await consumer.api("POST", "/api/keys/", { body: { name: "sdk" } })).body.key;
  await fundWallet(consumer, 100_000);
  // The owner's own calls hold their model cost from the owner's wallet (decision 062).
  await fundWallet(creator, 1_000);
});
beforeEach(() => vendor.set({ kind: "echo" }));

async function createPromptApp(options: {
  mode: "completion" | "chat";
  visibility?: string;
  status?: string;
  template?: string;
  schema?: object;
}) {
  const created = await creator.api("POST", "/api/app/", {
    body: {
      name: `Gateway ${options.mode} ${Math.random().toString(36).slice(2, 7)}`,
      interaction_mode: options.mode,
      visibility: options.visibility ?? "public",
    },
  });
  expect(created.status).toBe(201);
  const slug = created.body.slug as string;
  if (options.template || options.schema) {
    const patched = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: {
        model: "gpt-4-turbo",
        prompt_template: options.template,
        input_schema: options.schema,
        changelog: "test setup",
      },
    });
    expect(patched.status).toBe(200);
  } else {
    await creator.api("PATCH", `/api/app/${slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  }
  if ((options.status ?? "live") === "live")
    await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  return slug;
}

const topicSchema = {
  type: "object",
  properties: { topic: { type: "string", maxLength: 40, description: "Topic" } },
  required: ["topic"],
  additionalProperties: false,
};

/** A completion app of `template` on the topic schema, and the dify-client SDK on it with the consumer's key. */
async function topicCompletionApp(template: string) {
  const slug = await createPromptApp({ mode: "completion", template, schema: topicSchema });
  return { slug, client: new CompletionClient(consumerKey, `${server.baseUrl}/api/app/${slug}`) };
}

async function readStream(stream: NodeJS.ReadableStream): Promise<Record<string, any>[]> {
  let text = "";
  for await (const chunk of stream) text += chunk.toString();
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => JSON.parse(block.slice(6)));
}

describe("the official dify-client SDK", () => {
  it("gets a completion in blocking mode with usage", async () => {
    const { client } = await topicCompletionApp("Write a haiku about {{topic}}.");
    const response = await client.createCompletionMessage({ topic: "autumn rain" }, "end-user-1", false);
    expect(response.status).toBe(200);
    expect(response.data.answer).toBe("echo: Write a haiku about autumn rain.");
    expect(response.data.metadata.usage).toMatchObject({
      prompt_tokens: expect.any(Number),
      completion_tokens: 7,
    });
    expect(response.data.metadata.usage.input_tokens).toBe(response.data.metadata.usage.prompt_tokens);
    expect(response.data.metadata.usage.total_tokens).toBe(response.data.metadata.usage.prompt_tokens + 7);
    expect(response.data.id).toBe(response.data.message_id);
    expect(vendor.requests.at(-1)).toMatchObject({
      model: "gpt-4-turbo",
      authorization: "Bearer sk-vendor-test",
    });
    expect(response.headers["ratelimit-limit"]).toBe("1000");

    const [row] = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.id, response.data.id));
    expect(row).toMatchObject({
      status: "success",
      endUser: "end-user-1",
      mode: "completion",
      outputTokens: 7,
    });
    expect(row?.apiKeyId).toBeTruthy();
  });

  it("streams a completion as Dify's SSE events ending in message_end with usage", async () => {
    const { client } = await topicCompletionApp("Tell me about {{topic}}");
    const response = await client.createCompletionMessage({ topic: "tides" }, "u", true);
    expect(response.headers["content-type"]).toContain("text/event-stream");
    const events = await readStream(response.data);
    const messages = events.filter((e) => e.event === "message");
    expect(messages.length).toBeGreaterThan(1);
    expect(messages.map((e) => e.answer).join("")).toBe("echo: Tell me about tides");
    const end = events.at(-1);
    expect(end?.event).toBe("message_end");
    expect(end?.metadata.usage.completion_tokens).toBe(5);
    expect(vendor.requests.at(-1)?.stream).toBe(true);
  });

  it("keeps a multi-turn chat's conversation, blocking and streaming", async () => {
    const slug = await createPromptApp({ mode: "chat" });
    const client = new ChatClient(consumerKey, `${server.baseUrl}/api/app/${slug}`);
    const first = await client.createChatMessage({}, "My name is Ada.", "chat-user", false, null);
    expect(first.data.answer).toBe("echo: My name is Ada.");
    const conversationId = first.data.conversation_id;
    expect(conversationId).toBeTruthy();

    const second = await client.createChatMessage({}, "What is my name?", "chat-user", false, conversationId);
    expect(second.data.conversation_id).toBe(conversationId);
    const sent = vendor.requests.at(-1)?.messages ?? [];
    expect(sent.filter((m) => m.role !== "system")).toEqual([
      { role: "user", content: "My name is Ada." },
      { role: "assistant", content: "echo: My name is Ada." },
      { role: "user", content: "What is my name?" },
    ]);

    const third = await client.createChatMessage({}, "And again?", "chat-user", true, conversationId);
    const events = await readStream(third.data);
    expect(events.at(-1)?.event).toBe("message_end");
    expect(events.at(-1)?.conversation_id).toBe(conversationId);
    expect(vendor.requests.at(-1)?.messages.filter((m) => m.role !== "system")).toHaveLength(5);

    const history = await client.getConversationMessages("chat-user", conversationId);
    expect(history.data.data.map((m: { query: string }) => m.query)).toEqual([
      "My name is Ada.",
      "What is my name?",
      "And again?",
    ]);

    // Another end user of the same key cannot continue it.
    await expect(
      client.createChatMessage({}, "hi", "someone-else", false, conversationId),
    ).rejects.toMatchObject({ response: { status: 404 } });
  });

  it("reads the app's parameters and info", async () => {
    const { slug, client } = await topicCompletionApp("About {{topic}}");
    const parameters = await client.getApplicationParameters("u");
    expect(parameters.data.user_input_form).toEqual([
      { "text-input": { label: "Topic", variable: "topic", required: true, default: "", max_length: 40 } },
    ]);
    const info = await consumer.api("GET", `/api/app/${slug}/info`, { auth: consumerKey });
    expect(info.body).toMatchObject({ mode: "completion", tags: [] });
  });
});

describe("access and validation", () => {
  it("answers 404 for a private app, and for a draft app, to anyone but the owner", async () => {
    const privateSlug = await createPromptApp({ mode: "completion", visibility: "private" });
    const draftSlug = await createPromptApp({ mode: "completion", visibility: "public", status: "draft" });
    for (const slug of [privateSlug, draftSlug]) {
      const other = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
        auth: consumerKey,
        body: { inputs: { query: "hi" } },
      });
      expect(other.status).toBe(404);
      expect(other.body.message).toBe(APP_NOT_CALLABLE);
      // The same words as for an app that does not exist: the hint leaks nothing.
      const missing = await consumer.api("POST", "/api/app/no-such-app/completion-messages", {
        auth: consumerKey,
        body: { inputs: { query: "hi" } },
      });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(other.body);
      const owner = await creator.api("POST", `/api/app/${slug}/completion-messages`, {
        body: { inputs: { query: "hi" } },
      });
      expect(owner.status).toBe(200);
    }
  });

  it("refuses a revoked key with 401", async () => {
    const slug = await createPromptApp({ mode: "completion" });
    const created = await consumer.api("POST", "/api/keys/", { body: { name: "short-lived" } });
    const call = () =>
      consumer.api("POST", `/api/app/${slug}/completion-messages`, {
        auth: created.body.key,
        body: { inputs: { query: "hi" } },
      });
    expect((await call()).status).toBe(200);
    expect((await consumer.api("DELETE", `/api/keys/${created.body.id}/`)).status).toBe(204);
    const refused = await call();
    expect(refused.status).toBe(401);
    expect(refused.body.message).toBe("API key is invalid or has been revoked");
  });

  it("answers Dify's 400 invalid_param naming the field when inputs break the schema, and never calls the vendor", async () => {
    const slug = await createPromptApp({
      mode: "completion",
      template: "About {{topic}}",
      schema: topicSchema,
    });
    const before = vendor.requests.length;
    const cases = [
      [{}, { "inputs.topic": "is required" }],
      [{ topic: 42 }, { "inputs.topic": "must be a string" }],
      [{ topic: "x".repeat(41) }, { "inputs.topic": "must be at most 40 characters" }],
      // Undeclared inputs are left out, as Dify does: the missing required one is still named.
      [{ extra: 1 }, { "inputs.topic": "is required" }],
    ] as const;
    for (const [inputs, fields] of cases) {
      const response = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
        auth: consumerKey,
        body: { inputs },
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: "invalid_param", status: 400 });
      expect(response.body.fields).toEqual(fields);
    }
    const chatSlug = await createPromptApp({ mode: "chat" });
    const noQuery = await consumer.api("POST", `/api/app/${chatSlug}/chat-messages`, {
      auth: consumerKey,
      body: { inputs: {} },
    });
    expect(noQuery.body.fields).toEqual({ query: "is required for chat messages" });
    const badMode = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: consumerKey,
      body: { inputs: { topic: "a" }, response_mode: "fast" },
    });
    expect(Object.keys(badMode.body.fields)).toEqual(["response_mode"]);
    expect(vendor.requests.length).toBe(before);
  });
});

describe("vendor failures", () => {
  it("turns a vendor 500 into a 502, a 429 into a 429 with Retry-After, and records the failures", async () => {
    const slug = await createPromptApp({ mode: "completion" });
    vendor.set({ kind: "status", status: 500, message: "boom" });
    const failed = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: consumerKey,
      body: { inputs: { query: "hi" } },
    });
    expect(failed.status).toBe(502);
    expect(failed.body).toMatchObject({
      code: "completion_request_error",
      message: "The model provider failed (HTTP 500)",
    });
    vendor.set({ kind: "status", status: 429, message: "slow down", headers: { "retry-after": "4" } });
    const limited = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: consumerKey,
      body: { inputs: { query: "hi" } },
    });
    // Dify's own InvokeRateLimitError, with the vendor's wait for the caller to back off.
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("4");
    expect(limited.body).toMatchObject({ code: "rate_limit_error", status: 429 });
    expect(limited.body.message).toContain("rate limiting");
    const rows = await server.database.db.select().from(invocations).where(eq(invocations.status, "error"));
    expect(rows.some((row) => row.errorType === "upstream_failed")).toBe(true);
    expect(rows.some((row) => row.errorType === "upstream_rate_limited")).toBe(true);
  });

  it("turns a vendor that hangs into a 504 within the configured timeout, blocking and streaming", async () => {
    const slug = await createPromptApp({ mode: "completion" });
    vendor.set({ kind: "hang" });
    const started = Date.now();
    const response = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: consumerKey,
      body: { inputs: { query: "hi" } },
    });
    const elapsed = Date.now() - started;
    expect(response.status).toBe(504);
    expect(response.body.message).toBe("The model provider did not answer within 2 seconds");
    // At least the configured 2 s; the upper bound only tells the configured timeout from the
    // default 60 s, so no load on the machine can fail it (decision 066).
    expect(elapsed).toBeGreaterThanOrEqual(1900);
    expect(elapsed).toBeLessThan(30_000);

    const streamed = await fetch(`${server.baseUrl}/api/app/${slug}/completion-messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${consumerKey}`, "content-type": "application/json" },
      body: JSON.stringify({ inputs: { query: "hi" }, response_mode: "streaming" }),
    });
    const text = await streamed.text();
    const error = text
      .split("\n\n")
      .filter((b) => b.startsWith("data: "))
      .map((b) => JSON.parse(b.slice(6)))
      .at(-1);
    expect(error).toMatchObject({ event: "error", status: 504, code: "completion_request_error" });
  });
});

describe("idempotency and rate limits", () => {
  it("replays the first answer for a retried Idempotency-Key and refuses the key with another body", async () => {
    const slug = await createPromptApp({ mode: "completion" });
    const call = (query: string) =>
      consumer.api("POST", `/api/app/${slug}/completion-messages`, {
        auth: consumerKey,
        body: { inputs: { query } },
        headers: { "idempotency-key": "retry-123" },
      });
    const first = await call("once");
    const countAfterFirst = vendor.requests.length;
    const replay = await call("once");
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(vendor.requests.length).toBe(countAfterFirst);
    const rows = await server.database.db.select().from(invocations).where(eq(invocations.id, first.body.id));
    expect(rows).toHaveLength(1);
    const conflicting = await call("different");
    expect(conflicting.status).toBe(422);
  });

  it("limits calls per key per minute with RateLimit headers and 429", async () => {
    const limitedDb = await createTestDatabase();
    const limited = await startTestServer(limitedDb, { env: { GATEWAY_RATE_LIMIT_PER_MINUTE: "3" } });
    try {
      const owner = await createCaller(limited.baseUrl);
      const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Limited" } });
      const statuses: number[] = [];
      let last: { status: number; body: any; headers: Headers } | undefined;
      for (let i = 0; i < 5; i++) {
        last = await owner.api("POST", `/api/app/${app.slug}/completion-messages`, {
          body: { inputs: { query: `n${i}` } },
        });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(last?.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(last?.headers.get("ratelimit-remaining")).toBe("0");
      expect(last?.body.code).toBe("rate_limited");
    } finally {
      await limited.stop();
      await limitedDb.destroy();
    }
  });
});

describe("without vendor keys (development)", () => {
  it("answers through the sandbox model, echoing the rendered prompt with real token counts", async () => {
    const sandboxDb = await createTestDatabase();
    const sandbox = await startTestServer(sandboxDb);
    try {
      const owner = await createCaller(sandbox.baseUrl);
      const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Offline" } });
      const response = await owner.api("POST", `/api/app/${app.slug}/completion-messages`, {
        body: { inputs: { query: "hello world" } },
      });
      expect(response.status).toBe(200);
      expect(response.body.answer).toBe("[sandbox gpt4] hello world");
      expect(response.body.metadata.usage.output_tokens).toBeGreaterThan(3);
      const catalog = await owner.api("GET", "/api/models/");
      expect(catalog.body.sandbox_fallback).toBe(true);
      expect(catalog.body.models.find((m: { id: string }) => m.id === "gpt4")).toMatchObject({
        configured: false,
        env_var: "OPENAI_API_KEY",
      });
    } finally {
      await sandbox.stop();
      await sandboxDb.destroy();
    }
  });

  it("answers 503 naming the missing variable in production", async () => {
    const prodDb = await createTestDatabase();
    const prod = await startTestServer(prodDb, {
      env: { NODE_ENV: "production", SMTP_URL: "smtp://127.0.0.1:9" },
    });
    try {
      const owner = await createCaller(prod.baseUrl);
      const { body: app } = await owner.api("POST", "/api/app/", { body: { name: "Prod" } });
      const response = await owner.api("POST", `/api/app/${app.slug}/completion-messages`, {
        body: { inputs: { query: "hi" } },
      });
      expect(response.status).toBe(503);
      expect(response.body.message).toBe(
        "Model 'gpt4' needs OPENAI_API_KEY, which is not configured on this server",
      );
    } finally {
      await prod.stop();
      await prodDb.destroy();
    }
  });
});

it("validates structured output against the output schema", async () => {
  const slug = await createPromptApp({ mode: "completion" });
  await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
    body: {
      output_schema: {
        type: "object",
        properties: { sentiment: { type: "string", enum: ["positive", "negative"] } },
        required: ["sentiment"],
        additionalProperties: false,
      },
      // The app is live: the new version reaches callers once released (docs/decisions/057).
      promote: true,
    },
  });
  vendor.set({ kind: "reply", text: '```json\n{"sentiment": "positive"}\n```' });
  const ok = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
    auth: consumerKey,
    body: { inputs: { query: "great" } },
  });
  expect(ok.status).toBe(200);
  expect(JSON.parse(ok.body.answer)).toEqual({ sentiment: "positive" });
  expect(vendor.requests.at(-1)?.messages[0]?.content).toContain('"sentiment"');
  vendor.set({ kind: "reply", text: '{"sentiment": "meh"}' });
  const bad = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
    auth: consumerKey,
    body: { inputs: { query: "hmm" } },
  });
  expect(bad.status).toBe(502);
  expect(bad.body.message).toContain("output.sentiment must be one of: positive, negative");
});
