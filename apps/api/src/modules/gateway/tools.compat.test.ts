import { createOpenAI } from "@ai-sdk/openai";
import { type AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { Agent, tool as agentTool, OpenAIProvider, Runner } from "@openai/agents";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { and, eq, sql } from "drizzle-orm";
import OpenAI from "openai";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { invocations } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";

// Tool loops through a prompt app whose creator allowed tools (docs/decisions/053), each driven by
// the real client from npm against the loopback vendor's tool-calling model: every request of a
// loop is one paid call, charged once.

let key: string;
let baseURL: string;
let client: OpenAI;
/** A completion app on gpt-4-turbo (the loopback vendor), tools allowed, 7 cents a call. */
let toolApp: string;
const PRICE = 7;
const ARGUMENTS = JSON.stringify({ city: "Paris" });

const { server, vendor } = useVendorServer();
const consumer = useCaller(server, "Tools Buyer");

beforeAll(async () => {
  const creator = await createCaller(server.baseUrl, "Tools Seller");
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name: "Weather agent",
      interaction_mode: "completion",
      visibility: "public",
      price_cents: PRICE,
      allow_tools: true,
    },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
    body: { model: "gpt-4-turbo", system_prompt: "You are a weather assistant." },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  toolApp = app.slug;
  await fundWallet(consumer, 2000);
  key = (await consumer.api("POST", "/api/keys/", { body: { name: "tools" } })).body.key;
  baseURL = `${server.baseUrl}/api/v1`;
  client = new OpenAI({ apiKey: key, baseURL, maxRetries: 0 });
});

beforeEach(() => vendor.set({ kind: "tools", arguments: ARGUMENTS }));

/** The consumer's money in cents: available plus held. */
async function walletCents(): Promise<number> {
  const { balance_micros, held_micros } = (await consumer.api("GET", "/api/wallet/")).body;
  return ((balance_micros as number) + (held_micros as number)) / 10_000;
}

async function chargedCalls(): Promise<number> {
  const [row] = await server.database.db
    .select({ n: sql<number>`count(*)::int` })
    .from(invocations)
    .innerJoin(sql`applications`, sql`applications.id = ${invocations.applicationId}`)
    .where(and(eq(sql`applications.slug`, toolApp), sql`${invocations.chargedCents} > 0`));
  return row?.n ?? 0;
}

/**
 * Runs a tool loop and checks that each model call of it (each request the vendor received) was
 * one charge of the app's price, and that there were `modelCalls` of them.
 */
async function chargedPerModelCall<T>(modelCalls: number, loop: () => Promise<T>): Promise<T> {
  const [before, callsBefore, requestsBefore] = [
    await walletCents(),
    await chargedCalls(),
    vendor.requests.length,
  ];
  const result = await loop();
  expect(vendor.requests.length - requestsBefore).toBe(modelCalls);
  expect(await chargedCalls()).toBe(callsBefore + modelCalls);
  expect(await walletCents()).toBe(before - PRICE * modelCalls);
  return result;
}

/** What the vendor received in the loop's last call: the tool's result after the model's call of it. */
function expectResultSentToVendor(result: string) {
  const last = vendor.requests.at(-1);
  const messages = last?.body.messages as { role: string; content: unknown; tool_call_id?: string }[];
  expect(messages[0]).toMatchObject({ role: "system" });
  expect(String(messages[0]?.content)).toContain("You are a weather assistant.");
  const toolMessage = messages.find((m) => m.role === "tool");
  expect(toolMessage).toMatchObject({ content: result });
  expect(toolMessage?.tool_call_id).toMatch(/^call_fake_/);
  expect(messages.some((m) => m.role === "assistant")).toBe(true);
}

const weatherParameters = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false,
} as const;

