import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { generateText, Output, streamText } from "ai";
import { and, eq, sql } from "drizzle-orm";
import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { invocations } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";

let key: string;
let baseURL: string;
let client: OpenAI;
/** A completion app on gpt-4-turbo (the loopback vendor echoes), 30 cents a call. */
let echoApp: string;
/** A completion app on the offline sandbox model, which honours structured output, 5 cents a call. */
let sandboxApp: string;
const ECHO_PRICE = 30;
const SANDBOX_PRICE = 5;
/** The apps' own max_tokens: a caller's larger one is capped to it. */
const APP_MAX_TOKENS = 2048;

const { server, vendor } = useVendorServer();
const consumer = useCaller(server, "Compat Buyer");

beforeAll(async () => {
  const creator = await createCaller(server.baseUrl, "Compat Seller");
  const liveApp = async (name: string, model: string, price: number) => {
    const app = await createPromptApp(
      creator,
      { name, interaction_mode: "completion", visibility: "public", price_cents: price },
      { model, max_tokens: APP_MAX_TOKENS },
    );
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    return app.slug;
  };
  echoApp = await liveApp("Compat echo", "gpt-4-turbo", ECHO_PRICE);
  sandboxApp = await liveApp("Compat sandbox", "sandbox", SANDBOX_PRICE);
  await fundWallet(consumer, 2000);
  key = (await consumer.api("POST", "/api/keys/", { body: { name: "compat" } })).body.key;
  baseURL = `${server.baseUrl}/api/v1`;
  client = new OpenAI({ apiKey: key, baseURL, maxRetries: 0 });
});

/** The consumer's money in cents: available plus held (a lease's unspent rest is held until it idles out). */
async function walletCents(): Promise<number> {
  const { balance_micros, held_micros } = (await consumer.api("GET", "/api/wallet/")).body;
  return ((balance_micros as number) + (held_micros as number)) / 10_000;
}

async function chargedCalls(slug: string): Promise<number> {
  const [row] = await server.database.db
    .select({ n: sql<number>`count(*)::int` })
    .from(invocations)
    .innerJoin(sql`applications`, sql`applications.id = ${invocations.applicationId}`)
    .where(and(eq(sql`applications.slug`, slug), sql`${invocations.chargedCents} > 0`));
  return row?.n ?? 0;
}

/** Runs `call` and checks it was charged exactly `times` calls of `slug` at `price` (0: nothing at all). */
async function charged<T>(slug: string, price: number, call: () => Promise<T>, times = 1): Promise<T> {
  const [before, callsBefore] = [await walletCents(), await chargedCalls(slug)];
  const result = await call();
  expect(await walletCents()).toBe(before - price * times);
  expect(await chargedCalls(slug)).toBe(callsBefore + times);
  return result;
}

/** Runs `call`, which must fail, and checks nothing was charged; answers the error. */
async function refused(call: () => Promise<unknown>): Promise<any> {
  const before = await walletCents();
  const error = await call().then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeDefined();
  expect(await walletCents()).toBe(before);
  return error;
}

