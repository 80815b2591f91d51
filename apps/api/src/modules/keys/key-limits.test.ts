import { randomUUID } from "node:crypto";
import { and, eq, isNotNull, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKeyReservations, apiKeySpend, invocations } from "../../db/schema/index.ts";
import { type Caller, fundWallet, settledWallet } from "../../test/caller.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import type { TestServer } from "../../test/server.ts";
import { sweepKeyReservations } from "../billing/call-payment/key-reservations.ts";
import { type KeyWorld, PRICE, startKeyWorld } from "./key-world.ts";

// Keys consumers can hand to software (issue 18, decision 035): a spend limit per UTC period,
// an expiry date and an allow-list of apps, on the real server and database. The same limits
// seen through the openai SDK: key-limits.compat.test.ts.

const MICROS = 10_000;

let world: KeyWorld;
let server: TestServer;
let vendor: KeyWorld["vendor"];
let creator: Caller;
let consumer: Caller;
let appA: string;
let appB: string;

beforeAll(async () => {
  world = await startKeyWorld();
  ({ server, vendor, creator, consumer, appA, appB } = world);
});
afterAll(async () => {
  await world?.stop();
});

const db = () => server.database.db;
const createKey = (options?: Record<string, unknown>) => world.createKey(options);

const call = (key: string, slug = appA) =>
  consumer.api("POST", `/api/app/${slug}/completion-messages`, {
    auth: key,
    body: { inputs: { query: "hi" }, response_mode: "blocking" },
  });

const listed = async (id: string) =>
  ((await consumer.api("GET", "/api/keys/")).body as Array<Record<string, unknown>>).find((k) => k.id === id);

/** The consumer's money, available plus held, once no lease holds any of it. */
const walletMicros = async () => {
  const wallet = await settledWallet(consumer);
  return wallet.balance_micros + wallet.held_micros;
};

const chargedCallsOf = async (keyId: string) =>
  (
    await db()
      .select({ id: invocations.id })
      .from(invocations)
      .where(and(eq(invocations.apiKeyId, keyId), isNotNull(invocations.holdId)))
  ).length;

