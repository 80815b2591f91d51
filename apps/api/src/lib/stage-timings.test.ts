import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createCaller, fundWallet } from "../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { startFakeOpenAi } from "../test/fake-openai.ts";
import { startTestServer, type TestServer } from "../test/server.ts";
import { serverTiming } from "./stage-timings.ts";

describe("serverTiming", () => {
  it("gives each stage the time since the one before, and the total since the request began", () => {
    expect(serverTiming(["start", 10, "parse", 10.25, "auth", 11, "respond", 12.5])).toBe(
      "parse;dur=0.250, auth;dur=0.750, respond;dur=1.500, total;dur=2.500",
    );
  });
});

/** The stages of a paid call as a server with SERVER_TIMING on reports them (config.test.ts: off by default). */
describe("a paid call's Server-Timing header", () => {
  let testDb: TestDatabase;
  let timed: TestServer;
  let vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
  let slug: string;
  let key: string;

  beforeAll(async () => {
    vendor = await startFakeOpenAi();
    testDb = await createTestDatabase();
    const env = { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: vendor.baseUrl };
    timed = await startTestServer(testDb, { env: { ...env, SERVER_TIMING: "true" } });
    const creator: Caller = await createCaller(timed.baseUrl, "Seller");
    const { status, body: app } = await creator.api("POST", "/api/app/", {
      body: { name: "Timed", visibility: "public", price_cents: 10 },
    });
    expect(status, JSON.stringify(app)).toBe(201);
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { model: "gpt-4-turbo", max_tokens: 16 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    slug = app.slug;
    const consumer = await createCaller(timed.baseUrl, "Buyer");
    await fundWallet(consumer, 500);
    key = (await consumer.api("POST", "/api/keys/", { body: { name: "bench" } })).body.key;
  });
  afterAll(async () => {
    await timed?.stop();
    await vendor?.stop();
    await testDb?.destroy();
  });

  const chat = (server: TestServer) =>
    fetch(`${server.baseUrl}/api/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: slug, messages: [{ role: "user", content: "hi" }] }),
    });

  it("names every stage in order, and the stages add up to the total", async () => {
    const answer = await chat(timed);
    expect(answer.status, await answer.clone().text()).toBe(200);
    const stages = (answer.headers.get("server-timing") ?? "").split(", ").map((part) => {
      const [name, dur] = part.split(";dur=");
      return { name, ms: Number(dur) };
    });
    expect(stages.map((stage) => stage.name)).toEqual([
      "parse",
      "validate",
      "auth",
      "app",
      "prepare",
      "pay",
      "model",
      "record",
      "respond",
      "total",
    ]);
    for (const stage of stages) expect(stage.ms).toBeGreaterThanOrEqual(0);
    const total = stages.pop()?.ms ?? 0;
    const sum = stages.reduce((all, stage) => all + stage.ms, 0);
    expect(Math.abs(sum - total)).toBeLessThan(0.01 * stages.length);
  });
});
