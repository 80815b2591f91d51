import type { LanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../config.ts";
import { startFakeOpenAi } from "../../test/fake-openai.ts";
import { createLlmClient, createModelCache, type LlmRequest } from "./llm.ts";

const request = (content: string): LlmRequest => ({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content }],
  temperature: 1,
  maxTokens: 64,
  topP: 1,
  frequencyPenalty: 0,
  presencePenalty: 0,
});

const configFor = (baseUrl: string, key: string) =>
  loadConfig({
    NODE_ENV: "test",
    SECRET_KEY: "test-secret-key-that-is-long-enough-0123456789",
    OPENAI_API_KEY: key,
    OPENAI_BASE_URL: baseUrl,
    LLM_TIMEOUT_SECONDS: "5",
  });

describe("model cache", () => {
  it("makes one model object per (provider, vendor model) and reuses it", () => {
    const factory = vi.fn((model: string) => ({ model }) as unknown as LanguageModel);
    const cache = createModelCache({ openai: factory });
    const first = cache.get("openai", "gpt-4o-mini");
    expect(cache.get("openai", "gpt-4o-mini")).toBe(first);
    const other = cache.get("openai", "gpt-4o");
    expect(other).not.toBe(first);
    expect(factory).toHaveBeenCalledTimes(2);
    expect(cache.get("anthropic", "claude")).toBeUndefined();
  });
});

describe("LLM client with cached models", () => {
  let a: Awaited<ReturnType<typeof startFakeOpenAi>>;
  let b: Awaited<ReturnType<typeof startFakeOpenAi>>;
  beforeAll(async () => {
    a = await startFakeOpenAi();
    b = await startFakeOpenAi();
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
  });

  it("keeps calling the base URL and key it was configured with when another configuration appears", async () => {
    const first = createLlmClient(configFor(a.baseUrl, "sk-first"));
    expect((await first.generate(request("one"))).text).toBe("echo: one");
    // A changed configuration (new key and base URL) is a new client: its calls go to the new
    // vendor with the new key, and the first client's cached model still uses the old ones.
    const second = createLlmClient(configFor(b.baseUrl, "sk-second"));
    expect((await second.generate(request("two"))).text).toBe("echo: two");
    expect((await first.generate(request("three"))).text).toBe("echo: three");
    expect(a.requests.map((r) => [r.messages.at(-1)?.content, r.authorization])).toEqual([
      ["one", "Bearer sk-first"],
      ["three", "Bearer sk-first"],
    ]);
    expect(b.requests.map((r) => [r.messages.at(-1)?.content, r.authorization])).toEqual([
      ["two", "Bearer sk-second"],
    ]);
  });

  it("streams through a cached model, and calls in parallel do not mix", async () => {
    const client = createLlmClient(configFor(a.baseUrl, "sk-first"));
    const stream = client.stream(request("a streamed answer"));
    let text = "";
    for await (const piece of stream.chunks) text += piece;
    expect(text).toBe("echo: a streamed answer");
    expect((await stream.result).outputTokens).toBeGreaterThan(0);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.generate(request(`call ${i}`))),
    );
    expect(answers.map((r) => r.text)).toEqual(Array.from({ length: 20 }, (_, i) => `echo: call ${i}`));
  });
});