describe("openai", () => {
  it("chat.completions.create tool loop (tools, tool_calls, tool message) → works", async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: "function", function: { name: "weather", parameters: weatherParameters } },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];
    const final = await chargedPerModelCall(2, async () => {
      const first = await client.chat.completions.create({ model: toolApp, messages, tools });
      const choice = first.choices[0];
      expect(choice?.finish_reason).toBe("tool_calls");
      const call = choice?.message.tool_calls?.[0];
      expect(call).toMatchObject({ type: "function", function: { name: "weather", arguments: ARGUMENTS } });
      messages.push(choice?.message as OpenAI.ChatCompletionMessageParam);
      messages.push({ role: "tool", tool_call_id: call?.id ?? "", content: "sunny, 21 C" });
      return client.chat.completions.create({ model: toolApp, messages, tools });
    });
    expect(final.choices[0]).toMatchObject({
      finish_reason: "stop",
      message: { content: "final: sunny, 21 C" },
    });
    expectResultSentToVendor("sunny, 21 C");
    expect(vendor.requests.at(-1)?.body.tools).toEqual(tools);
  });

  it("chat.completions.create stream with tools (delta.tool_calls) → works", async () => {
    const chunks = await chargedPerModelCall(1, async () => {
      const stream = await client.chat.completions.create({
        model: toolApp,
        messages: [{ role: "user", content: "Weather?" }],
        tools: [{ type: "function", function: { name: "weather", parameters: weatherParameters } }],
        tool_choice: "required",
        parallel_tool_calls: false,
        stream: true,
      });
      const seen: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) seen.push(chunk);
      return seen;
    });
    const pieces = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(pieces[0]).toMatchObject({
      index: 0,
      type: "function",
      function: { name: "weather", arguments: "" },
    });
    expect(pieces[0]?.id).toMatch(/^call_fake_/);
    expect(pieces.slice(1).every((p) => p.id === undefined && p.index === 0)).toBe(true);
    expect(pieces.map((p) => p.function?.arguments ?? "").join("")).toBe(ARGUMENTS);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
    expect(vendor.requests.at(-1)?.body).toMatchObject({
      tool_choice: "required",
      parallel_tool_calls: false,
    });
  });

  it("chat.completions.stream helper with tools → works", async () => {
    const completion = await chargedPerModelCall(1, async () => {
      const stream = client.chat.completions.stream({
        model: toolApp,
        messages: [{ role: "user", content: "Weather?" }],
        tools: [{ type: "function", function: { name: "weather", parameters: weatherParameters } }],
      });
      return stream.finalChatCompletion();
    });
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      function: { name: "weather", arguments: ARGUMENTS },
    });
  });

  it("responses.create tool loop (function_call, function_call_output) → works", async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: "function", name: "weather", parameters: weatherParameters, strict: true },
    ];
    const final = await chargedPerModelCall(2, async () => {
      const first = await client.responses.create({ model: toolApp, input: "Weather in Paris?", tools });
      const call = first.output.find((item) => item.type === "function_call");
      expect(call).toMatchObject({ name: "weather", arguments: ARGUMENTS, status: "completed" });
      expect(first.tools).toMatchObject([{ type: "function", name: "weather" }]);
      return client.responses.create({
        model: toolApp,
        tools,
        input: [
          { role: "user", content: "Weather in Paris?" },
          ...(first.output as OpenAI.Responses.ResponseInputItem[]),
          { type: "function_call_output", call_id: (call as { call_id: string }).call_id, output: "rain" },
        ],
      });
    });
    expect(final.output_text).toBe("final: rain");
    expectResultSentToVendor("rain");
  });

  it("responses.create tool loop by previous_response_id (function_call_output only) → works", async () => {
    const tools: OpenAI.Responses.Tool[] = [
      { type: "function", name: "weather", parameters: weatherParameters, strict: true },
    ];
    const final = await chargedPerModelCall(2, async () => {
      const first = await client.responses.create({ model: toolApp, input: "Weather in Lyon?", tools });
      const call = first.output.find((item) => item.type === "function_call") as { call_id: string };
      // As agent frameworks continue a stored response: only the tool's result is sent again.
      return client.responses.create({
        model: toolApp,
        tools,
        previous_response_id: first.id,
        input: [{ type: "function_call_output", call_id: call.call_id, output: "windy" }],
      });
    });
    expect(final.output_text).toBe("final: windy");
    expectResultSentToVendor("windy");
    const messages = vendor.requests.at(-1)?.body.messages as { role: string; content: unknown }[];
    expect(messages.find((m) => m.role === "user")).toMatchObject({ content: "Weather in Lyon?" });
  });

  it("responses.create stream with tools (function_call_arguments events) → works", async () => {
    const events = await chargedPerModelCall(1, async () => {
      const stream = await client.responses.create({
        model: toolApp,
        input: "Weather?",
        tools: [{ type: "function", name: "weather", parameters: weatherParameters, strict: true }],
        stream: true,
      });
      const seen: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const event of stream) seen.push(event);
      return seen;
    });
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const done = events.find((e) => e.type === "response.output_item.done");
    expect(done).toMatchObject({
      output_index: 0,
      item: { type: "function_call", name: "weather", arguments: ARGUMENTS },
    });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  });

  it("chat.completions.create tool message without allow_tools → refused 400 messages[1].role", async () => {
    const creator = await createCaller(server.baseUrl, "No tools seller");
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name: "Plain", visibility: "public", price_cents: PRICE },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    const before = await walletCents();
    const error = await client.chat.completions
      .create({
        model: app.slug,
        messages: [
          { role: "user", content: "Weather?" },
          { role: "tool", tool_call_id: "call_1", content: "rain" },
        ],
      })
      .catch((failure: unknown) => failure);
    expect(error).toMatchObject({ status: 400, param: "messages[1].role" });
    expect((error as Error).message).toMatch(/creator has not enabled tools/);
    expect(await walletCents()).toBe(before);
  });
});

