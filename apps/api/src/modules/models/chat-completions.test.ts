import http from "node:http";
import type { AddressInfo } from "node:net";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText } from "ai";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createChatCompletions } from "./chat-completions.ts";
import { toUpstreamError } from "./llm.ts";

/**
 * The lean OpenAI-compatible client against a loopback vendor: what it sends, what it reads,
 * and that every failure maps to the same error a caller got through the AI SDK.
 */

type Reply = { status: number; body: string; delayMs?: number };
let reply: Reply = { status: 200, body: "" };
let seen: { url?: string; headers: http.IncomingHttpHeaders; body: string } = { headers: {}, body: "" };
let server: http.Server;
let baseURL: string;
const dispatcher = new Agent();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      seen = { url: req.url, headers: req.headers, body };
      const send = () => {
        res.writeHead(reply.status, { "content-type": "application/json" });
        res.end(reply.body);
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await dispatcher.close();
});

const completion = (
  content: unknown,
  usage: unknown = { prompt_tokens: 11, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 6 } },
) =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage,
  });
const call = {
  model: "gpt-4o-mini",
  system: "Be brief.",
  messages: [
    { role: "user" as const, content: "Hi" },
    { role: "assistant" as const, content: "Hello" },
    { role: "user" as const, content: "Tea?" },
  ],
  temperature: 0.7,
  maxTokens: 256,
  topP: 1,
  frequencyPenalty: 0,
  presencePenalty: 0.5,
};
const complete = () => createChatCompletions({ baseURL, apiKey: "sk-secret", dispatcher });
const failure = async (timeoutMs = 5_000) => {
  try {
    await complete()(call, AbortSignal.timeout(timeoutMs));
  } catch (error) {
    return toUpstreamError(error, 7);
  }
  throw new Error("expected the call to fail");
};

describe("chat completions from an OpenAI-compatible server", () => {
  it("sends the request the AI SDK sends and reads the answer and its token counts", async () => {
    reply = { status: 200, body: completion("Green tea.") };
    const answer = await complete()(call, AbortSignal.timeout(5_000));
    expect(answer).toEqual({ text: "Green tea.", inputTokens: 11, outputTokens: 4, cachedInputTokens: 6 });
    expect(seen.url).toBe("/v1/chat/completions");
    expect(seen.headers.authorization).toBe("Bearer sk-secret");
    expect(seen.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(seen.body)).toEqual({
      model: "gpt-4o-mini",
      max_tokens: 256,
      temperature: 0.7,
      top_p: 1,
      frequency_penalty: 0,
      presence_penalty: 0.5,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello" },
        { role: "user", content: "Tea?" },
      ],
    });
  });

  it("sends no system message without a system prompt, and reads a null answer without usage as empty", async () => {
    reply = { status: 200, body: completion(null, null) };
    const answer = await complete()({ ...call, system: undefined }, AbortSignal.timeout(5_000));
    expect(answer).toEqual({ text: "", inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 });
    expect(JSON.parse(seen.body).messages[0]).toEqual({ role: "user", content: "Hi" });
  });

  it("fails exactly as the AI SDK's openai-compatible provider does, status by status", async () => {
    const sdk = createOpenAICompatible({ name: "openai-compatible", baseURL, apiKey: "sk-secret" }).chatModel(
      call.model,
    );
    for (const [status, body] of [
      [400, JSON.stringify({ error: { message: "max_tokens is too large" } })],
      [401, JSON.stringify({ error: { message: "bad key" } })],
      [429, "{}"],
      [503, "<html>down</html>"],
    ] as const) {
      reply = { status, body };
      const viaSdk = await generateText({
        model: sdk,
        system: call.system,
        messages: call.messages,
        maxRetries: 0,
      }).catch((error) => toUpstreamError(error, 7));
      expect(await failure(), `HTTP ${status}`).toEqual(viaSdk);
    }
  });

  it("maps the vendor's refusals and failures to the errors callers know", async () => {
    reply = { status: 400, body: JSON.stringify({ error: { message: "max_tokens is too large" } }) };
    expect(await failure()).toMatchObject({
      status: 502,
      message: "The model provider refused the request (HTTP 400): max_tokens is too large",
    });
    reply = { status: 401, body: JSON.stringify({ error: { message: "bad key" } }) };
    expect((await failure()).message).toBe("The model provider rejected this server's API key (HTTP 401)");
    // A rate limit stays a 429 with the provider's wait (none given here: one second).
    reply = { status: 429, body: "{}" };
    expect(await failure()).toMatchObject({
      status: 429,
      code: "upstream_rate_limited",
      message: "The model provider is rate limiting requests (HTTP 429); retry after 1 s",
      headers: { "retry-after": "1" },
    });
    reply = { status: 503, body: "<html>down</html>" };
    expect((await failure()).message).toBe("The model provider failed (HTTP 503)");
  });

  // The SDK calls a 200 that is not JSON "refused the request (HTTP 200): Invalid JSON response";
  // a failure to answer is what it is.
  it("refuses an answer that is not a chat completion, or is too large, without a 500", async () => {
    for (const body of ["not json", JSON.stringify({ choices: [] }), completion({ parts: [] })]) {
      reply = { status: 200, body };
      expect(await failure()).toMatchObject({ status: 502, message: "The model provider failed to answer" });
    }
    reply = { status: 200, body: completion("x".repeat(17 * 1024 * 1024)) };
    expect(await failure()).toMatchObject({ status: 502, message: "The model provider failed to answer" });
  });

  it("times out as a 504, and reports a vendor it cannot reach", async () => {
    reply = { status: 200, body: completion("late"), delayMs: 1_000 };
    expect(await failure(100)).toMatchObject({
      status: 504,
      message: "The model provider did not answer within 7 seconds",
    });
    const nowhere = createChatCompletions({ baseURL: "http://127.0.0.1:9/v1", apiKey: "k", dispatcher });
    const unreachable = await nowhere(call, AbortSignal.timeout(5_000)).catch((error) =>
      toUpstreamError(error, 7),
    );
    expect(unreachable).toMatchObject({ status: 502, message: "Could not reach the model provider" });
  });
});
