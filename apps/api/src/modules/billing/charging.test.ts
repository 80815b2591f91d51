import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { holds, invocations, subscriptions } from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { startFakeOpenAi } from "../../test/fake-openai.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";
import {
  refundIncludedCall,
  sweepExpiredIncludedCalls,
  useIncludedCall,
} from "./call-payment/included-calls.ts";
import { reconcile } from "./reconcile.ts";
import { renewDueSubscriptions } from "./subscriptions.ts";

/**
 * Decision 025 under attack: an answered call is charged exactly once, whatever happens to its
 * plan, lease or hold meanwhile; a plan comes before the wallet; an abandoned stream costs its
 * price once anything was written; a caller who can pay is never refused. On PostgreSQL the
 * calls go through two servers on one database (two lease books, two connection pools), as two
 * API processes would; on PGlite, which one process owns, through one.
 */

const PRICE = 10;
let testDb: TestDatabase;
let servers: [TestServer, TestServer];
let vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
let creator: Caller;

const env = {
  OPENAI_API_KEY: "sk-test",
  GATEWAY_RATE_LIMIT_PER_MINUTE: "100000",
  PLATFORM_FEE_PERCENT: "10",
};

beforeAll(async () => {
  vendor = await startFakeOpenAi();
  testDb = await createTestDatabase();
  const first = await startTestServer(testDb, { env: { ...env, OPENAI_BASE_URL: vendor.baseUrl } });
  const second =
    testDb.kind === "postgres"
      ? await startTestServer(testDb, { env: { ...env, OPENAI_BASE_URL: vendor.baseUrl } })
      : first;
  servers = [first, second];
  creator = await createCaller(first.baseUrl, "Seller");
});
afterEach(async () => {
  vendor.set({ kind: "echo" });
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
/** The i-th call's server: alternating between the two processes. */
const via = (i: number) => servers[i % 2] as TestServer;

async function paidApp(price = PRICE) {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Charged", visibility: "public", price_cents: price },
  });
  // Few max tokens: cheap prices and plans cover the worst-case model cost (price guard, doc 026).
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
    body: { model: "gpt-4-turbo", max_tokens: 16 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  return app as { slug: string; id: string };
}

async function subscribed(app: { slug: string }, consumer: Caller, includedCalls: number) {
  const plan = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
    body: { name: "Pro", price_cents: 100, description: "", features: {}, included_calls: includedCalls },
  });
  expect(plan.status).toBe(201);
  const subscription = await consumer.api("POST", `/api/app/${app.slug}/subscriptions/`, {
    body: { package_id: plan.body.id },
  });
  expect(subscription.status).toBe(201);
  return subscription.body.id as string;
}

/** A consumer signed up on the first server, with an API key valid on both. */
async function consumerWith(cents: number) {
  const consumer = await createCaller(servers[0].baseUrl, "Consumer");
  if (cents > 0) await fundWallet(consumer, cents);
  const key = await consumer.api("POST", "/api/keys/", { body: { name: "attack" } });
  expect(key.status).toBe(201);
  const id = (await consumer.api("GET", "/api/auth/profile/")).body.user.id as string;
  return { consumer, key: key.body.key as string, id };
}

