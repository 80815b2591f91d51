import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../../db/client.ts";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../../test/database.ts";
import { startFakeOpenAi } from "../../../test/fake-openai.ts";
import { freePort, startTestServer, type TestServer } from "../../../test/server.ts";
import { reconcile } from "../reconcile.ts";
import { sweepSponsoredCalls } from "./sponsored-calls.ts";

/**
 * Free trials and promotion codes (decision 080): a sponsored call is paid by its creator and
 * costs its caller nothing; a trial is taken once per person (account, card), a code at most its
 * limit, both under concurrency. On PostgreSQL the racing requests go through two servers (two
 * processes on one database); on PGlite through one.
 */

const PRICE = 10;
let testDb: TestDatabase;
let servers: [TestServer, TestServer];
let urls: string[];
let vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
let creator: Caller;

const env = {
  OPENAI_API_KEY: "sk-test",
  GATEWAY_RATE_LIMIT_PER_MINUTE: "100000",
  PLATFORM_FEE_PERCENT: "10",
};
const card = { number: "4242 4242 4242 4242", exp_month: 12, exp_year: 2099, cvc: "123" };
const billingAddress = {
  name: "Ada Lovelace",
  line1: "1 Row",
  city: "London",
  postal_code: "N1",
  country: "GB",
};

beforeAll(async () => {
  vendor = await startFakeOpenAi();
  testDb = await createTestDatabase();
  const first = await startTestServer(testDb, { env: { ...env, OPENAI_BASE_URL: vendor.baseUrl } });
  urls = [first.baseUrl, first.baseUrl];
  let second = first;
  if (testDb.kind === "postgres") {
    // The second process behind the same public URL: the first's tokens are valid on it.
    const port = await freePort();
    second = await startTestServer(testDb, {
      port,
      env: { ...env, OPENAI_BASE_URL: vendor.baseUrl, PUBLIC_URL: first.baseUrl },
    });
    urls[1] = `http://127.0.0.1:${port}`;
  }
  servers = [first, second];
  creator = await createCaller(first.baseUrl, "Sponsor");
  await fundWallet(creator, 1_000);
});
afterEach(async () => {
  const report = await reconcile(db());
  expect(report.mismatches).toEqual([]);
  expect(report.ok).toBe(true);
});
afterAll(async () => {
  await servers?.[1]?.stop();
  if (servers?.[1] !== servers?.[0]) await servers?.[0]?.stop();
  await vendor?.stop();
  await testDb?.destroy();
});

const db = () => servers[0].database.db;
/** The same person on the i-th call's server: alternating between the two processes. */
const on = (caller: Caller, i: number): Caller => ({
  ...caller,
  api: (method, path, options = {}) =>
    fetch(`${urls[i % 2]}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${caller.token}`,
        ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    }).then(async (response) => {
      const text = await response.text();
      return {
        status: response.status,
        body: text ? JSON.parse(text) : undefined,
        headers: response.headers,
      };
    }),
});

