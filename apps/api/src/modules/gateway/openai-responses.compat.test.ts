import { and, eq, sql } from "drizzle-orm";
import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { invocations, storedResponses } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { sweepExpiredResponses } from "./response-store.ts";

// The Responses API's state (docs/decisions/054) and the errors an SDK acts on, driven by the real
// openai SDK against a loopback vendor that echoes: what the model saw is what the vendor received.

const PRICE = 30;
let echoApp: string;
let otherApp: string;
let key: string;
let baseURL: string;
let client: OpenAI;
let stranger: OpenAI;

const { server, vendor } = useVendorServer();
const consumer = useCaller(server, "Responses Buyer");
const someoneElse = useCaller(server, "Responses Stranger");

beforeAll(async () => {
  const creator = await createCaller(server.baseUrl, "Responses Seller");
  const liveApp = async (name: string) => {
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name, interaction_mode: "completion", visibility: "public", price_cents: PRICE },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    return app.slug as string;
  };
  echoApp = await liveApp("Responses echo");
  otherApp = await liveApp("Responses other");
  await fundWallet(consumer, 2000);
  await fundWallet(someoneElse, 500);
  key = (await consumer.api("POST", "/api/keys/", { body: { name: "responses" } })).body.key;
  const strangerKey = (await someoneElse.api("POST", "/api/keys/", { body: { name: "x" } })).body.key;
  baseURL = `${server.baseUrl}/api/v1`;
  client = new OpenAI({ apiKey: key, baseURL, maxRetries: 0 });
  stranger = new OpenAI({ apiKey: strangerKey, baseURL, maxRetries: 0 });
});

/** The consumer's money in cents: available plus held. */
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

/** Runs `call` and checks it was charged exactly `times` calls of the echo app (0: nothing). */
async function charged<T>(call: () => Promise<T>, times = 1): Promise<T> {
  const [before, callsBefore] = [await walletCents(), await chargedCalls(echoApp)];
  const result = await call();
  expect(await walletCents()).toBe(before - PRICE * times);
  expect(await chargedCalls(echoApp)).toBe(callsBefore + times);
  return result;
}

/** Runs `call`, which must fail, checks nothing was charged, and answers the error. */
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

/** The conversation the vendor was last sent, system prompt left out. */
const lastConversation = () => vendor.requests.at(-1)?.messages.filter((m) => m.role !== "system");

const storedRows = async (id: string) =>
  (await server.database.db.select().from(storedResponses).where(eq(storedResponses.id, id))).length;