describe("spend limit", () => {
  it("refuses the call that would pass the limit with 402 key_limit_reached naming it, and charges nothing", async () => {
    const { key, id } = await createKey({ spend_limit_cents: 2 * PRICE, limit_reset: "daily" });
    const before = await walletMicros();
    expect((await call(key)).status).toBe(200);
    expect((await call(key)).status).toBe(200);
    const refused = await call(key);
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe("key_limit_reached");
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    expect(refused.body.message).toBe(
      `This API key's spend limit of $0.60 per day (UTC) is reached: it has spent $0.60 today, and this call costs $0.30. You were not charged. The limit resets at ${tomorrow.toISOString()}.`,
    );
    expect(await walletMicros()).toBe(before - 2 * PRICE * MICROS);
    expect(await chargedCallsOf(id)).toBe(2);
    expect(await listed(id)).toMatchObject({
      spend_limit_cents: 60,
      limit_reset: "daily",
      spent_micros: 2 * PRICE * MICROS,
      period_resets_at: tomorrow.toISOString(),
    });
  });

  it("lets exactly k of 20 parallel calls through with a limit of k prices, and charges the wallet k times", async () => {
    const k = 5;
    const { key, id } = await createKey({ spend_limit_cents: k * PRICE, limit_reset: "monthly" });
    const before = await walletMicros();
    const answers = await Promise.all(Array.from({ length: 20 }, () => call(key)));
    const ok = answers.filter((answer) => answer.status === 200);
    expect(ok).toHaveLength(k);
    expect(answers.filter((answer) => answer.status === 402).map((answer) => answer.body.code)).toEqual(
      Array(20 - k).fill("key_limit_reached"),
    );
    expect(await walletMicros()).toBe(before - k * PRICE * MICROS);
    expect(await chargedCallsOf(id)).toBe(k);
    expect((await listed(id))?.spent_micros).toBe(k * PRICE * MICROS);
    await expectReconciled(db());
  });

  it("does not count failed upstream calls", async () => {
    const { key, id } = await createKey({ spend_limit_cents: PRICE, limit_reset: "weekly" });
    vendor.set({ kind: "status", status: 500, message: "down" });
    try {
      for (let i = 0; i < 3; i++) expect((await call(key)).status).toBe(502);
    } finally {
      vendor.set({ kind: "echo" });
    }
    expect((await listed(id))?.spent_micros).toBe(0);
    expect((await call(key)).status).toBe(200);
    expect((await call(key)).body.code).toBe("key_limit_reached");
  });

  it("starts again at 0 in the next period", async () => {
    const { key, id } = await createKey({ spend_limit_cents: PRICE, limit_reset: "daily" });
    expect((await call(key)).status).toBe(200);
    expect((await call(key)).status).toBe(402);
    // A day passes: the period the spend was counted in is now yesterday.
    await db()
      .update(apiKeySpend)
      .set({ periodStart: sql`${apiKeySpend.periodStart} - interval '1 day'` })
      .where(eq(apiKeySpend.keyId, id));
    expect((await listed(id))?.spent_micros).toBe(0);
    expect((await call(key)).status).toBe(200);
    expect((await call(key)).status).toBe(402);
  });

  it("costs the key nothing for the owner's own calls, and nothing extra for keys without a limit", async () => {
    // The owner's call has no price, but its model cost is held from the owner's wallet (decision 062).
    await fundWallet(creator, 100);
    const owned = await creator.api("POST", "/api/keys/", {
      body: { name: "own", spend_limit_cents: 1, limit_reset: "never" },
    });
    const free = await creator.api("POST", `/api/app/${appA}/completion-messages`, {
      auth: owned.body.key,
      body: { inputs: { query: "hi" } },
    });
    expect(free.status).toBe(200);
    const { key, id } = await createKey();
    expect((await call(key)).status).toBe(200);
    const rows = await db()
      .select()
      .from(apiKeySpend)
      .where(sql`${apiKeySpend.keyId} in (${owned.body.id}, ${id})`);
    expect(rows).toEqual([]);
  });

  it("applies a raised limit to the next call at once (PATCH)", async () => {
    const { key, id } = await createKey({ spend_limit_cents: PRICE });
    expect((await call(key)).status).toBe(200);
    expect((await call(key)).status).toBe(402);
    const raised = await consumer.api("PATCH", `/api/keys/${id}/`, {
      body: { spend_limit_cents: 2 * PRICE },
    });
    expect(raised.status).toBe(200);
    expect(raised.body).toMatchObject({
      spend_limit_cents: 60,
      limit_reset: "never",
      period_resets_at: null,
    });
    expect((await call(key)).status).toBe(200);
    const refused = await call(key);
    expect(refused.body.message).toContain(
      "spend limit of $0.60 in total is reached: it has spent $0.60 in total",
    );
    expect(refused.body.message).toContain("The limit does not reset");
    const cleared = await consumer.api("PATCH", `/api/keys/${id}/`, { body: { spend_limit_cents: null } });
    expect(cleared.body.spend_limit_cents).toBeNull();
    expect((await call(key)).status).toBe(200);
  });
});

describe("crash repair", () => {
  it("gives back an expired reservation whose call was never charged, and keeps a charged one", async () => {
    const { key, id } = await createKey({ spend_limit_cents: 10 * PRICE });
    const answered = await call(key);
    expect(answered.status).toBe(200);
    const [spend] = await db().select().from(apiKeySpend).where(eq(apiKeySpend.keyId, id));
    if (!spend) throw new Error("no spend row");
    // A process died after reserving a call it never recorded: its reservation and spend remain.
    const lost = randomUUID();
    await db()
      .insert(apiKeyReservations)
      .values({
        callId: lost,
        keyId: id,
        periodStart: spend.periodStart,
        micros: PRICE * MICROS,
        expiresAt: new Date(),
      });
    await db()
      .update(apiKeySpend)
      .set({ spentMicros: sql`${apiKeySpend.spentMicros} + ${PRICE * MICROS}` })
      .where(eq(apiKeySpend.keyId, id));
    // Both calls' reservations are past their expiry.
    await db()
      .update(apiKeyReservations)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(apiKeyReservations.keyId, id));
    expect((await listed(id))?.spent_micros).toBe(2 * PRICE * MICROS);
    await sweepKeyReservations(db());
    expect((await listed(id))?.spent_micros).toBe(PRICE * MICROS);
    expect(await db().select().from(apiKeyReservations).where(eq(apiKeyReservations.keyId, id))).toEqual([]);
  });
});

