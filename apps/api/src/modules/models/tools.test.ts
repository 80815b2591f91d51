import http from "node:http";
import { createAnthropic } from "@ai-sdk/anthropic";
import { generateText } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../config.ts";
import { listenOnLoopback } from "../../test/loopback.ts";
import { createLlmClient, type LlmRequest } from "./llm.ts";
import {
  aiSdkToolSettings,
  type ChatMessage,
  modelMessagesOf,
  type StreamPiece,
  toolCallOf,
} from "./tools.ts";

const weather = {
  name: "weather",
  description: "The weather in a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  },
};

/** A tool loop's conversation: asked, the model's call, the caller's result. */
const loop: ChatMessage[] = [
  { role: "user", content: "Weather in Paris?" },
  {
    role: "assistant",
    content: "",
    toolCalls: [{ id: "toolu_1", name: "weather", arguments: '{"city":"Paris"}' }],
  },
  { role: "tool", toolCallId: "toolu_1", content: "sunny" },
];

describe("tools to Anthropic (tool_use / tool_result) through the AI SDK", () => {
  let received: Record<string, any> | undefined;
  let close: () => Promise<void>;
  let baseURL: string;
  beforeAll(async () => {
    // A loopback Anthropic Messages API answering with a tool_use block.
    const server = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (chunk) => {
        raw += chunk;
      });
      req.on("end", () => {
        received = JSON.parse(raw);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: "claude-3-haiku-20240307",
            content: [{ type: "tool_use", id: "toolu_2", name: "weather", input: { city: "Lyon" } }],
            stop_reason: "tool_use",
            stop_sequence: null,
            usage: { input_tokens: 20, output_tokens: 10 },
          }),
        );
      });
    });
    const listening = await listenOnLoopback(server);
    close = listening.close;
    baseURL = `http://127.0.0.1:${listening.port}/v1`;
  });
  afterAll(() => close?.());

  it("sends the tools, the choice, no parallel use and the loop's turns as Anthropic's blocks, and reads its tool_use back", async () => {
    const anthropic = createAnthropic({ apiKey: "sk-ant-test", baseURL });
    const result = await generateText({
      model: anthropic("claude-3-haiku-20240307"),
      messages: modelMessagesOf(loop),
      ...aiSdkToolSettings({ tools: [weather], choice: { name: "weather" }, parallel: false }),
      maxRetries: 0,
    });
    expect(received?.tools).toEqual([
      expect.objectContaining({ name: "weather", input_schema: expect.objectContaining({ type: "object" }) }),
    ]);
    expect(received?.tool_choice).toEqual({ type: "tool", name: "weather", disable_parallel_tool_use: true });
    expect(received?.messages[1].content).toEqual([
      expect.objectContaining({ type: "tool_use", id: "toolu_1", name: "weather", input: { city: "Paris" } }),
    ]);
    expect(received?.messages[2]).toMatchObject({
      role: "user",
      content: [expect.objectContaining({ type: "tool_result", tool_use_id: "toolu_1", content: "sunny" })],
    });
    expect(result.toolCalls.map(toolCallOf)).toEqual([
      { id: "toolu_2", name: "weather", arguments: '{"city":"Lyon"}' },
    ]);
  });
});

describe("the sandbox model with tools", () => {
  // No vendor key outside production: every model is answered by the sandbox.
  const llm = createLlmClient(
    loadConfig({ NODE_ENV: "test", SECRET_KEY: "test-secret-key-that-is-long-enough-0123456789" }),
  );
  const request = (messages: ChatMessage[], choice?: "auto" | "none" | "required"): LlmRequest => ({
    model: "gpt-4o-mini",
    messages,
    temperature: 1,
    maxTokens: 64,
    topP: 1,
    frequencyPenalty: 0,
    presencePenalty: 0,
    tools: { tools: [weather], choice },
  });

  it("calls the first tool with arguments sampled from its schema until a tool result arrives", async () => {
    const first = await llm.generate(request([{ role: "user", content: "Paris" }]));
    expect(first).toMatchObject({ text: "", answeredBy: "sandbox" });
    expect(first.toolCalls).toEqual([
      { id: "call_sandbox_1", name: "weather", arguments: '{"city":"Paris"}' },
    ]);
    const after = await llm.generate(request(loop));
    expect(after.toolCalls).toBeUndefined();
    expect(after.text).toBe("[sandbox gpt-4o-mini] sunny");
  });

  it("answers text when tool_choice is none, and calls a tool even after a result when it is required", async () => {
    expect(
      (await llm.generate(request([{ role: "user", content: "Hi" }], "none"))).toolCalls,
    ).toBeUndefined();
    expect((await llm.generate(request(loop, "required"))).toolCalls?.[0]?.name).toBe("weather");
  });

  it("streams its tool call as one piece", async () => {
    const streamed = llm.stream(request([{ role: "user", content: "Oslo" }]));
    const pieces: StreamPiece[] = [];
    for await (const piece of streamed.chunks) pieces.push(piece);
    expect(pieces).toEqual([
      { toolCall: { index: 0, id: "call_sandbox_1", name: "weather", arguments: '{"city":"Oslo"}' } },
    ]);
    expect((await streamed.result).toolCalls).toHaveLength(1);
  });
});