describe("openai", () => {
  it("responses.create chained by previous_response_id (three turns) → works", async () => {
    const [first, second, third] = await charged(async () => {
      const first = await client.responses.create({
        model: echoApp,
        input: "My name is Ada",
        instructions: "Be brief.",
      });
      const second = await client.responses.create({
        model: echoApp,
        input: "I live in Paris",
        previous_response_id: first.id,
      });
      const third = await client.responses.create({
        model: echoApp,
        input: [{ role: "user", content: "Where do I live?" }],
        previous_response_id: second.id,
      });
      return [first, second, third];
    }, 3);
    expect(lastConversation()).toEqual([
      { role: "user", content: "My name is Ada" },
      { role: "assistant", content: "echo: My name is Ada" },
      { role: "user", content: "I live in Paris" },
      { role: "assistant", content: "echo: I live in Paris" },
      { role: "user", content: "Where do I live?" },
    ]);
    // As OpenAI does: instructions are not carried over to the next response.
    expect(vendor.requests.at(-1)?.messages.some((m) => m.content?.includes("Be brief."))).toBe(false);
    expect(first).toMatchObject({ store: true, previous_response_id: null });
    expect(second.previous_response_id).toBe(first.id);
    expect(third).toMatchObject({ previous_response_id: second.id, output_text: "echo: Where do I live?" });
  });

  it("responses.create stream, then chained by previous_response_id → works", async () => {
    const streamed = await charged(() =>
      client.responses.stream({ model: echoApp, input: "Remember 42" }).finalResponse(),
    );
    // Kept at response.completed: retrievable as soon as the stream has ended.
    expect(await client.responses.retrieve(streamed.id)).toMatchObject({
      id: streamed.id,
      output: [{ content: [{ text: "echo: Remember 42" }] }],
    });
    await charged(() =>
      client.responses.create({ model: echoApp, input: "What number?", previous_response_id: streamed.id }),
    );
    expect(lastConversation()?.slice(0, 2)).toEqual([
      { role: "user", content: "Remember 42" },
      { role: "assistant", content: "echo: Remember 42" },
    ]);
  });

  it("responses.retrieve → works", async () => {
    const created = await client.responses.create({ model: echoApp, input: "Keep me" });
    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved).toEqual(created);
    expect(retrieved.output_text).toBe("echo: Keep me");
  });

  it("responses.inputItems.list → works", async () => {
    const first = await client.responses.create({ model: echoApp, input: "One" });
    const second = await client.responses.create({
      model: echoApp,
      input: "Two",
      previous_response_id: first.id,
    });
    const items = [];
    for await (const item of client.responses.inputItems.list(second.id, { order: "asc", limit: 2 }))
      items.push(item);
    expect(items.map((item) => item.type === "message" && [item.role, item.content[0]])).toEqual([
      ["user", { type: "input_text", text: "One" }],
      ["assistant", expect.objectContaining({ type: "output_text", text: "echo: One" })],
      ["user", { type: "input_text", text: "Two" }],
    ]);
    expect(new Set(items.map((item) => item.id)).size).toBe(3);
    // Newest first unless asked otherwise, as OpenAI lists them.
    const newest = await client.responses.inputItems.list(second.id);
    expect(newest.data[0]).toMatchObject({ role: "user", content: [{ text: "Two" }] });
  });

  it("responses.delete then retrieve → refused 404 not_found", async () => {
    const first = await client.responses.create({ model: echoApp, input: "Forget me" });
    const second = await client.responses.create({
      model: echoApp,
      input: "And then?",
      previous_response_id: first.id,
    });
    const deleted = await client.responses.delete(first.id).asResponse();
    expect(await deleted.json()).toEqual({ id: first.id, object: "response", deleted: true });
    const error = await refused(() => client.responses.retrieve(first.id));
    expect(error).toMatchObject({ status: 404, type: "invalid_request_error" });
    await expect(client.responses.delete(first.id)).rejects.toMatchObject({ status: 404 });
    const chained = await refused(() =>
      client.responses.create({ model: echoApp, input: "x", previous_response_id: first.id }),
    );
    expect(chained).toMatchObject({ status: 400, code: "previous_response_not_found" });
    // The response it was continued by keeps the whole conversation.
    await client.responses.create({ model: echoApp, input: "Still here?", previous_response_id: second.id });
    expect(lastConversation()?.[0]).toEqual({ role: "user", content: "Forget me" });
  });

  it("responses.retrieve another user's response → refused 404 not_found", async () => {
    const mine = await client.responses.create({ model: echoApp, input: "Private" });
    await expect(stranger.responses.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.responses.inputItems.list(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.responses.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(
      stranger.responses.create({ model: echoApp, input: "x", previous_response_id: mine.id }),
    ).rejects.toMatchObject({
      status: 400,
      param: "previous_response_id",
      code: "previous_response_not_found",
    });
    expect((await client.responses.retrieve(mine.id)).id).toBe(mine.id);
  });

  it("responses.create store false then retrieve → refused 404 not_found", async () => {
    const unstored = await charged(() =>
      client.responses.create({ model: echoApp, input: "Ephemeral", store: false }),
    );
    expect(unstored).toMatchObject({ store: false });
    await expect(client.responses.retrieve(unstored.id)).rejects.toMatchObject({ status: 404 });
    expect(await storedRows(unstored.id)).toBe(0);
  });

  it("responses.create unknown previous_response_id → refused 400 previous_response_id", async () => {
    const error = await refused(() =>
      client.responses.create({ model: echoApp, input: "x", previous_response_id: "resp_123" }),
    );
    expect(error).toMatchObject({
      status: 400,
      type: "invalid_request_error",
      param: "previous_response_id",
      code: "previous_response_not_found",
    });
  });

  it("responses.create previous_response_id of another app → refused 400 previous_response_id", async () => {
    const elsewhere = await client.responses.create({ model: otherApp, input: "Hi" });
    const error = await refused(() =>
      client.responses.create({ model: echoApp, input: "x", previous_response_id: elsewhere.id }),
    );
    expect(error).toMatchObject({ status: 400, param: "previous_response_id" });
    expect(error.message).toContain(otherApp);
  });

  it("responses.create Idempotency-Key replayed → works, stored once", async () => {
    const options = { headers: { "Idempotency-Key": `responses-store-${Date.now()}` } };
    const first = await charged(async () => {
      const first = await client.responses.create({ model: echoApp, input: "Once" }, options);
      const again = await client.responses.create({ model: echoApp, input: "Once" }, options);
      expect(again.id).toBe(first.id);
      return first;
    });
    expect(await storedRows(first.id)).toBe(1);
  });

  it("responses.retrieve past its retention → refused 404 not_found", async () => {
    const old = await client.responses.create({ model: echoApp, input: "Old news" });
    await server.database.db
      .update(storedResponses)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(storedResponses.id, old.id));
    await expect(client.responses.retrieve(old.id)).rejects.toMatchObject({ status: 404 });
    expect(await sweepExpiredResponses(server.database.db)).toBeGreaterThanOrEqual(1);
    expect(await storedRows(old.id)).toBe(0);
  });

  it("chat.completions.create on a vendor 429 once, maxRetries 2 → works, retried", async () => {
    const retrying = new OpenAI({ apiKey: key, baseURL, maxRetries: 2 });
    vendor.set({
      kind: "status",
      status: 429,
      message: "slow down",
      headers: { "retry-after-ms": "50" },
      times: 1,
    });
    const sent = vendor.requests.length;
    const completion = await charged(() =>
      retrying.chat.completions.create({ model: echoApp, messages: [{ role: "user", content: "Retry me" }] }),
    );
    expect(completion.choices[0]?.message.content).toBe("echo: Retry me");
    expect(vendor.requests.length - sent).toBe(2);
  });

  it("chat.completions.create on a vendor always 429 → refused 429 rate_limit_exceeded", async () => {
    vendor.set({ kind: "status", status: 429, message: "slow down", headers: { "retry-after": "1" } });
    try {
      const retrying = new OpenAI({ apiKey: key, baseURL, maxRetries: 1 });
      const sent = vendor.requests.length;
      const error = await refused(() =>
        retrying.chat.completions.create({ model: echoApp, messages: [{ role: "user", content: "x" }] }),
      );
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expect(error).toMatchObject({ status: 429, type: "requests", code: "rate_limit_exceeded" });
      expect(error.headers.get("retry-after")).toBe("1");
      // The SDK backed off and tried again once: two calls, neither charged.
      expect(vendor.requests.length - sent).toBe(2);
    } finally {
      vendor.set({ kind: "echo" });
    }
  });

  it("input_items with a bad limit or order → refused 400 naming it", async () => {
    for (const [query, param] of [
      ["limit=abc", "limit"],
      ["limit=0", "limit"],
      ["order=sideways", "order"],
    ] as const) {
      const answer = await consumer.api("GET", `/api/v1/responses/resp_1/input_items?${query}`, {
        auth: key,
      });
      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.body)).toContain(param);
    }
  });

  it("unknown routes, any method → refused 404 unknown_url", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/responses/resp_1/no-such-part"],
      ["GET", "/api/v1/files"],
      ["DELETE", "/api/v1/assistants/asst_1"],
      ["PUT", "/api/v1/embeddings"],
    ] as const) {
      const answer = await consumer.api(method, path, { auth: key });
      expect(answer.status).toBe(404);
      expect(answer.body).toEqual({
        error: {
          message: `Unknown request URL: ${method} ${path}`,
          type: "invalid_request_error",
          param: null,
          code: "unknown_url",
        },
      });
    }
    const wrong = await consumer.api("PATCH", "/api/v1/responses/resp_1", { auth: key });
    expect(wrong).toMatchObject({ status: 405, body: { error: { code: "method_not_allowed" } } });
    expect(wrong.headers.get("allow")).toBe("GET, DELETE");
  });
});