function call(server: TestServer, key: string, slug: string, signal?: AbortSignal) {
  return fetch(`${server.baseUrl}/api/app/${slug}/completion-messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { query: "hi" }, response_mode: "blocking" }),
    signal,
  });
}

/**
 * A streamed call (Dify or OpenAI style) read until `chunks` content chunks arrived, then hung
 * up; `chunks: 0` hangs up once the answer's headers arrived, before any content.
 */
async function abandonedStream(
  server: TestServer,
  key: string,
  slug: string,
  style: "dify" | "openai",
  chunks: number,
): Promise<{ received: number; id: string | undefined }> {
  const controller = new AbortController();
  const response = await fetch(
    style === "dify"
      ? `${server.baseUrl}/api/app/${slug}/completion-messages`
      : `${server.baseUrl}/api/v1/chat/completions`,
    {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(
        style === "dify"
          ? { inputs: { query: "hi" }, response_mode: "streaming" }
          : { model: slug, stream: true, messages: [{ role: "user", content: "hi" }] },
      ),
      signal: controller.signal,
    },
  );
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let received = 0;
  let id: string | undefined;
  while (received < chunks) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const line = buffer.slice(0, end).trim();
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      if (!line.startsWith("data: {")) continue;
      const event = JSON.parse(line.slice(6));
      const content = style === "dify" ? event.answer : event.choices?.[0]?.delta?.content;
      id = style === "dify" ? event.message_id : String(event.id).replace(/^chatcmpl-/, "");
      if (content) received += 1;
    }
  }
  controller.abort();
  return { received, id };
}

const paidFrom = async (applicationId: string) => {
  const rows = await db()
    .select({
      id: invocations.id,
      status: invocations.status,
      charged: invocations.chargedCents,
      holdId: invocations.holdId,
      subscriptionId: invocations.subscriptionId,
    })
    .from(invocations)
    .where(eq(invocations.applicationId, applicationId));
  const successes = rows.filter((row) => row.status === "success");
  return {
    rows,
    successes: successes.length,
    fromHolds: successes.filter((row) => row.holdId && row.charged === PRICE && !row.subscriptionId).length,
    fromPlan: successes.filter((row) => row.subscriptionId && !row.holdId && row.charged === 0).length,
  };
};

const callsUsed = async (subscriptionId: string) => {
  const [row] = await db()
    .select({ used: subscriptions.callsUsed })
    .from(subscriptions)
    .where(eq(subscriptions.id, subscriptionId));
  return row?.used ?? -1;
};

async function until(check: () => Promise<boolean>, what: string) {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("an answered call is charged exactly once", () => {
  it("charges calls paid from a lease though the plan's included call they raced is given back", async () => {
    // Item 1 of issue 16: the stream takes the plan's last included call, 40 slow calls are paid
    // from a lease, the stream is abandoned before any content (its included call goes back).
    const app = await paidApp();
    const { consumer, key, id } = await consumerWith(5_000);
    const subscriptionId = await subscribed(app, consumer, 1);
    vendor.set({ kind: "reply", text: "slow answer", delayMs: 600 });

    const stream = abandonedStream(servers[0], key, app.slug, "dify", 0);
    await until(async () => (await callsUsed(subscriptionId)) === 1, "the stream's included call");
    const calls = Array.from({ length: 40 }, (_, i) => call(via(i), key, app.slug));
    await until(
      async () =>
        (
          await db()
            .select()
            .from(holds)
            .where(and(eq(holds.payerId, id), eq(holds.status, "held")))
        ).length > 0,
      "a lease",
    );
    expect((await stream).received).toBe(0);
    const answers = await Promise.all(calls);
    expect(answers.map((answer) => answer.status)).toEqual(Array(40).fill(200));

    const paid = await paidFrom(app.id);
    expect(paid.successes).toBe(40);
    // Each answered call paid once: from the lease, or from the included call given back.
    expect(paid.fromHolds + paid.fromPlan).toBe(40);
    expect(paid.fromPlan).toBe(await callsUsed(subscriptionId));
    expect(paid.fromPlan).toBeLessThanOrEqual(1);
    expect(await settledWallet(consumer)).toMatchObject({
      balance_micros: (5_000 - 100 - paid.fromHolds * PRICE) * 10_000,
      held_micros: 0,
    });
  });

  it("charges no call to the wallet while the plan has included calls, though leases were open", async () => {
    // Item 2: a run of calls leaves leases with money unspent in both processes; then the
    // consumer subscribes, and 100 concurrent calls must all be the plan's.
    const app = await paidApp();
    const { consumer, key } = await consumerWith(5_000);
    for (let i = 0; i < 12; i++) expect((await call(via(i), key, app.slug)).status).toBe(200);
    const subscriptionId = await subscribed(app, consumer, 1_000);
    const before = await paidFrom(app.id);
    vendor.set({ kind: "reply", text: "ok", delayMs: 20 });

    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => call(via(i), key, app.slug)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(100).fill(200));

    const after = await paidFrom(app.id);
    expect(after.fromHolds).toBe(before.fromHolds);
    expect(after.fromPlan).toBe(100);
    expect(await callsUsed(subscriptionId)).toBe(100);
    expect(await settledWallet(consumer)).toMatchObject({
      balance_micros: (5_000 - 100 - before.fromHolds * PRICE) * 10_000,
      held_micros: 0,
    });
  });

  it("answers every call while top-ups race them on a nearly empty wallet, each 2xx charged once", async () => {
    // Item 3: no 5xx from money code under any interleaving. The wallet runs dry and is topped
    // up again and again while calls race through both processes: each call is answered or
    // refused with a 402, never a 500.
    const app = await paidApp();
    const { consumer, key } = await consumerWith(300);
    vendor.set({ kind: "reply", text: "ok", delayMs: 5 });
    const statuses: number[] = [];
    const failures: string[] = [];
    let toppedUp = 0;
    for (let round = 0; round < 10; round++) {
      const calls = Array.from({ length: 40 }, (_, i) =>
        call(via(i + round), key, app.slug).then(async (answer) => {
          statuses.push(answer.status);
          if (answer.status !== 200 && answer.status !== 402)
            failures.push(`${answer.status} ${await answer.text()}`);
        }),
      );
      const topUps = Array.from({ length: 2 }, () =>
        fundWallet(consumer, 100).then(() => {
          toppedUp += 100;
        }),
      );
      await Promise.all([...calls, ...topUps]);
    }
    expect(failures).toEqual([]);
    const answered = statuses.filter((status) => status === 200).length;
    expect(answered).toBeGreaterThan(0);
    const paid = await paidFrom(app.id);
    expect(paid.successes).toBe(answered);
    expect(paid.fromHolds).toBe(answered);
    expect(await settledWallet(consumer)).toMatchObject({
      balance_micros: (300 + toppedUp - answered * PRICE) * 10_000,
      held_micros: 0,
    });
  });
});

describe("an abandoned stream", () => {
  for (const style of ["dify", "openai"] as const)
    it(`costs its price once content was written, and nothing before (${style})`, async () => {
      // Item 8 (decision 025): the model was paid for what was streamed.
      const app = await paidApp();
      const { consumer, key } = await consumerWith(1_000);
      vendor.set({
        kind: "reply",
        text: "one two three four five six seven eight nine ten eleven twelve",
        chunkDelayMs: 40,
      });
      const partial = await abandonedStream(via(0), key, app.slug, style, 3);
      expect(partial.received).toBe(3);
      vendor.set({ kind: "reply", text: "never sent", delayMs: 500 });
      const early = await abandonedStream(via(1), key, app.slug, style, 0);
      expect(early.received).toBe(0);

      await until(async () => (await paidFrom(app.id)).rows.length === 2, "both calls recorded");
      const { rows } = await paidFrom(app.id);
      const charged = rows.filter((row) => row.holdId && row.charged === PRICE);
      expect(charged.map((row) => row.id.replace(/-/g, ""))).toEqual([partial.id?.replace(/-/g, "")]);
      expect(rows.find((row) => row.id !== charged[0]?.id)).toMatchObject({ status: "error", charged: 0 });
      expect(await settledWallet(consumer)).toMatchObject({
        balance_micros: (1_000 - PRICE) * 10_000,
        held_micros: 0,
      });
    });
});

describe("a caller who can pay", () => {
  it("is never refused while another process's lease holds the wallet's last cents", async () => {
    // Item 9: the first process grows a lease over a run of calls; the second then spends the
    // wallet to its last call. Every call the wallet can pay for is answered, the next is a 402.
    const app = await paidApp();
    const { consumer, key } = await consumerWith(1_000);
    let answered = 0;
    for (let i = 0; i < 30; i++) if ((await call(servers[0], key, app.slug)).status === 200) answered += 1;
    const refusedAt: number[] = [];
    for (let i = 0; i < 120 && refusedAt.length === 0; i++) {
      const answer = await call(servers[1], key, app.slug);
      if (answer.status === 200) answered += 1;
      else refusedAt.push(answer.status);
    }
    expect(answered).toBe(100);
    expect(refusedAt).toEqual([402]);
    expect(await settledWallet(consumer)).toMatchObject({ balance_micros: 0, held_micros: 0 });
    const [open] = await db()
      .select({ n: sql<number>`count(*)::int` })
      .from(holds)
      .where(and(eq(holds.applicationId, app.id), eq(holds.status, "held")));
    expect(open?.n).toBe(0);
  });
});

describe("a price", () => {
  it("is never charged above the app's price now, though a process still holds a higher one", async () => {
    // Item 7, decreases: the second process caches the app row for a few seconds; the record
    // charges the lower of the price the call started at and the price now.
    const app = await paidApp();
    const { consumer, key } = await consumerWith(1_000);
    expect((await call(servers[1], key, app.slug)).status).toBe(200);
    const lowered = await creator.api("PATCH", `/api/app/${app.slug}/`, { body: { price_cents: 4 } });
    expect(lowered.status).toBe(200);
    expect((await call(servers[1], key, app.slug)).status).toBe(200);
    const charges = (await paidFrom(app.id)).rows.map((row) => row.charged).sort((a, b) => a - b);
    expect(charges).toEqual([4, PRICE]);
    expect(await settledWallet(consumer)).toMatchObject({
      balance_micros: (1_000 - PRICE - 4) * 10_000,
      held_micros: 0,
    });
  });
});

describe("an Idempotency-Key on the OpenAI-style endpoint", () => {
  for (const stream of [false, true])
    it(`answers a retried request from its first answer and charges it once (${stream ? "streamed" : "blocking"})`, async () => {
      const app = await paidApp();
      const { consumer, key } = await consumerWith(1_000);
      const ask = () =>
        fetch(`${via(0).baseUrl}/api/v1/chat/completions`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${key}`,
            "content-type": "application/json",
            "idempotency-key": `retry-${stream}`,
          },
          body: JSON.stringify({ model: app.slug, stream, messages: [{ role: "user", content: "hi" }] }),
        });
      const first = await ask();
      const firstText = await first.text();
      const again = await ask();
      const againText = await again.text();
      expect([first.status, again.status]).toEqual([200, 200]);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      const idOf = (text: string) => /"id":"(chatcmpl-[0-9a-f]+)"/.exec(text)?.[1];
      expect(idOf(againText)).toBe(idOf(firstText));
      expect(againText).toContain("echo: hi");
      const paid = await paidFrom(app.id);
      expect(paid.rows).toHaveLength(1);
      expect(paid.fromHolds).toBe(1);
      expect(await settledWallet(consumer)).toMatchObject({
        balance_micros: (1_000 - PRICE) * 10_000,
        held_micros: 0,
      });
    });
});

