import { expect, it } from "vitest";
import { type Caller, callerAt, createCaller, fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useTestServers } from "../../test/use-test-server.ts";

// Two API processes on one PostgreSQL (decision 040): each caches prompts, pinned ones under
// `app@pin` (decision 057). A label moved through one process changes what calls through the
// other get as soon as the change feed tells it, whichever protocol they come in.

const { urls } = useTestServers();

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000) {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > timeoutMs)
      throw new Error(`still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The version each protocol's answer names through `caller`'s server. */
function versions(caller: Caller, slug: string) {
  return {
    openai: async (model: string) =>
      (
        await caller.api("POST", "/api/v1/chat/completions", {
          body: { model, messages: [{ role: "user", content: "hello" }] },
        })
      ).body.system_fingerprint as string,
    dify: async (pin?: string) =>
      (
        await caller.api("POST", `/api/app/${slug}/chat-messages`, {
          body: { inputs: {}, query: "hello", response_mode: "blocking", user: "two" },
          headers: pin ? { "promptmint-version": pin } : {},
        })
      ).body.metadata?.promptmint_version as string,
    mcp: async (pin: string) => {
      const answer = await caller.api("POST", `/api/app/${slug}/mcp`, {
        body: {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: slug, arguments: { query: "hello" }, _meta: { "promptmint/version": pin } },
        },
        headers: { accept: "application/json, text/event-stream" },
      });
      const body =
        typeof answer.body === "string"
          ? JSON.parse(/^data: (.*)$/m.exec(answer.body)?.[1] ?? "null")
          : answer.body;
      return body?.result?._meta?.["promptmint/version"] as string;
    },
  };
}

it("a label moved through one process is what calls through the other get, in every protocol", async () => {
  expect(urls).toHaveLength(2);
  const [first, second] = urls as [string, string];
  const creator = await createCaller(first, "Two-process Pin Seller");
  const buyer = await createCaller(first, "Two-process Pin Buyer");
  await fundWallet(buyer, 2000);
  const { slug } = await createLiveApp(
    creator,
    { price_cents: 5, interaction_mode: "chat" },
    { model: "sandbox", prompt_template: "first: {{query}}" },
  );
  const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
    body: { prompt_template: "second: {{query}}" },
  });
  const promptId = saved.body.id as string;
  expect(
    (await creator.api("PUT", `/api/prompts/${promptId}/labels/staging`, { body: { version: 3 } })).status,
  ).toBe(200);

  // The other process answers (and caches) production v2 and staging v3.
  const other = versions(callerAt(second, buyer), slug);
  expect(await other.openai(slug)).toBe("v2");
  expect(await other.openai(`${slug}@staging`)).toBe("v3");
  expect(await other.dify("staging")).toBe("v3");
  expect(await other.mcp("staging")).toBe("v3");

  // Through the first process: staging back to v2, production forward to v3.
  expect(
    (await creator.api("PUT", `/api/prompts/${promptId}/labels/staging`, { body: { version: 2 } })).status,
  ).toBe(200);
  expect(
    (await creator.api("PUT", `/api/prompts/${promptId}/labels/production`, { body: { version: 3 } })).status,
  ).toBe(200);

  await eventually(
    () => other.openai(`${slug}@staging`),
    (version) => version === "v2",
  );
  expect(await other.dify("staging")).toBe("v2");
  expect(await other.mcp("staging")).toBe("v2");
  await eventually(
    () => other.openai(slug),
    (version) => version === "v3",
  );
  expect(await other.dify()).toBe("v3");
  // A version pinned by number never moves.
  expect(await other.mcp("v2")).toBe("v2");
});
