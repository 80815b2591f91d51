import http from "node:http";
import type { AddressInfo } from "node:net";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError } from "@ai-sdk/provider";
import { generateText } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toUpstreamError } from "../modules/models/llm.ts";
import { listenOnLoopback } from "../test/loopback.ts";
import { createUpstreamFetch } from "./upstream-fetch.ts";

let base: string;
let close: () => Promise<void>;

beforeAll(async () => {
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const url = req.url ?? "";
      if (url === "/json") {
        res.writeHead(201, {
          "content-type": "application/json",
          "x-test": "yes",
          "set-cookie": ["a=1", "b=2"],
        });
        res.end(JSON.stringify({ method: req.method, body, header: req.headers["x-sent"] ?? null }));
      } else if (url === "/events") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: one\n\n");
        setTimeout(() => res.end("data: two\n\n"), 20);
      } else if (url === "/empty") {
        res.writeHead(204).end();
      } else if (url === "/redirect") {
        res.writeHead(307, { location: "/json" }).end();
      } else if (url.endsWith("/chat/completions") && url.startsWith("/failing")) {
        res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"down"}}');
      } else if (url === "/hang-body") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"partial":');
      }
      // any other URL: never answered
    });
  });
  const listening = await listenOnLoopback(server);
  base = `http://127.0.0.1:${listening.port}`;
  close = listening.close;
});
afterAll(() => close?.());

describe("upstream fetch", () => {
  const fetch = createUpstreamFetch();

  it("answers like the global fetch: status, headers, body", async () => {
    for (const f of [fetch, globalThis.fetch]) {
      const res = await f(`${base}/json`, {
        method: "POST",
        headers: { "content-type": "text/plain", "x-sent": "42" },
        body: "hello",
      });
      expect(res.status).toBe(201);
      expect(res.ok).toBe(true);
      expect(res.headers.get("x-test")).toBe("yes");
      expect(res.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
      expect(await res.json()).toEqual({ method: "POST", body: "hello", header: "42" });
    }
  });

  it("streams server-sent events as they come", async () => {
    const res = await fetch(`${base}/events`, { method: "GET" });
    const text = await new Response(res.body).text();
    expect(text).toBe("data: one\n\ndata: two\n\n");
  });

  it("answers 204 without a body and follows redirects", async () => {
    expect((await fetch(`${base}/empty`)).status).toBe(204);
    const redirected = await fetch(`${base}/redirect`, { method: "POST", body: "again" });
    expect(redirected.status).toBe(201);
    expect(await redirected.json()).toMatchObject({ method: "POST", body: "again" });
  });

  it("rejects with the abort reason, before the headers and while the body is read", async () => {
    await expect(fetch(`${base}/never`, { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({
      name: "TimeoutError",
    });
    await expect(fetch(`${base}/hang-body`, { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({
      name: "TimeoutError",
    });
  });

  it("rejects a refused connection as TypeError('fetch failed') with the cause", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const error = await fetch(`http://127.0.0.1:${port}/json`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe("fetch failed");
    expect((error as TypeError).cause).toMatchObject({ code: "ECONNREFUSED" });
  });

  it("gives the AI SDK the same errors as the global fetch", async () => {
    const errorOf = async (baseURL: string, f?: typeof globalThis.fetch) => {
      const model = createOpenAICompatible({ name: "t", baseURL, apiKey: "k", fetch: f }).chatModel("m");
      return generateText({
        model,
        prompt: "hi",
        maxRetries: 0,
        abortSignal: AbortSignal.timeout(300),
      }).catch((e: unknown) => e);
    };
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    // A vendor answering 500, one that is not there, one that does not answer in time.
    for (const url of [`${base}/failing`, `http://127.0.0.1:${deadPort}`, `${base}/silent`]) {
      const mine = await errorOf(url, fetch);
      const theirs = await errorOf(url);
      expect(APICallError.isInstance(mine)).toBe(APICallError.isInstance(theirs));
      expect((mine as Error).name).toBe((theirs as Error).name);
      expect(toUpstreamError(mine, 1).message).toBe(toUpstreamError(theirs, 1).message);
    }
  });
});