describe("a plan's renewal", () => {
  it("renews a period whose end PostgreSQL holds to the microsecond", async () => {
    // The renewal claimed the period by comparing its end with a JS Date (milliseconds): a period
    // ended by `now()` never matched, and the plan stayed active, unrenewed, past its end.
    const app = await paidApp();
    const { consumer } = await consumerWith(1_000);
    const subscriptionId = await subscribed(app, consumer, 5);
    await db().execute(
      sql`update subscriptions set current_period_end = now(), calls_used = 5 where id = ${subscriptionId}`,
    );
    // A second later than the end just written (PostgreSQL's now() has microseconds past this
    // process's clock), as the renewal loop that runs every 30 s would see it.
    expect(await renewDueSubscriptions(db(), 10, new Date(Date.now() + 1_000))).toBeGreaterThanOrEqual(1);
    const [renewed] = await db()
      .select({
        used: subscriptions.callsUsed,
        ends: subscriptions.currentPeriodEnd,
        status: subscriptions.status,
      })
      .from(subscriptions)
      .where(eq(subscriptions.id, subscriptionId));
    expect(renewed?.status).toBe("active");
    expect(renewed?.used).toBe(0);
    expect(renewed?.ends.getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    expect(await settledWallet(consumer)).toMatchObject({ balance_micros: (1_000 - 200) * 10_000 });
  });
});

describe("an included call taken for a call a crash never recorded", () => {
  it("is given back by the sweeper once its deadline passed, and counted meanwhile", async () => {
    const app = await paidApp();
    const { consumer, id } = await consumerWith(1_000);
    const subscriptionId = await subscribed(app, consumer, 3);
    // As a process would for a call it then loses in a crash: taken, never recorded.
    const taken = await useIncludedCall(db(), app.id, id, { callId: randomUUID(), ttlSeconds: 60 });
    expect(taken?.subscriptionId).toBe(subscriptionId);
    expect(await callsUsed(subscriptionId)).toBe(1);
    // In flight, it is counted: the reconcile (afterEach) finds the period exact.
    expect((await reconcile(db())).miscountedPeriods).toEqual([]);
    await sweepExpiredIncludedCalls(db());
    expect(await callsUsed(subscriptionId)).toBe(1);
    await db().execute(sql`update included_calls set expires_at = now() - interval '1 second'`);
    await sweepExpiredIncludedCalls(db());
    expect(await callsUsed(subscriptionId)).toBe(0);
    // Given back once: a late refund of the same call changes nothing.
    if (taken) await refundIncludedCall(db(), taken);
    expect(await callsUsed(subscriptionId)).toBe(0);
  });
});

describe("a creator's first earnings", () => {
  it("have their account from the app's creation: the first close of a hold posts without its guard firing first", async () => {
    const seller = await createCaller(servers[0].baseUrl, "First-time Seller");
    const sellerId = (await seller.api("GET", "/api/auth/profile/")).body.user.id as string;
    const earnings = async () =>
      (
        await queryRows<{ n: number }>(
          db(),
          sql`select count(*)::int as n from ledger_accounts where kind = 'earnings' and owner_id = ${sellerId}`,
        )
      )[0];
    expect(await earnings()).toEqual({ n: 0 });
    const created = await seller.api("POST", "/api/app/", {
      body: { name: "First app", visibility: "public", price_cents: PRICE },
    });
    expect(created.status).toBe(201);
    expect(await earnings()).toEqual({ n: 1 });
  });
});