async function paidApp(price = PRICE) {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Sponsored", visibility: "public", price_cents: price },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
    body: { model: "gpt-4-turbo", max_tokens: 16 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  return app as { slug: string; id: string };
}

/** A blocking call: its status, and its charge (Dify's `metadata.usage`: `charged_cents`, `paid_by`). */
async function call(caller: Caller, slug: string) {
  const answer = await caller.api("POST", `/api/app/${slug}/completion-messages`, {
    body: { inputs: { query: "hi" }, response_mode: "blocking" },
  });
  return { status: answer.status, body: answer.body?.metadata?.usage ?? answer.body };
}

async function saveCard(caller: Caller, slug: string) {
  const saved = await caller.api("POST", `/api/app/${slug}/payment-methods/`, {
    body: { card, billing_address: billingAddress },
  });
  expect(saved.status).toBe(201);
}

describe("free trials", () => {
  it("lets the owner offer N calls and a consumer call them free, each paid from the creator's wallet", async () => {
    const app = await paidApp();
    const offered = await creator.api("PUT", `/api/app/${app.slug}/trial/`, { body: { trial_calls: 2 } });
    expect(offered.status).toBe(200);
    expect(offered.body).toMatchObject({ trial_calls: 2, trials_started: 0 });
    const consumer = await createCaller(servers[0].baseUrl, "Trier");
    expect((await consumer.api("GET", `/api/app/${app.slug}/trial/`)).body).toMatchObject({
      trial_calls: 2,
      used: false,
      calls_left: null,
      trials_started: null,
    });
    const started = await consumer.api("POST", `/api/app/${app.slug}/trial/`);
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ kind: "trial", calls_left: 2, app: { slug: app.slug } });
    const creatorBefore = (await settledWallet(creator)).balance_micros;

    const first = await call(consumer, app.slug);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ charged_cents: 0, paid_by: "trial" });
    expect((await call(consumer, app.slug)).body).toMatchObject({ paid_by: "trial" });
    // The trial is used up: the consumer's empty wallet is asked to pay, and cannot.
    expect((await call(consumer, app.slug)).status).toBe(402);

    const creatorAfter = (await settledWallet(creator)).balance_micros;
    // Two calls' prices (the platform keeps them all) and their model cost, from the creator.
    expect(creatorBefore - creatorAfter).toBeGreaterThanOrEqual(2 * PRICE * 10_000);
    expect((await settledWallet(consumer)).balance_micros).toBe(0);
    const spent = await queryRows<{ state: string; n: number }>(
      db(),
      sql`select sc.state, count(*)::int as n from sponsored_calls sc join sponsored_grants g on g.id = sc.grant_id
          where g.application_id = ${app.id}::uuid group by sc.state`,
    );
    expect(spent).toEqual([{ state: "spent", n: 2 }]);
    const credits = await consumer.api("GET", "/api/wallet/credits/");
    expect(credits.body.data).toMatchObject([{ kind: "trial", calls_left: 0 }]);
    expect((await consumer.api("GET", `/api/app/${app.slug}/trial/`)).body).toMatchObject({
      used: true,
      calls_left: 0,
    });
  });

  it("gives a failed trial call back to the trial", async () => {
    const app = await paidApp();
    await creator.api("PUT", `/api/app/${app.slug}/trial/`, { body: { trial_calls: 1 } });
    const consumer = await createCaller(servers[0].baseUrl, "Unlucky");
    await consumer.api("POST", `/api/app/${app.slug}/trial/`);
    vendor.set({ kind: "status", status: 500, message: "vendor down" });
    try {
      expect((await call(consumer, app.slug)).status).toBeGreaterThanOrEqual(500);
    } finally {
      vendor.set({ kind: "echo" });
    }
    expect((await consumer.api("GET", "/api/wallet/credits/")).body.data[0].calls_left).toBe(1);
    expect((await call(consumer, app.slug)).body).toMatchObject({ paid_by: "trial" });
  });

  it("refuses a second trial to the same account, and to another account with the same card, even at once", async () => {
    const app = await paidApp();
    await creator.api("PUT", `/api/app/${app.slug}/trial/`, { body: { trial_calls: 3 } });
    const person = await createCaller(servers[0].baseUrl, "Twice");
    const starts = await Promise.all(
      Array.from({ length: 6 }, (_, i) => on(person, i).api("POST", `/api/app/${app.slug}/trial/`)),
    );
    expect(starts.map((s) => s.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);

    // Two new accounts with the same card racing each other: one trial between them.
    const [a, b] = await Promise.all([
      createCaller(servers[0].baseUrl, "Card A"),
      createCaller(servers[0].baseUrl, "Card B"),
    ]);
    await saveCard(a, app.slug);
    await saveCard(b, app.slug);
    const raced = await Promise.all([
      on(a, 0).api("POST", `/api/app/${app.slug}/trial/`),
      on(b, 1).api("POST", `/api/app/${app.slug}/trial/`),
    ]);
    expect(raced.map((s) => s.status).sort()).toEqual([201, 409]);
    const refused = raced.find((s) => s.status === 409);
    expect(refused?.body.message).toMatch(/card|account/);

    // A card saved after the trial was taken still tells the person apart.
    const c = await createCaller(servers[0].baseUrl, "Card C");
    const d = await createCaller(servers[0].baseUrl, "Card D");
    expect((await c.api("POST", `/api/app/${app.slug}/trial/`)).status).toBe(201);
    await saveCard(c, app.slug);
    await saveCard(d, app.slug);
    const late = await d.api("POST", `/api/app/${app.slug}/trial/`);
    expect(late.status).toBe(409);
    expect(late.body.message).toMatch(/card/);
  });

  it("refuses a trial the app does not offer, the owner's own, and a trial on a free app", async () => {
    const app = await paidApp();
    const consumer = await createCaller(servers[0].baseUrl, "Early");
    const none = await consumer.api("POST", `/api/app/${app.slug}/trial/`);
    expect(none.status).toBe(409);
    expect(none.body.message).toMatch(/no free trial/);
    await creator.api("PUT", `/api/app/${app.slug}/trial/`, { body: { trial_calls: 1 } });
    expect((await creator.api("POST", `/api/app/${app.slug}/trial/`)).status).toBe(409);
    const bad = await creator.api("PUT", `/api/app/${app.slug}/trial/`, { body: { trial_calls: -1 } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/trial_calls/);
    // Another person's app: not found, as for any app they do not own.
    expect(
      (await consumer.api("PUT", `/api/app/${app.slug}/trial/`, { body: { trial_calls: 1 } })).status,
    ).toBe(404);
  });

  it("lets the consumer pay when the creator's wallet cannot, and keeps the trial call", async () => {
    const poor = await createCaller(servers[0].baseUrl, "Poor creator");
    const { body: app } = await poor.api("POST", "/api/app/", {
      body: { name: "Poor", visibility: "public", price_cents: PRICE },
    });
    await poor.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { model: "gpt-4-turbo", max_tokens: 16 },
    });
    await poor.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    await poor.api("PUT", `/api/app/${app.slug}/trial/`, { body: { trial_calls: 1 } });
    const consumer = await createCaller(servers[0].baseUrl, "Payer");
    await fundWallet(consumer, 100);
    await consumer.api("POST", `/api/app/${app.slug}/trial/`);
    const answer = await call(consumer, app.slug);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ paid_by: "wallet", charged_cents: PRICE });
    expect((await consumer.api("GET", "/api/wallet/credits/")).body.data[0].calls_left).toBe(1);
  });
});

