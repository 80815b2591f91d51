import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, queryRows } from "../../db/client.ts";
import { createSafeFetch } from "../../lib/safe-fetch.ts";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { sellerAndBuyer } from "../../test/seller-and-buyer.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";
import type { InvocationRecord } from "../analytics/call-records.ts";
import { takeCallPayment } from "../billing/call-payment/holds.ts";
import { CallRecorder } from "../billing/call-payment/record.ts";
import { accountFor } from "../billing/postings.ts";
import { reconcile } from "../billing/reconcile.ts";
import { callsWithoutTheirEvent, duplicateEvents, exportsUnlikeTheLog } from "./event-checks.ts";
import { decodeCursor, readEvents, START } from "./event-log.ts";
import { relay, type Sink } from "./relay.ts";
import { cloudEventsSink, stripeMeterSink } from "./usage-sinks.ts";

// The event log (decision 068) against a real database and real HTTP receivers: every fact has
// exactly one event written with it, webhooks reach their endpoints signed (verified with the
// `standardwebhooks` package) with one id across retries, and each usage sink exports exactly the
// log, however often it is interrupted.

const PRICE = 7;
const ADMIN_EMAIL = `events-operator-${Date.now()}@example.test`;

let testDb: TestDatabase;
let server: TestServer;
let db: Database;
let world: Awaited<ReturnType<typeof sellerAndBuyer>>;

interface Received {
  headers: Record<string, string>;
  body: string;
  status: number;
}

