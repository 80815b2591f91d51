import { eq, sql } from "drizzle-orm";
import OpenAI from "openai";
import { afterEach, beforeAll, beforeEach, expect, it, vi } from "vitest";
import { changeFeedOf } from "../../db/change-feed.ts";
import { queryRows } from "../../db/client.ts";
import { applications, invocations } from "../../db/schema/index.ts";
import {
  forgetLookups,
  LOOKUP_TABLES,
  LOOKUP_TTL_MS,
  lookupCache,
  WATCHED_LOOKUP_TTL_MS,
} from "../../lib/lookup-cache.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { preloadLookups } from "../../warm-up.ts";
import { findApplicationBySlugCached } from "../applications/applications.service.ts";
import { createCallPayments } from "../billing/call-payment/index.ts";
import { reconcile } from "../billing/reconcile.ts";
import { findUserByApiKey, hashApiKey } from "../keys/keys.service.ts";

// The paid path serves keys, apps and prompts from an in-process cache (lib/lookup-cache.ts) whose
// TTL is far longer than these tests: each change below only shows up because the write invalidates
// it, through the service's forgetLookups or, for a change made by any other writer (plain SQL
// here, another process in lib/lookup-feed.pg.test.ts), the change feed (decision 040). Start-up
// preloads recent traffic's rows (the last test).

let slug: string;
let key: { id: string; key: string };

const { server, vendor } = useVendorServer();
const creator = useCaller(server, "Cache Seller");
const consumer = useCaller(server, "Cache Buyer");

beforeAll(async () => {
  await fundWallet(consumer, 500);
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

afterEach(() => {
  vi.restoreAllMocks();
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

it("uses a released prompt template and model from the next call, and a saved one only once released", async () => {
  expect((await call("Hi")).choices[0]?.message.content).toBe("echo: Hi");
  // A live app's save is a new version its callers do not get yet (docs/decisions/057)…
  const staged = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
    body: { prompt_template: "Translate to German: {{query}}" },
  });
  expect(staged.status).toBe(200);
  expect((await call("Hi")).choices[0]?.message.content).toBe("echo: Hi");
  // …and one saved with `promote` is what the very next call gets.
  const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
    body: { prompt_template: "Translate to French: {{query}}", model: "gpt-4o", promote: true },
  });
  expect(saved.status).toBe(200);
  expect((await call("Hi")).choices[0]?.message.content).toBe("echo: Translate to French: Hi");
  expect(vendor.requests.at(-1)?.model).toBe("gpt-4o");
});

it("charges a decrease another process made, though this one's copy of the app still has the old price", async () => {
  // Priced at $1.50; the creator's own call (no price) loads it into this process's cache; then
  // another process lowers it to 50¢, and this process has not heard of it yet: the write runs
  // with triggers off (`session_replication_role = replica`), as if its notice were still on the way.
  await server.database.db.update(applications).set({ priceCents: 150 }).where(eq(applications.slug, slug));
  const creatorKey = (await creator.api("POST", "/api/keys/", { body: { name: "own" } })).body.key;
  // The owner's own call holds its model cost from the owner's wallet (decision 062).
  await fundWallet(creator, 100);
  const own = new OpenAI({ apiKey: creatorKey, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });
  await own.chat.completions.create({ model: slug, messages: [{ role: "user", content: "Hi" }] });
  await server.database.db.transaction(async (tx) => {
    await tx.execute(sql`set local session_replication_role = replica`);
    await tx.update(applications).set({ priceCents: 50 }).where(eq(applications.slug, slug));
  });
  expect(lookupCache<{ priceCents: number }>(server.database.db, "applications").peek(slug)?.priceCents).toBe(
    150,
  );

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

const db = () => server.database.db;
const keys = () => lookupCache<unknown>(db(), "apiKeys");

/** Waits for a condition the feed makes true asynchronously (a notice arrives after the commit). */
async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
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
  await queryRows(db(), sql`update app_versions set changelog = changelog where false`);
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
  await queryRows(db(), sql`update app_versions set changelog = 'edited by hand' where false`);
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

  const preloaded = await preloadLookups(db(), createCallPayments(db()));
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

it("has a change trigger on every table a lookup reads, and on no other", async () => {
  const rows = await queryRows<{ table: string }>(
    db(),
    sql`select distinct c.relname as table from pg_trigger t join pg_class c on c.oid = t.tgrelid
        join pg_proc p on p.oid = t.tgfoid where p.proname = 'pm_lookups_changed' order by 1`,
  );
  expect(rows.map((row) => row.table)).toEqual([...LOOKUP_TABLES].sort());
});