describe("promotion codes", () => {
  it("creates, lists and ends a creator's code; refuses a taken code whatever its case", async () => {
    const created = await creator.api("POST", "/api/promotion-codes/", {
      body: { code: "Launch-1", kind: "amount", amount_cents: 50, max_redemptions: 3 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      code: "Launch-1",
      amount_micros: 500_000,
      status: "active",
      app: null,
    });
    const taken = await creator.api("POST", "/api/promotion-codes/", {
      body: { code: "launch-1", kind: "amount", amount_cents: 50, max_redemptions: 3 },
    });
    expect(taken.status).toBe(409);
    const mixed = await creator.api("POST", "/api/promotion-codes/", {
      body: { code: "MIXED", kind: "amount", percent: 10, max_redemptions: 3 },
    });
    expect(mixed.status).toBe(400);
    expect(JSON.stringify(mixed.body)).toMatch(/amount_cents/);
    // Found by fuzzing: a moment no clock says (year 4581, offset -20:20) is refused by name, not a 500.
    for (const [field, moment] of [
      ["starts_at", "4581-08-09T16:51:06.59928-20:20"],
      ["expires_at", "2031-01-01T00:00:00-20:20"],
      ["expires_at", "8116-02-29T17:05:46Z"],
    ] as const) {
      const odd = await creator.api("POST", "/api/promotion-codes/", {
        body: {
          code: `ODD${field.length}${moment.length}`,
          kind: "amount",
          amount_cents: 50,
          max_redemptions: 3,
          [field]: moment,
        },
      });
      expect(odd.status).toBe(400);
      expect(odd.body.fields?.[field]).toMatch(/from 2000 to 2099/);
    }
    expect((await creator.api("GET", "/api/promotion-codes/")).body.data[0].code).toBe("Launch-1");
    const stranger = await createCaller(servers[0].baseUrl, "Stranger");
    expect((await stranger.api("DELETE", `/api/promotion-codes/${created.body.id}/`)).status).toBe(404);
    expect((await creator.api("DELETE", `/api/promotion-codes/${created.body.id}/`)).status).toBe(204);
    const redeemed = await stranger.api("POST", "/api/promotion-codes/redeem/", {
      body: { code: "launch-1" },
    });
    expect(redeemed.status).toBe(409);
    expect(redeemed.body.message).toMatch(/ended/);
  });

  it("never redeems a code past its limit, nor twice by one person, under concurrency", async () => {
    const code = `RACE${Date.now()}`;
    await creator.api("POST", "/api/promotion-codes/", {
      body: { code, kind: "amount", amount_cents: 20, max_redemptions: 3 },
    });
    const people = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createCaller(servers[0].baseUrl, `Racer ${i}`)),
    );
    const answers = await Promise.all(
      people.flatMap((person, i) => [
        on(person, i).api("POST", "/api/promotion-codes/redeem/", { body: { code } }),
        on(person, i + 1).api("POST", "/api/promotion-codes/redeem/", { body: { code: code.toLowerCase() } }),
      ]),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    const [row] = await queryRows<{ redemptions: number; grants: number; people: number }>(
      db(),
      sql`select c.redemptions, count(g.id)::int as grants, count(distinct g.consumer_id)::int as people
          from promotion_codes c left join sponsored_grants g on g.promotion_code_id = c.id
          where c.code = ${code} group by c.redemptions`,
    );
    expect(row).toEqual({ redemptions: 3, grants: 3, people: 3 });
  });

  it("pays calls from the credit, charged to the creator, until the credit no longer covers a price", async () => {
    const app = await paidApp();
    const code = `CREDIT${Date.now()}`;
    await creator.api("POST", "/api/promotion-codes/", {
      body: { code, kind: "amount", amount_cents: 25, max_redemptions: 5, app: app.slug },
    });
    const consumer = await createCaller(servers[0].baseUrl, "Credited");
    const redeemed = await consumer.api("POST", "/api/promotion-codes/redeem/", { body: { code } });
    expect(redeemed.status).toBe(201);
    expect(redeemed.body).toMatchObject({ kind: "promotion", credit_left_micros: 250_000, code });
    expect((await call(consumer, app.slug)).body).toMatchObject({ paid_by: "promotion", charged_cents: 0 });
    expect((await call(consumer, app.slug)).body).toMatchObject({ paid_by: "promotion" });
    // 5 cents left: less than a call's price.
    expect((await call(consumer, app.slug)).status).toBe(402);
    const credits = await consumer.api("GET", "/api/wallet/credits/");
    expect(credits.body.data[0]).toMatchObject({ credit_left_micros: 50_000 });
  });

  it("gives a percent code's bonus on the next top-up, capped, once", async () => {
    const code = `BONUS${Date.now()}`;
    const created = await creator.api("POST", "/api/promotion-codes/", {
      body: { code, kind: "percent", percent: 50, cap_cents: 30, max_redemptions: 5 },
    });
    expect(created.status).toBe(201);
    const consumer = await createCaller(servers[0].baseUrl, "Bonus");
    const redeemed = await consumer.api("POST", "/api/promotion-codes/redeem/", { body: { code } });
    expect(redeemed.body).toMatchObject({
      credit_left_micros: 0,
      bonus: { percent: 50, cap_micros: 300_000 },
    });
    await fundWallet(consumer, 100);
    await fundWallet(consumer, 100);
    const credits = await consumer.api("GET", "/api/wallet/credits/");
    expect(credits.body.data[0]).toMatchObject({ credit_left_micros: 300_000, bonus: null });
  });

  it("sweeps a crashed call's reservation back to the grant", async () => {
    const app = await paidApp();
    await creator.api("PUT", `/api/app/${app.slug}/trial/`, { body: { trial_calls: 2 } });
    const consumer = await createCaller(servers[0].baseUrl, "Crashed");
    const { body: grant } = await consumer.api("POST", `/api/app/${app.slug}/trial/`);
    await queryRows(
      db(),
      sql`with g as (update sponsored_grants set calls_left = calls_left - 1 where id = ${grant.id}::uuid returning id)
          insert into sponsored_calls (call_id, grant_id, calls, micros, state, expires_at)
          select gen_random_uuid(), id, 1, 0, 'reserved', now() - interval '1 minute' from g`,
    );
    expect((await consumer.api("GET", "/api/wallet/credits/")).body.data[0].calls_left).toBe(1);
    await sweepSponsoredCalls(db());
    expect((await consumer.api("GET", "/api/wallet/credits/")).body.data[0].calls_left).toBe(2);
  });
});