/** A loopback receiver: records every request; `answer` decides each status. */
async function receiver(answer: (request: Received, seen: Received[]) => number) {
  const seen: Received[] = [];
  const httpServer = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const request = { headers: req.headers as Record<string, string>, body, status: 0 };
      request.status = answer(request, seen);
      seen.push(request);
      res
        .writeHead(request.status, { "content-type": "text/plain" })
        .end(request.status < 300 ? "ok" : "try again");
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/hook`,
    seen,
    close: () => new Promise<void>((resolve) => httpServer.close(() => resolve())),
  };
}

/** Fails the first request of each webhook-id (or of each batch), answers 200 after. */
const failFirst = (request: Received, seen: Received[]) => {
  const id = request.headers["webhook-id"] ?? request.body;
  return seen.some((earlier) => (earlier.headers["webhook-id"] ?? earlier.body) === id) ? 200 : 500;
};

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const call = (overrides: Partial<InvocationRecord> = {}): InvocationRecord => ({
  id: randomUUID(),
  applicationId: world.appId,
  callerUserId: world.consumerId,
  apiKeyId: null,
  endUser: "events-user",
  mode: "completion",
  model: "gpt-4o-mini",
  status: "success",
  latencyMs: 9,
  inputTokens: 3,
  outputTokens: 4,
  chargedCents: PRICE,
  ...overrides,
});

/** Records `n` paid calls the way the gateway does: each from a hold of the consumer's wallet. */
async function paidCalls(
  n: number,
  overrides: Partial<InvocationRecord> = {},
  payer: { consumerId: string; accounts: { wallet: string; held: string } } = world,
) {
  const recorder = new CallRecorder(db);
  return Promise.all(
    Array.from({ length: n }, async () => {
      const payment = await takeCallPayment(db, {
        payerId: payer.consumerId,
        applicationId: world.appId,
        creatorId: world.creatorId,
        amountCents: PRICE,
        ttlSeconds: 60,
        topUpUrl: "http://example.test/wallet",
        tryIncluded: true,
        accounts: payer.accounts,
      });
      const record = call({ callerUserId: payer.consumerId, ...overrides });
      const holdId = payment.holdId as string;
      const recorded = await recorder.record(
        { ...record, holdId },
        { holdId, amountCents: PRICE, feePercent: 10 },
      );
      return { id: record.id, ...recorded };
    }),
  );
}

const callEvents = () =>
  queryRows<{ id: string; amount_micros: string; invocation: string }>(
    db,
    sql`select id, amount_micros::text, data->>'invocation_id' as invocation from events where type = 'call.charged'`,
  );

beforeAll(async () => {
  testDb = await createTestDatabase();
  server = await startTestServer(testDb, {
    env: { ALLOW_PRIVATE_UPSTREAMS: "true", ADMIN_EMAILS: ADMIN_EMAIL },
  });
  db = server.database.db;
  world = await sellerAndBuyer(server, db, { name: "Events", priceCents: PRICE, fundsCents: 5_000 });
});
afterAll(async () => {
  await server?.stop();
  await testDb?.destroy();
});

describe("the log", () => {
  it("writes one event per charged call, with its charge, whatever statement recorded it, and none for a failed call", async () => {
    const batched = await paidCalls(6);
    // A chat turn is written on its own (recordOne), a failed call is not charged.
    const [chat] = await paidCalls(1, {
      mode: "chat",
      conversation: { id: randomUUID(), isNew: true, query: "hi", answer: "hello", inputs: {} },
    });
    const failed = call({ status: "error", errorType: "upstream_failed", chargedCents: 0 });
    await new CallRecorder(db).record(failed);
    const events = await callEvents();
    for (const paid of [...batched, chat]) {
      const mine = events.filter((event) => event.invocation === paid?.id);
      expect(mine, `the event of call ${paid?.id}`).toHaveLength(1);
      expect(Number(mine[0]?.amount_micros)).toBe((paid?.chargedCents ?? 0) * 10_000);
      expect(mine[0]?.id).toBe(`call_${paid?.id}`);
    }
    expect(events.some((event) => event.invocation === failed?.id)).toBe(false);
    await expectReconciled(db);
  });

  it("has a reconcile that names a call whose event is missing, and a doubled event", async () => {
    const [paid] = await paidCalls(1);
    const id = `call_${paid?.id}`;
    const [kept] = await queryRows<Record<string, unknown>>(db, sql`select * from events where id = ${id}`);
    await db.execute(sql`delete from events where id = ${id}`);
    expect(await callsWithoutTheirEvent(db)).toContain(paid?.id);
    await db.execute(
      sql`insert into events (id, type, occurred_at, user_ids, application_id, amount_micros, data)
          select id, type, occurred_at, user_ids, application_id, amount_micros, data from
          jsonb_populate_record(null::events, ${JSON.stringify(kept)}::jsonb)`,
    );
    await db.execute(
      sql`insert into events (id, type, occurred_at, user_ids, application_id, amount_micros, data)
          select id, type, occurred_at, user_ids, application_id, amount_micros, data from events where id = ${id}`,
    );
    expect(await duplicateEvents(db)).toEqual([id]);
    await db.execute(
      sql`delete from events where id = ${id} and seq = (select max(seq) from events where id = ${id})`,
    );
    expect(await duplicateEvents(db)).toEqual([]);
    expect(await callsWithoutTheirEvent(db)).toEqual([]);
  });

  it("writes the top-up's event with its money, for its payer", async () => {
    const rows = await queryRows<{ amount: string; users: string }>(
      db,
      sql`select amount_micros::text as amount, user_ids::text as users from events where type = 'wallet.topped_up'`,
    );
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]?.amount)).toBe(5_000 * 10_000);
    expect(rows[0]?.users).toContain(world.consumerId);
  });

  it("reads every event exactly once, in the log's order, batch after batch, past 99 → 100 and 999 → 1000", async () => {
    // Enough events that seq (and on a young database, txid) cross a decimal length: ordered as
    // text they would come out of order, and a cursor would go back or skip (a bug the money attack found).
    await paidCalls(120);
    await db.execute(sql`select setval(pg_get_serial_sequence('events', 'seq'), 995)`);
    await paidCalls(10);
    const all = (await queryRows<{ id: string }>(db, sql`select id from events order by txid, seq`)).map(
      (row) => row.id,
    );
    const read: string[] = [];
    let cursor = START;
    for (;;) {
      const batch = await readEvents(db, cursor, { limit: 7 });
      if (batch.length === 0) break;
      read.push(...batch.map((event) => event.id));
      const last = batch.at(-1);
      cursor = last ? { txid: last.txid, seq: last.seq } : cursor;
    }
    expect(read).toEqual(all);
    expect(all.length).toBeGreaterThan(130);
  });

  it("reads only events of finished transactions: one committed after a newer one is not passed over", async () => {
    if (testDb.kind !== "postgres") return expect(testDb.kind).toBe("pglite"); // one connection: nothing runs beside
    const before = await readEvents(db, START, { limit: 100_000 });
    const last = before.at(-1);
    const cursor = last ? { txid: last.txid, seq: last.seq } : START;
    const { default: pg } = await import("pg");
    const open = new pg.Client({ connectionString: testDb.serverEnv.DATABASE_URL });
    await open.connect();
    await open.query("begin");
    await open.query(`select pg_current_xact_id()`);
    await paidCalls(1); // commits while `open`, older, is still running
    expect(await readEvents(db, cursor, { limit: 100 })).toEqual([]);
    await open.query("commit");
    await open.end();
    expect((await readEvents(db, cursor, { limit: 100 })).length).toBeGreaterThan(0);
  });

  it("is not held back by a transaction running in another database of the same server", async () => {
    if (testDb.kind !== "postgres") return expect(testDb.kind).toBe("pglite");
    const { default: pg } = await import("pg");
    const neighbour = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await neighbour.connect();
    await neighbour.query("begin");
    await neighbour.query("select pg_current_xact_id()");
    const before = await readEvents(db, START, { limit: 100_000 });
    const last = before.at(-1);
    const cursor = last ? { txid: last.txid, seq: last.seq } : START;
    const [paid] = await paidCalls(1);
    const read = await readEvents(db, cursor, { limit: 100 });
    await neighbour.query("rollback");
    await neighbour.end();
    expect(read.map((event) => event.id)).toContain(`call_${paid?.id}`);
  });
});

describe("webhooks", () => {
  let other: Caller;

  beforeAll(async () => {
    other = await createCaller(server.baseUrl, "Stranger");
  });

  it("refuses a bad URL and an unknown event type by name", async () => {
    const consumer = await createCaller(server.baseUrl, "Hooks Refused");
    const bad = await consumer.api("POST", "/api/webhooks/endpoints/", {
      body: { url: "ftp://example.test/x", event_types: ["call.charged"] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toHaveProperty("url");
    const unknown = await consumer.api("POST", "/api/webhooks/endpoints/", {
      body: { url: "https://example.test/x", event_types: ["call.charged", "nope.never"] },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.fields.event_types).toContain("nope.never");
  });

  it("delivers every event concerning the endpoint's owner, signed, once acknowledged, with one id across retries", async () => {
    const hook = await receiver(failFirst);
    // The consumer's endpoint: its calls and top-ups (the server's own job relays it).
    const consumer = await createCaller(server.baseUrl, "Hooks Consumer");
    const created = await consumer.api("POST", "/api/webhooks/endpoints/", {
      body: { url: hook.url, event_types: ["call.charged", "wallet.topped_up"], description: "billing" },
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    const verifier = new Webhook(created.body.secret);
    const [me] = await queryRows<{ id: string }>(
      db,
      sql`select id from users where email = ${consumer.email}`,
    );
    const consumerId = me?.id as string;
    // Its facts: a top-up and paid calls.
    await fundWallet(consumer, 500);
    const accounts = {
      wallet: await accountFor(db, "wallet", consumerId),
      held: await accountFor(db, "held", consumerId),
    };
    await paidCalls(3, {}, { consumerId, accounts });
    const expected = (
      await queryRows<{ id: string }>(
        db,
        sql`select id from events where ${consumerId}::uuid = any(user_ids) and type in ('call.charged', 'wallet.topped_up')`,
      )
    ).map((row) => row.id);
    expect(expected).toHaveLength(4);
    // The server's job fans out and delivers; a 500 is retried 5 s later with the same id.
    await until(
      async () =>
        hook.seen.filter((request) => request.status === 200).map((request) => request.headers["webhook-id"]),
      (ok) => expected.every((id) => ok.includes(id)),
      "every event acknowledged",
    );
    const ids = hook.seen.map((request) => request.headers["webhook-id"] as string);
    expect(new Set(ids)).toEqual(new Set(expected));
    for (const id of expected)
      expect(
        ids.filter((seen) => seen === id),
        id,
      ).toHaveLength(2); // 500, then 200
    for (const request of hook.seen) {
      const payload = verifier.verify(request.body, request.headers) as { id: string; type: string };
      expect(payload.id).toBe(request.headers["webhook-id"]);
    }
    // Nothing else of anyone else reached it.
    expect(hook.seen.every((request) => expected.includes(request.headers["webhook-id"] as string))).toBe(
      true,
    );
    const log = await consumer.api("GET", `/api/webhooks/endpoints/${created.body.id}/deliveries/`);
    expect(log.body).toHaveLength(4);
    expect(
      log.body.every(
        (d: { status: string; attempts: number }) => d.status === "delivered" && d.attempts === 2,
      ),
    ).toBe(true);
    expect(log.body[0].attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([200, 500]);
    // Another user sees none of it.
    expect((await other.api("GET", `/api/webhooks/endpoints/${created.body.id}/deliveries/`)).status).toBe(
      404,
    );
    expect((await other.api("POST", `/api/webhooks/deliveries/${log.body[0].id}/redeliver/`)).status).toBe(
      404,
    );
    await hook.close();
  });

  it("sends a test event, and redelivers a failed one with the same id, signed by the old and new secret after a rotation", async () => {
    const hook = await receiver(failFirst);
    const consumer = await createCaller(server.baseUrl, "Hooks Tester");
    const created = await consumer.api("POST", "/api/webhooks/endpoints/", {
      body: { url: hook.url, event_types: ["*"] },
    });
    const first = await consumer.api("POST", `/api/webhooks/endpoints/${created.body.id}/test/`);
    expect(first.status).toBe(200);
    expect(first.body.event_type).toBe("webhook.test");
    expect(first.body.attempt_log[0].status_code).toBe(500);
    const rotated = await consumer.api("POST", `/api/webhooks/endpoints/${created.body.id}/rotate-secret/`, {
      body: {},
    });
    expect(rotated.body.secret).not.toBe(created.body.secret);
    const again = await consumer.api("POST", `/api/webhooks/deliveries/${first.body.id}/redeliver/`);
    expect(again.body.status).toBe("delivered");
    expect(again.body.attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([200, 500]);
    expect(hook.seen.map((r) => r.headers["webhook-id"])).toEqual([first.body.event_id, first.body.event_id]);
    const last = hook.seen[1] as Received;
    expect(new Webhook(rotated.body.secret).verify(last.body, last.headers)).toMatchObject({
      type: "webhook.test",
    });
    expect(new Webhook(created.body.secret).verify(last.body, last.headers)).toMatchObject({
      type: "webhook.test",
    });
    // A disabled endpoint gets nothing; the secret is never in a list.
    const listed = await consumer.api("GET", "/api/webhooks/endpoints/");
    expect(JSON.stringify(listed.body)).not.toContain("whsec_");
    await hook.close();
  });
});

describe("usage export", () => {
  it("exports exactly the log's charged calls to CloudEvents and Stripe meters, through failures and a crash after sending", async () => {
    const cloud = await receiver((_request, seen) => (seen.length === 0 ? 503 : 200));
    // Stripe takes one event per request and refuses every third: a batch still makes progress.
    const stripe = await receiver((_request, seen) => (seen.length % 3 === 2 ? 500 : 200));
    const safeFetch = createSafeFetch({ allowPrivate: true, timeoutMs: 10_000 });
    const cloudSink = cloudEventsSink({ url: cloud.url, source: "https://promptmint.test" }, safeFetch);
    const meterSink = stripeMeterSink(
      { eventName: "promptmint_calls", secretKey: "sk_test_x", apiBase: stripe.url.replace(/\/hook$/, "") },
      db,
      safeFetch,
    );
    await paidCalls(5);
    // The first batch is refused: nothing moves, the error is kept, the next round sends it again.
    await expect(relay(db, cloudSink)).rejects.toThrow(/503/);
    const [failed] = await queryRows<{ last_error: string }>(
      db,
      sql`select last_error from event_cursors where sink = 'cloudevents'`,
    );
    expect(failed?.last_error).toMatch(/503/);
    // A relay that crashes after the receiver acknowledged, before the cursor moved: sent again later.
    const crashing: Sink = {
      ...meterSink,
      async send(events, tx) {
        await meterSink.send(events.slice(0, 2), tx);
        throw new Error("killed after sending");
      },
    };
    await expect(relay(db, crashing)).rejects.toThrow(/killed/);
    await relay(db, cloudSink);
    const exported = async () =>
      Number(
        (
          await queryRows<{ n: string }>(
            db,
            sql`select exported::text as n from event_cursors where sink = 'stripe_meter'`,
          )
        )[0]?.n ?? 0,
      );
    // Stripe refuses one request in three: a refused round moves the cursor past what was
    // acknowledged before the refusal, so the rounds needed are bounded by the refusals, not endless.
    const total = (await callEvents()).length;
    let refusals = 0;
    for (;;) {
      const done = await relay(db, meterSink).then(
        () => true,
        () => false,
      );
      if (done) break;
      refusals += 1;
      expect(refusals, "the meter sink makes no progress").toBeLessThanOrEqual(total);
    }
    expect(refusals).toBeGreaterThan(1);
    expect(await exported()).toBe(total);
    const charged = (await callEvents()).map((event) => event.id).sort();
    const cloudIds = cloud.seen
      .filter((request) => request.status === 200)
      .flatMap((request) =>
        (JSON.parse(request.body) as { id: string; source: string }[]).map((event) => event.id),
      );
    expect([...cloudIds].sort()).toEqual(charged);
    const batch = JSON.parse((cloud.seen[1] as Received).body) as Record<string, unknown>[];
    expect(batch[0]).toMatchObject({
      specversion: "1.0",
      source: "https://promptmint.test",
      type: "com.promptmint.call.charged",
    });
    const accepted = stripe.seen.filter((request) => request.status === 200);
    const identifiers = accepted.map((request) => new URLSearchParams(request.body).get("identifier"));
    // At least once: what the crashed relay sent reached Stripe again, with the same identifier;
    // a refused request is sent again, and only it (each refusal resends nothing acknowledged).
    expect(new Set(identifiers)).toEqual(new Set(charged));
    expect(identifiers.length).toBeLessThanOrEqual(charged.length + 2);
    expect(new URLSearchParams(accepted[0]?.body).get("payload[value]")).toBe(String(PRICE));
    expect(await exportsUnlikeTheLog(db)).toEqual([]);
    const report = await reconcile(db);
    expect(report.exportsUnlikeLog).toEqual([]);
    await cloud.close();
    await stripe.close();
  });

  it("lets the next relay go on at once when one stops at its round limit with more to send", async () => {
    const seen: string[] = [];
    const sink: Sink = {
      name: "rounds",
      batch: 3,
      send: async (events) => void seen.push(...events.map((e) => e.id)),
    };
    const first = await relay(db, sink, { rounds: 1 });
    expect(first.sent).toBe(3);
    // Another process (another holder) the moment after: not locked out for the lease's minute.
    const second = await relay(db, sink, { rounds: 1 });
    expect(second).toEqual({ sent: 3, leased: true });
    expect(new Set(seen).size).toBe(6);
  });

  it("serves the log to an operator as NDJSON after a cursor, and to no one else", async () => {
    const operator = await createCaller(server.baseUrl, "Operator", { email: ADMIN_EMAIL, verified: true });
    const page = await fetch(`${server.baseUrl}/api/admin/usage-events?limit=3&types=call.charged`, {
      headers: { authorization: `Bearer ${operator.token}` },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("application/x-ndjson");
    const lines = (await page.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(4);
    const next = lines[3].next_cursor as string;
    expect(decodeCursor(next).seq).toBeGreaterThan(0);
    const rest = await fetch(
      `${server.baseUrl}/api/admin/usage-events?limit=10000&types=call.charged&cursor=${next}`,
      {
        headers: { authorization: `Bearer ${operator.token}` },
      },
    );
    const restIds = (await rest.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
      .filter((l) => l.id)
      .map((l) => l.id);
    const all = (await callEvents()).map((event) => event.id);
    expect(new Set([...lines.slice(0, 3).map((l) => l.id), ...restIds])).toEqual(new Set(all));
    expect([...lines.slice(0, 3).map((l) => l.id), ...restIds]).toHaveLength(all.length);
    const consumer = await createCaller(server.baseUrl, "Not Operator");
    expect((await consumer.api("GET", "/api/admin/usage-events")).status).toBe(403);
    expect((await operator.api("GET", "/api/admin/usage-events?cursor=nonsense")).status).toBe(400);
    expect((await operator.api("GET", "/api/admin/usage-events?types=nope")).status).toBe(400);
  });
});