describe("ai + @ai-sdk/openai", () => {
  const weather = tool({
    description: "The weather in a city",
    inputSchema: jsonSchema<{ city: string }>(weatherParameters),
    execute: async ({ city }) => `cloudy in ${city}`,
  });

  it("generateText multi-step with a tool and stopWhen → works", async () => {
    const openai = createOpenAI({ apiKey: key, baseURL });
    const result = await chargedPerModelCall(2, () =>
      generateText({
        model: openai.chat(toolApp),
        prompt: "Weather in Paris?",
        tools: { weather },
        stopWhen: stepCountIs(5),
      }),
    );
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]?.toolResults[0]).toMatchObject({ toolName: "weather", output: "cloudy in Paris" });
    expect(result.text).toBe("final: cloudy in Paris");
    expectResultSentToVendor("cloudy in Paris");
  });

  it("streamText multi-step with a tool and stopWhen → works", async () => {
    const openai = createOpenAI({ apiKey: key, baseURL });
    const text = await chargedPerModelCall(2, async () => {
      const result = streamText({
        model: openai.chat(toolApp),
        prompt: "Weather in Paris?",
        tools: { weather },
        stopWhen: stepCountIs(5),
      });
      return result.text;
    });
    expect(text).toBe("final: cloudy in Paris");
  });

  it("generateText multi-step on the Responses API → works", async () => {
    const openai = createOpenAI({ apiKey: key, baseURL });
    const result = await chargedPerModelCall(2, () =>
      generateText({
        model: openai.responses(toolApp),
        prompt: "Weather in Paris?",
        tools: { weather },
        stopWhen: stepCountIs(5),
        providerOptions: { openai: { store: false } },
      }),
    );
    expect(result.text).toBe("final: cloudy in Paris");
  });
});

describe("@langchain/openai", () => {
  it("ChatOpenAI.bindTools tool loop → works", async () => {
    const model = new ChatOpenAI({
      model: toolApp,
      apiKey: key,
      configuration: { baseURL },
      maxRetries: 0,
    }).bindTools([
      {
        type: "function",
        function: { name: "weather", description: "Weather", parameters: weatherParameters },
      },
    ]);
    const answer = await chargedPerModelCall(2, async () => {
      const messages: BaseMessage[] = [new HumanMessage("Weather in Paris?")];
      for (let step = 0; step < 5; step++) {
        const reply = (await model.invoke(messages)) as AIMessage;
        messages.push(reply);
        if (!reply.tool_calls?.length) return reply;
        for (const call of reply.tool_calls)
          messages.push(
            new ToolMessage({ tool_call_id: call.id ?? "", content: `windy in ${call.args.city}` }),
          );
      }
      throw new Error("the loop did not end");
    });
    expect(answer.content).toBe("final: windy in Paris");
  });
});

describe("@openai/agents", () => {
  /** An agent with one function tool, on the app, through the gateway. */
  function weatherAgent() {
    const executed: string[] = [];
    const weather = agentTool({
      name: "weather",
      description: "The weather in a city",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        executed.push(city);
        return `foggy in ${city}`;
      },
    });
    const agent = new Agent({
      name: "Weather",
      instructions: "Answer with the weather.",
      model: toolApp,
      tools: [weather],
    });
    return { agent, executed };
  }

  it("Agent with a function tool, Responses model → works", async () => {
    const { agent, executed } = weatherAgent();
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }),
      tracingDisabled: true,
    });
    const result = await chargedPerModelCall(2, () => runner.run(agent, "Weather in Paris?"));
    expect(executed).toEqual(["Paris"]);
    expect(result.finalOutput).toBe("final: foggy in Paris");
  });

  it("Agent with a function tool, chat completions model → works", async () => {
    const { agent, executed } = weatherAgent();
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: false }),
      tracingDisabled: true,
    });
    const result = await chargedPerModelCall(2, () => runner.run(agent, "Weather in Paris?"));
    expect(executed).toEqual(["Paris"]);
    expect(result.finalOutput).toBe("final: foggy in Paris");
  });
});
