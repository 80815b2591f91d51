import { eq } from "drizzle-orm";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { applications, invocations } from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { startFakeOpenAi } from "../../test/fake-openai.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";
import { reconcile } from "../billing/reconcile.ts";

// The paid path serves keys, apps and prompts from an in-process cache (lib/lookup-cache.ts) whose
// TTL is far longer than these tests: each change below only shows up because the write invalidates it.

let testDb: TestDatabase;
let server: TestServer;
let vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
let creator: Caller;
let consumer: Caller;
let slug: string;
let key: { id: string; key: string };

beforeAll(async () => {
  vendor = await startFakeOpenAi();
  testDb = await createTestDatabase();
  server = await startTestServer(testDb, {
    env: {
      OPENAI_API_KEY: "sk-vendor",
      OPENAI_BASE_URL: vendor.baseUrl,
      GATEWAY_RATE_LIMIT_PER_MINUTE: "1000",
    },
  });
  creator = await createCaller(server.baseUrl, "Cache Seller");
  consumer = await createCaller(server.baseUrl, "Cache Buyer");
  await fundWallet(consumer, 500);
});
afterAll(async () => {
  await server?.stop();
  await vendor?.stop();
  await testDb?.destroy();
});

beforeEach(async () => {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Cached app", interaction_mode: "completion", visibility: "public", price_cents: 10 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
    body: { model: "gpt-4-turbo", max_tokens: 64 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  slug = app.slug;
  key = (await consumer.api("POST", "/api/keys/", { body: { name: "cached" } })).body;
});

const client = () => new OpenAI({ apiKey: key.key, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });
const call = (content = "Hi") =>
  client().chat.completions.create({ model: slug, messages: [{ role: "user", content }] });
/** The consumer's money: available plus held (a lease's unspent rest is held until it idles out). */
const walletCents = async () => {
  const { balance_micros, held_micros } = (await consumer.api("GET", "/api/wallet/")).body;
  return ((balance_micros as number) + (held_micros as number)) / 10_000;
};

it("refuses a key as soon as it is revoked, though it was just used", async () => {
  await call();
  await call();
  expect((await consumer.api("DELETE", `/api/keys/${key.id}/`)).status).toBeLessThan(300);
  await expect(call()).rejects.toMatchObject({ status: 401 });
});

it("charges a lowered price from the next call, and a raised one only after its notice", async () => {
  let before = await walletCents();
  await call();
  expect(await walletCents()).toBe(before - 10);
  const lowered = await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 4 } });
  expect(lowered.status).toBe(200);
  before = await walletCents();
  await call();
  expect(await walletCents()).toBe(before - 4);
  // Raised: announced for PRICE_INCREASE_NOTICE_DAYS from now (decision 021), not charged yet.
  const raised = await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 25 } });
  expect(raised.status).toBe(200);
  before = await walletCents();
  await call();
  expect(await walletCents()).toBe(before - 4);
  expect((await reconcile(server.database.db)).ok).toBe(true);
});

it("answers 404 as soon as the app is archived, and again once it is live", async () => {
  await call();
  await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "archived" } });
  await expect(call()).rejects.toMatchObject({ status: 404 });
  await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  expect((await call()).choices[0]?.message.content).toBe("echo: Hi");
});

it("answers 404 to others as soon as the app is made private", async () => {
  await call();
  await creator.api("PATCH", `/api/app/${slug}/`, { body: { visibility: "private" } });
  await expect(call()).rejects.toMatchObject({ status: 404 });
});

it("uses a new prompt template and model from the next call", async () => {
  expect((await call("Hi")).choices[0]?.message.content).toBe("echo: Hi");
  const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
    body: { prompt_template: "Translate to French: {{query}}", model: "gpt-4o" },
  });
  expect(saved.status).toBe(200);
  expect((await call("Hi")).choices[0]?.message.content).toBe("echo: Translate to French: Hi");
  expect(vendor.requests.at(-1)?.model).toBe("gpt-4o");
});

it("charges a decrease another process made, though this one's copy of the app still has the old price", async () => {
  // Priced at $1.50, as another API process would write it (which cannot invalidate this
  // process's copy); the creator's own (free) call loads it into this process's cache; then the
  // other process lowers it to 50¢.
  await server.database.db.update(applications).set({ priceCents: 150 }).where(eq(applications.slug, slug));
  const creatorKey = (await creator.api("POST", "/api/keys/", { body: { name: "own" } })).body.key;
  const own = new OpenAI({ apiKey: creatorKey, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });
  await own.chat.completions.create({ model: slug, messages: [{ role: "user", content: "Hi" }] });
  await server.database.db.update(applications).set({ priceCents: 50 }).where(eq(applications.slug, slug));

  const thrifty = await createCaller(server.baseUrl, "Thrifty Buyer");
  await fundWallet(thrifty, 100);
  const thriftyKey = (await thrifty.api("POST", "/api/keys/", { body: { name: "t" } })).body.key;
  const answer = await new OpenAI({
    apiKey: thriftyKey,
    baseURL: `${server.baseUrl}/api/v1`,
    maxRetries: 0,
  }).chat.completions.create({ model: slug, messages: [{ role: "user", content: "Hi" }] });
  expect(answer.choices[0]?.message.content).toBeTruthy();
  const [charged] = await server.database.db
    .select({ cents: invocations.chargedCents })
    .from(invocations)
    .where(eq(invocations.callerUserId, (await thrifty.api("GET", "/api/auth/profile/")).body.user.id));
  expect(charged?.cents).toBe(50);
  expect((await reconcile(server.database.db)).ok).toBe(true);
});