const PersonSchema = {
  type: "object",
  properties: {
    name: { type: "string" },
    age: { type: "integer", minimum: 1 },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["name", "age", "tags"],
  additionalProperties: false,
} as const;

describe("openai", () => {
  it("chat.completions.create blocking → works", async () => {
    const completion = await charged(echoApp, ECHO_PRICE, () =>
      client.chat.completions.create({ model: echoApp, messages: [{ role: "user", content: "Say hi" }] }),
    );
    expect(completion.object).toBe("chat.completion");
    expect(completion.choices[0]?.message.content).toBe("echo: Say hi");
    expect(completion.usage).toMatchObject({ completion_tokens: 3, cost: ECHO_PRICE / 100 });
  });

  it("chat.completions.create stream → works", async () => {
    const chunks = await charged(echoApp, ECHO_PRICE, async () => {
      const stream = await client.chat.completions.create({
        model: echoApp,
        messages: [{ role: "user", content: "Count to three" }],
        stream: true,
      });
      const seen: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) seen.push(chunk);
      return seen;
    });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("echo: Count to three");
    // Without stream_options.include_usage, OpenAI sends no usage chunk.
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
  });

  it("chat.completions.create stream with include_usage → works", async () => {
    const chunks = await charged(echoApp, ECHO_PRICE, async () => {
      const stream = await client.chat.completions.create({
        model: echoApp,
        messages: [{ role: "user", content: "Count to three" }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const seen: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) seen.push(chunk);
      return seen;
    });
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({
      completion_tokens: 4,
      cost: ECHO_PRICE / 100,
      charged_cents: ECHO_PRICE,
    });
    expect(chunks.filter((c) => c.usage)).toHaveLength(1);
  });

  it("chat.completions.create parameters (max_tokens, temperature, top_p, stop, seed, penalties) → works", async () => {
    await charged(echoApp, ECHO_PRICE, () =>
      client.chat.completions.create({
        model: echoApp,
        messages: [{ role: "user", content: "Tune" }],
        max_tokens: 10_000,
        temperature: 0.2,
        top_p: 0.5,
        stop: ["END"],
        seed: 7,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        n: 1,
        user: "end-user-1",
      }),
    );
    const sent = vendor.requests.at(-1)?.body ?? {};
    expect(sent).toMatchObject({
      temperature: 0.2,
      top_p: 0.5,
      stop: ["END"],
      seed: 7,
      presence_penalty: 0.1,
    });
    // Capped at the app's own max_tokens, which its price covers.
    expect(sent.max_tokens).toBe(APP_MAX_TOKENS);
  });

  it("chat.completions.create response_format json_schema → works", async () => {
    const completion = await charged(sandboxApp, SANDBOX_PRICE, () =>
      client.chat.completions.create({
        model: sandboxApp,
        messages: [{ role: "user", content: "Describe Ada" }],
        response_format: {
          type: "json_schema",
          json_schema: { name: "person", schema: PersonSchema, strict: true },
        },
      }),
    );
    const person = JSON.parse(completion.choices[0]?.message.content ?? "");
    expect(person).toEqual({ name: expect.stringContaining("Describe Ada"), age: 1, tags: [] });
  });

  it("chat.completions.parse with a zod response format → works", async () => {
    const { zodResponseFormat } = await import("openai/helpers/zod");
    const parsed = await charged(sandboxApp, SANDBOX_PRICE, () =>
      client.chat.completions.parse({
        model: sandboxApp,
        messages: [{ role: "user", content: "A city" }],
        response_format: zodResponseFormat(z.object({ city: z.string(), population: z.number() }), "city"),
      }),
    );
    expect(parsed.choices[0]?.message.parsed).toMatchObject({ population: 0 });
  });

  it("chat.completions.create response_format json_object → works", async () => {
    const completion = await charged(sandboxApp, SANDBOX_PRICE, () =>
      client.chat.completions.create({
        model: sandboxApp,
        messages: [{ role: "user", content: "Answer in JSON" }],
        response_format: { type: "json_object" },
      }),
    );
    expect(JSON.parse(completion.choices[0]?.message.content ?? "")).toHaveProperty("answer");
  });

  it("chat.completions.create tools, app without allow_tools → refused 400 tools", async () => {
    const error = await refused(() =>
      client.chat.completions.create({
        model: echoApp,
        messages: [{ role: "user", content: "Weather?" }],
        tools: [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }],
      }),
    );
    expect(error).toMatchObject({ status: 400, param: "tools", type: "invalid_request_error" });
    expect(error.message).toMatch(/creator has not enabled tools/);
  });

  it("chat.completions.create n > 1 → refused 400 n", async () => {
    const error = await refused(() =>
      client.chat.completions.create({ model: echoApp, messages: [{ role: "user", content: "x" }], n: 2 }),
    );
    expect(error).toMatchObject({ status: 400, param: "n" });
  });

  it("chat.completions.create logprobs → refused 400 logprobs", async () => {
    const error = await refused(() =>
      client.chat.completions.create({
        model: echoApp,
        messages: [{ role: "user", content: "x" }],
        logprobs: true,
      }),
    );
    expect(error).toMatchObject({ status: 400, param: "logprobs" });
  });

  it("chat.completions.create image parts → refused 400 messages[i].content", async () => {
    const error = await refused(() =>
      client.chat.completions.create({
        model: echoApp,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is this?" },
              { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
            ],
          },
        ],
      }),
    );
    expect(error).toMatchObject({ status: 400, param: "messages[0].content" });
  });

  it("chat.completions.create unknown parameter → refused 400 <param>", async () => {
    const error = await refused(() =>
      client.chat.completions.create({
        model: echoApp,
        messages: [{ role: "user", content: "x" }],
        modalities: ["text", "audio"],
      }),
    );
    expect(error).toMatchObject({ status: 400, param: "modalities" });
  });

  it("chat.completions.create Idempotency-Key → works", async () => {
    const options = { headers: { "Idempotency-Key": `compat-${Date.now()}` } };
    const body = { model: echoApp, messages: [{ role: "user" as const, content: "Once" }] };
    const first = await charged(echoApp, ECHO_PRICE, async () => {
      const answer = await client.chat.completions.create(body, options);
      const again = await client.chat.completions.create(body, options).withResponse();
      expect(again.response.headers.get("idempotent-replayed")).toBe("true");
      expect(again.data).toEqual(answer);
      return answer;
    });
    expect(first.choices[0]?.message.content).toBe("echo: Once");
  });

  it("responses.create blocking → works", async () => {
    const response = await charged(echoApp, ECHO_PRICE, () =>
      client.responses.create({ model: echoApp, input: "Say hi", instructions: "Be brief." }),
    );
    expect(response).toMatchObject({ object: "response", status: "completed", model: echoApp });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe("echo: Say hi");
    expect(response.output[0]).toMatchObject({
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "echo: Say hi", annotations: [] }],
    });
    expect(response.usage).toMatchObject({ output_tokens: 3, total_tokens: expect.any(Number), cost: 0.3 });
    expect(vendor.requests.at(-1)?.messages[0]?.content).toMatch(/Be brief\.$/);
  });

  it("responses.create with message items → works", async () => {
    const response = await charged(echoApp, ECHO_PRICE, () =>
      client.responses.create({
        model: echoApp,
        input: [
          { role: "developer", content: "Answer in French." },
          { role: "user", content: [{ type: "input_text", text: "My name is Ada" }] },
          { role: "assistant", content: "Hello Ada" },
          { role: "user", content: "What is my name?" },
        ],
      }),
    );
    expect(response.output_text).toBe("echo: What is my name?");
    expect(vendor.requests.at(-1)?.messages.filter((m) => m.role !== "system")).toEqual([
      { role: "user", content: "My name is Ada" },
      { role: "assistant", content: "Hello Ada" },
      { role: "user", content: "What is my name?" },
    ]);
  });

  it("responses.create stream → works", async () => {
    const events = await charged(echoApp, ECHO_PRICE, async () => {
      const stream = await client.responses.create({ model: echoApp, input: "Count to three", stream: true });
      const seen: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const event of stream) seen.push(event);
      return seen;
    });
    const types = [...new Set(events.map((e) => e.type))];
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const deltas = events.flatMap((e) => (e.type === "response.output_text.delta" ? [e.delta] : []));
    expect(deltas.join("")).toBe("echo: Count to three");
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.usage).toMatchObject({ output_tokens: 4, cost: 0.3 });
  });

  it("responses.stream helper → works", async () => {
    const final = await charged(echoApp, ECHO_PRICE, async () => {
      const stream = client.responses.stream({ model: echoApp, input: "Hello there" });
      return stream.finalResponse();
    });
    expect(final.output_text).toBe("echo: Hello there");
  });

  it("responses.create text.format json_schema → works", async () => {
    const response = await charged(sandboxApp, SANDBOX_PRICE, () =>
      client.responses.create({
        model: sandboxApp,
        input: "Describe Ada",
        text: { format: { type: "json_schema", name: "person", schema: PersonSchema, strict: true } },
      }),
    );
    expect(JSON.parse(response.output_text)).toMatchObject({ age: 1, tags: [] });
  });

  it("responses.create tools, app without allow_tools → refused 400 tools", async () => {
    const error = await refused(() =>
      client.responses.create({
        model: echoApp,
        input: "x",
        tools: [{ type: "function", name: "weather", parameters: { type: "object" }, strict: true }],
      }),
    );
    expect(error).toMatchObject({ status: 400, param: "tools" });
    expect(error.message).toMatch(/creator has not enabled tools/);
  });

  it("responses.create Idempotency-Key → works", async () => {
    const options = { headers: { "Idempotency-Key": `compat-responses-${Date.now()}` } };
    await charged(echoApp, ECHO_PRICE, async () => {
      const first = await client.responses.create({ model: echoApp, input: "Once" }, options);
      const again = await client.responses.create({ model: echoApp, input: "Once" }, options).withResponse();
      expect(again.response.headers.get("idempotent-replayed")).toBe("true");
      expect(again.data.id).toBe(first.id);
      expect(again.data.output_text).toBe("echo: Once");
    });
  });

  it("models.list → works", async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(expect.arrayContaining([echoApp, sandboxApp]));
  });

  it("models.retrieve → works", async () => {
    const model = await client.models.retrieve(echoApp);
    expect(model).toMatchObject({ id: echoApp, object: "model", owned_by: "promptmint" });
  });

  it("models.retrieve unknown model → refused 404 model", async () => {
    await expect(client.models.retrieve("no-such-app")).rejects.toMatchObject({
      status: 404,
      param: "model",
      type: "invalid_request_error",
    });
  });

  it("unknown route and wrong method → refused 404/405 in OpenAI's shape", async () => {
    const unknown = await consumer.api("POST", "/api/v1/embeddings", { auth: key, body: { model: echoApp } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({
      error: {
        message: expect.stringContaining("/api/v1/embeddings"),
        type: "invalid_request_error",
        param: null,
        code: "unknown_url",
      },
    });
    const dify = await consumer.api("GET", `/api/v1/app/${echoApp}/no-such-route`, { auth: key });
    expect(dify).toMatchObject({ status: 404, body: { code: "not_found", status: 404 } });
    const wrong = await consumer.api("GET", "/api/v1/chat/completions", { auth: key });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("POST");
    expect(wrong.body.error).toMatchObject({ type: "invalid_request_error", code: "method_not_allowed" });
  });
});

