import { eq, sql } from "drizzle-orm";
import OpenAI from "openai";
import { beforeAll, expect, it } from "vitest";
import { invocations } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { reconcile } from "../billing/reconcile.ts";

let client: OpenAI;
const slugs: Record<string, string> = {};

const { server, vendor } = useVendorServer();
const creator = useCaller(server, "OpenAI Seller");
const consumer = useCaller(server, "OpenAI Buyer");

beforeAll(async () => {
  for (const mode of ["completion", "chat"] as const) {
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name: `OpenAI ${mode}`, interaction_mode: mode, visibility: "public", price_cents: 30 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    slugs[mode] = app.slug;
  }
  await fundWallet(consumer, 300);
  const key = (await consumer.api("POST", "/api/keys/", { body: { name: "openai" } })).body.key;
  client = openAiWith(key);
});

/** The official SDK pointed at this server's OpenAI-compatible API with `apiKey`. */
const openAiWith = (apiKey: string) =>
  new OpenAI({ apiKey, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });

/** Asks the completion app "x" through `sdk`. */
const askCompletionApp = (sdk: OpenAI) =>
  sdk.chat.completions.create({
    model: slugs.completion as string,
    messages: [{ role: "user", content: "x" }],
  });

/** The consumer's money: available plus held (a lease's unspent rest is held until it idles out). */
const walletCents = async () => {
  const { balance_micros, held_micros } = (await consumer.api("GET", "/api/wallet/")).body;
  return ((balance_micros as number) + (held_micros as number)) / 10_000;
};

it("answers the official openai SDK with model = app slug, blocking, and charges once", async () => {
  const before = await walletCents();
  const completion = await client.chat.completions.create({
    model: slugs.completion as string,
    messages: [{ role: "user", content: "Say hi" }],
  });
  expect(completion.choices[0]?.message.content).toBe("echo: Say hi");
  expect(completion.usage).toMatchObject({ completion_tokens: 3 });
  expect(completion.model).toBe(slugs.completion);
  expect(await walletCents()).toBe(before - 30);
});

it("streams, with usage in a last chunk of its own when asked, and charges once", async () => {
  const before = await walletCents();
  const stream = await client.chat.completions.create({
    model: slugs.completion as string,
    messages: [{ role: "user", content: "Count to three" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? "";
    if (chunk.usage) usage = chunk.usage;
  }
  expect(text).toBe("echo: Count to three");
  expect(usage?.completion_tokens).toBe(4);
  expect(await walletCents()).toBe(before - 30);
});

it("passes the client's earlier turns to a chat app, and its system message after the app's own", async () => {
  const reply = await client.chat.completions.create({
    model: slugs.chat as string,
    messages: [
      { role: "system", content: "Answer in French." },
      { role: "user", content: "My name is Ada" },
      { role: "assistant", content: "Hello Ada" },
      { role: "user", content: [{ type: "text", text: "What is my name?" }] },
    ],
  });
  expect(reply.choices[0]?.message.content).toBe("echo: What is my name?");
  const system = vendor.requests.at(-1)?.messages.find((m) => m.role === "system")?.content ?? "";
  expect(system).toMatch(
    /^You are a helpful assistant[\s\S]*caller \(the instructions above take precedence\):\nAnswer in French\.$/,
  );
  const sent = vendor.requests.at(-1)?.messages.filter((m) => m.role !== "system");
  expect(sent).toEqual([
    { role: "user", content: "My name is Ada" },
    { role: "assistant", content: "Hello Ada" },
    { role: "user", content: "What is my name?" },
  ]);
});

it("lists callable apps as models and answers errors in OpenAI's shape", async () => {
  const models = await client.models.list();
  const ids = models.data.map((m) => m.id);
  expect(ids).toEqual(expect.arrayContaining([slugs.completion, slugs.chat]));

  await expect(
    client.chat.completions.create({ model: "no-such-app", messages: [{ role: "user", content: "x" }] }),
  ).rejects.toMatchObject({
    status: 404,
    error: {
      message: expect.stringMatching(
        /^The model 'no-such-app' does not exist\. If it is your app, check it is Public and Live/,
      ),
      type: "invalid_request_error",
      code: "model_not_found",
      param: "model",
    },
  });
  const broke = openAiWith(
    (await (await createCaller(server.baseUrl)).api("POST", "/api/keys/", { body: { name: "k" } })).body.key,
  );
  await expect(askCompletionApp(broke)).rejects.toMatchObject({
    status: 402,
    error: { type: "insufficient_quota" },
  });
  const unauthenticated = openAiWith("pm_wrong");
  await expect(unauthenticated.models.list()).rejects.toMatchObject({
    status: 401,
    error: { type: "authentication_error" },
  });
  await expect(
    client.chat.completions.create({ model: slugs.completion as string, messages: [] }),
  ).rejects.toMatchObject({ status: 400 });

  vendor.set({ kind: "status", status: 500, message: "down" });
  const before = await walletCents();
  await expect(askCompletionApp(client)).rejects.toMatchObject({
    status: 502,
    error: { type: "api_error", code: "upstream_failed" },
  });
  vendor.set({ kind: "echo" });
  expect(await walletCents()).toBe(before);
  const charged = await server.database.db
    .select({ n: sql<number>`count(*)::int` })
    .from(invocations)
    .where(eq(invocations.chargedCents, 30));
  expect(charged[0]?.n).toBe(3);
  expect((await reconcile(server.database.db)).ok).toBe(true);
});

it("lets the openai SDK in a browser on another origin through the preflight, without credentials", async () => {
  const requested =
    "authorization, content-type, idempotency-key, x-stainless-lang, x-stainless-package-version, x-stainless-os, x-stainless-arch, x-stainless-runtime, x-stainless-runtime-version, x-stainless-retry-count, x-stainless-timeout, openai-organization, openai-project, x-not-allowed";
  for (const path of [
    "/api/v1/chat/completions",
    "/api/v1/responses",
    `/api/app/${slugs.chat}/chat-messages`,
  ]) {
    const preflight = await fetch(`${server.baseUrl}${path}`, {
      method: "OPTIONS",
      headers: {
        origin: "https://elsewhere.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": requested,
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-credentials")).toBeNull();
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").split(", ");
    const wanted = requested.split(", ").filter((name) => name !== "x-not-allowed");
    expect(allowed).toEqual(expect.arrayContaining(wanted));
    expect(allowed).not.toContain("x-not-allowed");
  }
});