describe("expiry", () => {
  it("refuses an expired key with 401 api_key_expired naming the date", async () => {
    const expiresAt = new Date(Date.now() + 1_500);
    const { key, id } = await createKey({ expires_at: expiresAt.toISOString() });
    expect((await call(key)).status).toBe(200);
    expect((await listed(id))?.expires_at).toBe(expiresAt.toISOString());
    await new Promise((resolve) => setTimeout(resolve, expiresAt.getTime() - Date.now() + 50));
    const refused = await call(key);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe("api_key_expired");
    expect(refused.body.message).toContain(`expired on ${expiresAt.toISOString()}`);
    // Extended: usable again at once.
    const extended = await consumer.api("PATCH", `/api/keys/${id}/`, { body: { expires_at: null } });
    expect(extended.body.expires_at).toBeNull();
    expect((await call(key)).status).toBe(200);
  });
});

describe("allowed apps", () => {
  it("refuses other apps with 403 app_not_allowed_for_key naming the app, and calls the listed one", async () => {
    const { key, id } = await createKey({ allowed_apps: [appA] });
    expect((await listed(id))?.allowed_apps).toEqual([appA]);
    expect((await call(key, appA)).status).toBe(200);
    const refused = await call(key, appB);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("app_not_allowed_for_key");
    expect(refused.body.message).toBe(
      `This API key may not call the app '${appB}': it is limited to '${appA}'`,
    );
    // An empty list allows every app again.
    await consumer.api("PATCH", `/api/keys/${id}/`, { body: { allowed_apps: [] } });
    expect((await listed(id))?.allowed_apps).toBeNull();
    expect((await call(key, appB)).status).toBe(200);
  });
});

describe("options validation", () => {
  it("answers 400 naming the field for each bad option, at creation and in PATCH", async () => {
    const { id } = await createKey();
    const bad: Array<[Record<string, unknown>, string, string]> = [
      [{ allowed_apps: ["no-such-app"] }, "allowed_apps", "names an unknown app: no-such-app"],
      [{ spend_limit_cents: 0 }, "spend_limit_cents", "must be at least 1 cent"],
      [{ spend_limit_cents: 1.5 }, "spend_limit_cents", "must be a whole number of cents"],
      [{ limit_reset: "hourly" }, "limit_reset", ""],
      [{ expires_at: "2020-01-01T00:00:00Z" }, "expires_at", "must be in the future"],
      [{ expires_at: "next tuesday" }, "expires_at", "must be an ISO 8601 date-time"],
      [{ colour: "red" }, "colour", ""],
    ];
    for (const [body, field, problem] of bad) {
      for (const answer of [
        await consumer.api("PATCH", `/api/keys/${id}/`, { body }),
        await consumer.api("POST", "/api/keys/", { body: { name: "x", ...body } }),
      ]) {
        expect(answer.status, JSON.stringify(body)).toBe(400);
        expect(answer.body.fields?.[field], JSON.stringify(answer.body)).toBeDefined();
        if (problem) expect(answer.body.fields[field]).toBe(problem);
      }
    }
    const empty = await consumer.api("PATCH", `/api/keys/${id}/`, { body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.fields?.body).toContain("must name at least one of");
    // Someone else's key is not found, like a missing one.
    expect((await creator.api("PATCH", `/api/keys/${id}/`, { body: { name: "mine" } })).status).toBe(404);
  });
});
