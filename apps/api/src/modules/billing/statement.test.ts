import type { StatementLine } from "@promptmint/contracts";
import { sql } from "drizzle-orm";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";

/**
 * The wallet statement (decision 029): one line per app and UTC day for the calls paid, plus
 * top-ups and plan payments; never the leases' holds and releases; its lines add up to the wallet.
 */
const apps: Record<string, { slug: string; name: string }> = {};

const server = useTestServer({ env: { GATEWAY_RATE_LIMIT_PER_MINUTE: "1000" } });
const creator = useCaller(server, "Statement Seller");

beforeAll(async () => {
  for (const [name, price] of [
    ["Haiku Writer", 5],
    ["Limerick Maker", 8],
  ] as const) {
    // The sandbox model costs nothing: any price covers it (decision 026).
    const app = await createPromptApp(
      creator,
      { name, visibility: "public", price_cents: price },
      { model: "sandbox" },
    );
    expect(
      (await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } }))
        .status,
    ).toBe(200);
    apps[name] = { slug: app.slug, name };
  }
});
afterEach(async () => {
  await expectReconciled(server.database.db);
});

const call = (caller: Caller, slug: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, { body: { inputs: { query: "hi" } } });

/** Every page of the caller's statement, following the cursor. */
async function wholeStatement(
  caller: Caller,
  limit = 100,
): Promise<{ lines: StatementLine[]; pages: number }> {
  const lines: StatementLine[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`;
    const page = await caller.api("GET", `/api/wallet/statement/${query}`);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    lines.push(...page.body.lines);
    cursor = page.body.next_cursor;
    pages += 1;
  } while (cursor && pages < 100);
  return { lines, pages };
}

const sumOf = (lines: StatementLine[]) => lines.reduce((sum, line) => sum + line.amount_micros, 0);
const userIdOf = async (caller: Caller) =>
  (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;

describe("the wallet statement", () => {
  it("shows one line per app for the day's calls, the top-up and the plan payment, and adds up to the wallet", async () => {
    const consumer = await createCaller(server.baseUrl, "Statement Reader");
    await fundWallet(consumer, 1000);
    const haiku = apps["Haiku Writer"] as { slug: string };
    const limerick = apps["Limerick Maker"] as { slug: string };
    for (let i = 0; i < 12; i++) expect((await call(consumer, haiku.slug)).status).toBe(200);
    // In parallel too: calls share leases, and the statement still counts each once.
    const parallel = await Promise.all(Array.from({ length: 3 }, () => call(consumer, limerick.slug)));
    for (const answer of parallel) expect(answer.status).toBe(200);
    const plan = await creator.api("POST", `/api/app/${limerick.slug}/packages/`, {
      body: { name: "Two", price_cents: 100, description: "", features: {}, included_calls: 2 },
    });
    const subscribed = await consumer.api("POST", `/api/app/${limerick.slug}/subscriptions/`, {
      body: { package_id: plan.body.id },
    });
    expect(subscribed.status).toBe(201);
    // Covered by the plan: no charge, so no more to the day's Limerick line.
    for (let i = 0; i < 2; i++) expect((await call(consumer, limerick.slug)).status).toBe(200);

    const wallet = await settledWallet(consumer);
    expect(wallet.balance_micros).toBe(10_000 * (1000 - 12 * 5 - 3 * 8 - 100));
    const { lines } = await wholeStatement(consumer);
    const today = new Date().toISOString().slice(0, 10);
    expect(lines.find((line) => line.application?.name === "Haiku Writer")).toMatchObject({
      kind: "calls",
      description: "Haiku Writer — 12 calls",
      calls: 12,
      day: today,
      amount_micros: -600_000,
    });
    expect(lines.find((line) => line.application?.name === "Limerick Maker")).toMatchObject({
      description: "Limerick Maker — 3 calls",
      amount_micros: -240_000,
    });
    expect(lines.filter((line) => line.kind === "top_up")).toHaveLength(1);
    expect(lines.find((line) => line.kind === "top_up")?.amount_micros).toBe(10_000_000);
    expect(lines.find((line) => line.kind === "subscription")).toMatchObject({
      description: expect.stringContaining("Limerick Maker"),
      amount_micros: -1_000_000,
    });
    expect(lines).toHaveLength(4);
    // Never the leases: no hold, no release, no "Held for paid calls".
    for (const line of lines) {
      expect(["hold", "release"]).not.toContain(line.kind);
      expect(line.description).not.toMatch(/held|released/i);
    }
    expect(sumOf(lines)).toBe(wallet.balance_micros);
    // Newest first.
    const times = lines.map((line) => Date.parse(line.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it("puts each UTC day's calls on their own line, pages without repeating or skipping, and adds up while leases are open", async () => {
    const consumer = await createCaller(server.baseUrl, "Daily Caller");
    const consumerId = await userIdOf(consumer);
    await fundWallet(consumer, 500);
    const haiku = apps["Haiku Writer"] as { slug: string };
    for (let i = 0; i < 6; i++) expect((await call(consumer, haiku.slug)).status).toBe(200);
    // Move three of them to earlier days, as if they had been made then (one per day).
    const db = server.database.db;
    await db.execute(sql`
      update invocations i set created_at = i.created_at - (o.n || ' days')::interval
      from (select id, row_number() over (order by id) as n from invocations
            where caller_user_id = ${consumerId}::uuid order by id limit 3) o
      where i.id = o.id`);
    await fundWallet(consumer, 100);
    for (let i = 0; i < 2; i++) expect((await call(consumer, haiku.slug)).status).toBe(200);

    // At once, while the last lease may still be open: the lines are the wallet's unspent money,
    // what is available plus what is held and not yet spent (as the wallet reads it).
    const now = (await consumer.api("GET", "/api/wallet/")).body;
    const { lines: early } = await wholeStatement(consumer);
    expect(sumOf(early)).toBe(now.balance_micros + now.held_micros);

    const wallet = await settledWallet(consumer);
    const { lines: all } = await wholeStatement(consumer);
    const callLines = all.filter((line) => line.kind === "calls");
    expect(callLines).toHaveLength(4);
    expect(new Set(callLines.map((line) => line.day)).size).toBe(4);
    expect(callLines.map((line) => line.calls)).toEqual([5, 1, 1, 1]);
    expect(sumOf(all)).toBe(wallet.balance_micros);

    const paged = await wholeStatement(consumer, 1);
    expect(paged.pages).toBe(all.length);
    expect(paged.lines.map((line) => line.id)).toEqual(all.map((line) => line.id));
    const two = await wholeStatement(consumer, 2);
    expect(two.lines.map((line) => line.id)).toEqual(all.map((line) => line.id));
  });

  it("shows nobody else's movements", async () => {
    const stranger = await createCaller(server.baseUrl, "Stranger");
    const { lines } = await wholeStatement(stranger);
    expect(lines).toEqual([]);
    await fundWallet(stranger, 100);
    const after = await wholeStatement(stranger);
    expect(after.lines.map((line) => line.kind)).toEqual(["top_up"]);
  });

  it("refuses a cursor it did not give and a bad limit, naming the field", async () => {
    const consumer = await createCaller(server.baseUrl, "Tamperer");
    for (const cursor of [
      "nope",
      Buffer.from("2026-01-01T00:00:00.000000Z|entry:1' or 1=1").toString("base64url"),
      // Well formed, but moments PostgreSQL cannot hold or no statement can have: 400, not 500.
      Buffer.from("0000-01-01T00:00:00.000000Z|entry:00000000000000000001").toString("base64url"),
      Buffer.from(
        "2026-01-01T00:00:00.000000Z|calls:00000000-0000-0000-0000-000000000000:0000-00-00",
      ).toString("base64url"),
      Buffer.from("9999-12-31T00:00:00.000000Z|entry:00000000000000000001").toString("base64url"),
    ]) {
      const answer = await consumer.api("GET", `/api/wallet/statement/?cursor=${cursor}`);
      expect(answer.status).toBe(400);
      expect(answer.body.fields).toHaveProperty("cursor");
    }
    for (const limit of ["0", "101", "x"]) {
      const answer = await consumer.api("GET", `/api/wallet/statement/?limit=${limit}`);
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/limit/);
    }
    expect((await consumer.api("GET", "/api/wallet/statement/", { auth: "" })).status).toBe(401);
  });
});
