import http from "node:http";
import type { AddressInfo } from "node:net";
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

describe("preconnect", () => {
  it("opens the vendor connection the first call then reuses, and says which vendors answered", async () => {
    const seen: string[] = [];
    let connections = 0;
    const vendor = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === "/") return void res.writeHead(404).end("not here");
      req.resume().on("end", () => {
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "chatcmpl-1",
            object: "chat.completion",
            created: 0,
            model: "gpt-4o-mini",
            choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      });
    });
    vendor.on("connection", () => {
      connections += 1;
    });
    await new Promise<void>((ready) => vendor.listen(0, "127.0.0.1", ready));
    const origin = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    try {
      const client = createLlmClient(configFor(`${origin}/v1`, "sk-pre"));
      expect(await client.preconnect?.()).toEqual([origin]);
      expect(seen).toEqual(["GET /"]);
      expect(connections).toBe(1);
      // undici gives the socket back to its pool just after the answer's end (a request sent in
      // the same tick would open another); a first call comes later than that.
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect((await client.generate(request("first"))).text).toBe("hi");
      expect(seen).toEqual(["GET /", "POST /v1/chat/completions"]);
      expect(connections).toBe(1);
    } finally {
      vendor.closeAllConnections();
      await new Promise((done) => vendor.close(done));
    }
  });

  it("answers no origin for a vendor that cannot be reached, without throwing", async () => {
    const client = createLlmClient(configFor("http://127.0.0.1:9/v1", "sk-pre"));
    expect(await client.preconnect?.()).toEqual([]);
  });
});
