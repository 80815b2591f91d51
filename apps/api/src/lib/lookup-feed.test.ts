import { sql } from "drizzle-orm";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { changeFeedOf } from "../db/change-feed.ts";
import { queryRows } from "../db/client.ts";
import { findApplicationBySlugCached } from "../modules/applications/applications.service.ts";
import { findUserByApiKey, hashApiKey } from "../modules/keys/keys.service.ts";
import { type Caller, createCaller, fundWallet } from "../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { startFakeOpenAi } from "../test/fake-openai.ts";
import { startTestServer, type TestServer } from "../test/server.ts";
import { preloadLookups } from "../warm-up.ts";
import { forgetLookups, LOOKUP_TTL_MS, lookupCache, WATCHED_LOOKUP_TTL_MS } from "./lookup-cache.ts";

// The lookup caches' change feed (docs/decisions/040): a change to a looked-up table made by any
// writer, here plain SQL that no service's forgetLookups follows, drops the copies it can make
// stale; copies live long only while the feed listens; and start-up preloads recent traffic's rows.

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
  creator = await createCaller(server.baseUrl, "Feed Seller");
  consumer = await createCaller(server.baseUrl, "Feed Buyer");
  await fundWallet(consumer, 500);
});
afterAll(async () => {
  await server?.stop();
  await vendor?.stop();
  await testDb?.destroy();
});

beforeEach(async () => {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Fed app", interaction_mode: "completion", visibility: "public", price_cents: 2 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
    body: { model: "gpt-4-turbo", max_tokens: 64 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  slug = app.slug;
  key = (await consumer.api("POST", "/api/keys/", { body: { name: "fed" } })).body;
});
afterEach(() => {
  vi.restoreAllMocks();
});

const db = () => server.database.db;
const keys = () => lookupCache<unknown>(db(), "apiKeys");
const call = () =>
  new OpenAI({ apiKey: key.key, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 }).chat.completions.create(
    {
      model: slug,
      messages: [{ role: "user", content: "Hi" }],
    },
  );

/** Waits for a condition the feed makes true asynchronously (a notice arrives after the commit). */
async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 3_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not true after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

it("listens, so copies are kept for the long TTL, and a key revoked by plain SQL is refused at once", async () => {
  expect(changeFeedOf(db())?.live).toBe(true);
  expect(await findUserByApiKey(db(), key.key)).toBeDefined();
  // Kept past the short TTL: only a change drops it.
  const now = Date.now();
  vi.spyOn(Date, "now").mockReturnValue(now + LOOKUP_TTL_MS + 1_000);
  expect(keys().peek(hashApiKey(key.key))).toBeDefined();
  vi.spyOn(Date, "now").mockReturnValue(now + WATCHED_LOOKUP_TTL_MS + 1_000);
  expect(keys().peek(hashApiKey(key.key))).toBeUndefined();
  vi.restoreAllMocks();

  expect(await findUserByApiKey(db(), key.key)).toBeDefined();
  await queryRows(db(), sql`update api_keys set revoked_at = now() where id = ${key.id}`);
  await eventually(() => keys().peek(hashApiKey(key.key)) === undefined);
  expect(await findUserByApiKey(db(), key.key)).toBeUndefined();
  await expect(call()).rejects.toMatchObject({ status: 401 });
});

it("does not drop keys when only last_used_at is written (once a minute per key, off the paid path)", async () => {
  expect(await findUserByApiKey(db(), key.key)).toBeDefined();
  const before = keys().generation;
  await queryRows(db(), sql`update api_keys set last_used_at = now() where id = ${key.id}`);
  // A change that does notify, after it: once its notice is heard, the first would have been too.
  await queryRows(db(), sql`update prompt_versions set changelog = changelog where false`);
  await eventually(() => lookupCache(db(), "prompts").generation > 0);
  expect(keys().generation).toBe(before);
  expect(keys().peek(hashApiKey(key.key))).toBeDefined();
});

it("drops apps and keys when a suspension is written, and prompts when a prompt version changes", async () => {
  expect(await findApplicationBySlugCached(db(), slug)).toBeDefined();
  const apps = lookupCache<unknown>(db(), "applications");
  const [app] = await queryRows<{ id: string; owner_id: string }>(
    db(),
    sql`select id, owner_id from applications where slug = ${slug}`,
  );
  await queryRows(
    db(),
    sql`insert into suspensions (target_kind, target_id, reason, actor_id)
        values ('application', ${app?.id}, 'test', ${app?.owner_id})`,
  );
  await eventually(() => apps.peek(slug) === undefined);
  expect(await findApplicationBySlugCached(db(), slug)).toBeUndefined();

  const prompts = lookupCache<unknown>(db(), "prompts");
  const generation = prompts.generation;
  await queryRows(db(), sql`update prompt_versions set changelog = 'edited by hand' where false`);
  await eventually(() => prompts.generation > generation);
});

it("preloads the last day's keys, apps, prompts and accounts, and not a revoked key", async () => {
  expect((await call()).choices[0]?.message.content).toBeTruthy();
  // last_used_at is written after the answer, off the paid path.
  await eventually(async () => {
    const [row] = await queryRows<{ used: boolean }>(
      db(),
      sql`select last_used_at is not null as used from api_keys where id = ${key.id}`,
    );
    return row?.used === true;
  });
  const revoked = (await consumer.api("POST", "/api/keys/", { body: { name: "gone" } })).body;
  const generation = keys().generation;
  await queryRows(
    db(),
    sql`update api_keys set last_used_at = now(), revoked_at = now() where id = ${revoked.id}`,
  );
  // Its notice, heard after the commit, drops keys; one arriving during the preload would make it
  // keep nothing it read (the generation check), so wait for it.
  await eventually(() => keys().generation > generation);
  forgetLookups(db(), "apiKeys", "applications", "prompts");
  expect(keys().peek(hashApiKey(key.key))).toBeUndefined();

  const preloaded = await preloadLookups(db());
  expect(preloaded.keys).toBeGreaterThanOrEqual(1);
  expect(preloaded.apps).toBeGreaterThanOrEqual(1);
  expect(preloaded.prompts).toBe(preloaded.apps);
  // The consumer's wallet and held accounts (the held one exists once a call was paid).
  expect(preloaded.accounts).toBeGreaterThanOrEqual(2);
  expect(keys().peek(hashApiKey(key.key))).toMatchObject({ scope: { keyId: key.id } });
  expect(keys().peek(hashApiKey(revoked.key))).toBeUndefined();
  const [app] = await queryRows<{ id: string }>(db(), sql`select id from applications where slug = ${slug}`);
  expect(lookupCache<unknown>(db(), "applications").peek(slug)).toMatchObject({ id: app?.id });
  expect(lookupCache<unknown>(db(), "prompts").peek(app?.id as string)).toMatchObject({
    prompt: { applicationId: app?.id },
  });
  // What was preloaded answers: the call reads no key, app or prompt (served from the copies).
  expect((await call()).choices[0]?.message.content).toBeTruthy();
});