/** The AI SDK's streamed text of "Count to three" from `model`, read to its end. */
async function streamedText(model: Parameters<typeof streamText>[0]["model"]): Promise<string> {
  const result = streamText({ model, prompt: "Count to three", maxRetries: 0 });
  let all = "";
  for await (const part of result.textStream) all += part;
  return all;
}

describe("ai + @ai-sdk/openai", () => {
  const provider = () => createOpenAI({ apiKey: key, baseURL });

  it("generateText with openai(slug) (Responses API) → works", async () => {
    const result = await charged(echoApp, ECHO_PRICE, () =>
      generateText({ model: provider()(echoApp), prompt: "Say hi", maxRetries: 0 }),
    );
    expect(result.text).toBe("echo: Say hi");
    expect(result.usage.outputTokens).toBe(3);
  });

  it("streamText with openai(slug) (Responses API) → works", async () => {
    const text = await charged(echoApp, ECHO_PRICE, () => streamedText(provider()(echoApp)));
    expect(text).toBe("echo: Count to three");
  });

  it("generateText with openai.chat(slug) → works", async () => {
    const result = await charged(echoApp, ECHO_PRICE, () =>
      generateText({ model: provider().chat(echoApp), system: "Be brief.", prompt: "Say hi", maxRetries: 0 }),
    );
    expect(result.text).toBe("echo: Say hi");
  });

  it("streamText with openai.chat(slug) → works", async () => {
    const text = await charged(echoApp, ECHO_PRICE, () => streamedText(provider().chat(echoApp)));
    expect(text).toBe("echo: Count to three");
  });

  it("generateText with Output.object (Responses API) → works", async () => {
    const result = await charged(sandboxApp, SANDBOX_PRICE, () =>
      generateText({
        model: provider()(sandboxApp),
        prompt: "A city",
        output: Output.object({ schema: z.object({ city: z.string(), population: z.number() }) }),
        maxRetries: 0,
      }),
    );
    expect(result.output).toMatchObject({ city: expect.stringContaining("A city"), population: 0 });
  });

  it("generateText with Output.object and openai.chat(slug) → works", async () => {
    const result = await charged(sandboxApp, SANDBOX_PRICE, () =>
      generateText({
        model: provider().chat(sandboxApp),
        prompt: "A city",
        output: Output.object({ schema: z.object({ city: z.string(), population: z.number() }) }),
        maxRetries: 0,
      }),
    );
    expect(result.output).toMatchObject({ population: 0 });
  });
});

describe("ai + @ai-sdk/openai-compatible", () => {
  const provider = () =>
    createOpenAICompatible({ name: "promptmint", apiKey: key, baseURL, includeUsage: true });

  it("generateText → works", async () => {
    const result = await charged(echoApp, ECHO_PRICE, () =>
      generateText({ model: provider()(echoApp), prompt: "Say hi", maxRetries: 0 }),
    );
    expect(result.text).toBe("echo: Say hi");
  });

  it("streamText → works", async () => {
    const { text, usage } = await charged(echoApp, ECHO_PRICE, async () => {
      const result = streamText({ model: provider()(echoApp), prompt: "Count to three", maxRetries: 0 });
      let all = "";
      for await (const part of result.textStream) all += part;
      return { text: all, usage: await result.usage };
    });
    expect(text).toBe("echo: Count to three");
    expect(usage.outputTokens).toBe(4);
  });
});

describe("@langchain/openai", () => {
  const chat = (options: Record<string, unknown> = {}) =>
    new ChatOpenAI({ model: echoApp, apiKey: key, configuration: { baseURL }, maxRetries: 0, ...options });

  it("ChatOpenAI.invoke → works", async () => {
    const message = await charged(echoApp, ECHO_PRICE, () => chat().invoke("Say hi"));
    expect(message.content).toBe("echo: Say hi");
  });

  it("ChatOpenAI.stream → works", async () => {
    const text = await charged(echoApp, ECHO_PRICE, async () => {
      let all = "";
      for await (const chunk of await chat().stream("Count to three")) all += chunk.content as string;
      return all;
    });
    expect(text).toBe("echo: Count to three");
  });

  it("ChatOpenAI useResponsesApi invoke → works", async () => {
    const message = await charged(echoApp, ECHO_PRICE, () =>
      chat({ useResponsesApi: true }).invoke("Say hi"),
    );
    expect(message.text).toBe("echo: Say hi");
  });

  it("ChatOpenAI useResponsesApi stream → works", async () => {
    const text = await charged(echoApp, ECHO_PRICE, async () => {
      let all = "";
      for await (const chunk of await chat({ useResponsesApi: true }).stream("Count to three"))
        all += chunk.text;
      return all;
    });
    expect(text).toBe("echo: Count to three");
  });

  it("ChatOpenAI.withStructuredOutput → works", async () => {
    const structured = chat({ model: sandboxApp }).withStructuredOutput(
      z.object({ city: z.string(), population: z.number() }),
      { method: "jsonSchema" },
    );
    const city = await charged(sandboxApp, SANDBOX_PRICE, () => structured.invoke("A city"));
    expect(city).toMatchObject({ population: 0 });
  });

  it("ChatOpenAI.bindTools, app without allow_tools → refused 400 tools", async () => {
    const tool = {
      type: "function" as const,
      function: { name: "weather", parameters: { type: "object", properties: {} } },
    };
    const error = await refused(() => chat().bindTools([tool]).invoke("Weather?"));
    expect(String(error)).toMatch(/tools.*creator has not enabled tools/);
  });
});
