import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { users } from "../../db/schema/index.ts";
import { type Caller, createCaller } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";
import { MICROS_PER_CENT } from "../billing/money.ts";
import { reconcile } from "../billing/reconcile.ts";
import { creditEarnings } from "./payouts-test-helpers.ts";

let testDb: TestDatabase;
let server: TestServer;

beforeAll(async () => {
  testDb = await createTestDatabase();
  server = await startTestServer(testDb);
});
afterEach(async () => expect((await reconcile(server.database.db)).ok).toBe(true));
afterAll(async () => {
  await server?.stop();
  await testDb?.destroy();
});

async function userIdOf(caller: Caller): Promise<string> {
  const [row] = await server.database.db.select().from(users).where(eq(users.email, caller.email));
  if (!row) throw new Error("no user");
  return row.id;
}

/** Through the sandbox's onboarding page, as a browser submits its form. */
async function onboard(caller: Caller, bank: "succeeds" | "fails"): Promise<Response> {
  const link = await caller.api("POST", "/api/payouts/onboarding");
  expect(link.body.gateway).toBe("sandbox");
  const page = await fetch(link.body.url);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain("Test bank account: succeeds payouts");
  expect(html).toContain("Sandbox payouts — no real money moves");
  return fetch(link.body.url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `bank=${bank}`,
    redirect: "manual",
  });
}

describe("payouts in the sandbox (Connect test mode, offline)", () => {
  it("onboards through its own page; the link works once; bad input is named", async () => {
    const creator = await createCaller(server.baseUrl, "Sandbox Creator", { verified: true });
    const link = await creator.api("POST", "/api/payouts/onboarding");
    expect(link.body.url).toMatch(/\/api\/payouts\/sandbox\/onboarding\/[A-Za-z0-9_-]{32}$/);
    const bad = await fetch(link.body.url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "bank=maybe",
      redirect: "manual",
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).fields).toEqual({ bank: "must be succeeds or fails" });
    const done = await onboard(creator, "succeeds");
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe(`${server.baseUrl}/earnings?onboarding=return`);
    const reused = await fetch(link.body.url);
    expect(reused.status).toBe(404);
    const summary = await creator.api("GET", "/api/payouts/");
    expect(summary.body).toMatchObject({
      gateway: "sandbox",
      account: { state: "enabled", payouts_enabled: true },
      schedule: "weekly",
      minimum_cents: 1000,
    });
    expect((await fetch(`${server.baseUrl}/api/payouts/sandbox/onboarding/not-a-token`)).status).toBe(400);
  });

  it("the test clock moves availability for every reader; a payout is paid at once", async () => {
    const creator = await createCaller(server.baseUrl, "Clock Creator", { verified: true });
    const id = await userIdOf(creator);
    await onboard(creator, "succeeds");
    await creditEarnings(server.database.db, id, 4321 * MICROS_PER_CENT);
    const before = await creator.api("GET", "/api/payouts/");
    expect(before.body).toMatchObject({ available_micros: 0, balance_micros: 43_210_000 });
    expect(before.body.pending).toHaveLength(1);
    const refused = await creator.api("POST", "/api/payouts/", { body: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/become available on \d{4}-\d{2}-\d{2}/);

    for (const days of [0, -1, 400, "8"]) {
      const wrong = await creator.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: days } });
      expect(wrong.status).toBe(400);
      expect(wrong.body.fields).toHaveProperty("advance_days");
    }
    const moved = await creator.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: 8 } });
    expect(moved.status).toBe(200);
    expect(moved.body.offset_days).toBeGreaterThanOrEqual(8);
    const after = await creator.api("GET", "/api/payouts/");
    expect(after.body).toMatchObject({ available_micros: 43_210_000, withdrawable_cents: 4321, pending: [] });

    const made = await creator.api("POST", "/api/payouts/", { body: {} });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ amount_cents: 4321, status: "paid" });
    const paid = await creator.api("GET", "/api/payouts/");
    expect(paid.body).toMatchObject({ paid_out_cents: 4321, in_transit_cents: 0, balance_micros: 0 });
  });

  it("the failing test bank account fails payouts with the reason, the money back and available; the CSV has every line", async () => {
    const creator = await createCaller(server.baseUrl, "Failing Bank Creator", { verified: true });
    const id = await userIdOf(creator);
    await onboard(creator, "fails");
    await creditEarnings(
      server.database.db,
      id,
      1500 * MICROS_PER_CENT,
      new Date(Date.now() - 30 * 86_400_000),
    );
    const made = await creator.api("POST", "/api/payouts/", { body: {} });
    expect(made.body).toMatchObject({
      amount_cents: 1500,
      status: "failed",
      failure_code: "account_closed",
      failure_reason: "The bank account has been closed",
    });
    const summary = await creator.api("GET", "/api/payouts/");
    expect(summary.body).toMatchObject({
      available_micros: 15_000_000,
      paid_out_cents: 0,
      in_transit_cents: 0,
    });

    const csv = await fetch(`${server.baseUrl}/api/payouts/statement.csv`, {
      headers: { authorization: `Bearer ${creator.token}` },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toMatch(/^text\/csv/);
    const lines = (await csv.text()).trim().split("\r\n");
    expect(lines[0]).toBe("date,type,description,amount_usd,payout_id,payout_status,failure_reason");
    expect(lines.slice(1).map((line) => line.split(",").slice(1, 4))).toEqual([
      ["earnings", "Paid calls", "15.000000"],
      ["payout", "Payout to your bank account", "-15.000000"],
      ["payout_return", "Payout returned: The bank account has been closed", "15.000000"],
    ]);
    expect(lines[2]).toContain(`${made.body.id},failed,The bank account has been closed`);
    const anonymous = await fetch(`${server.baseUrl}/api/payouts/statement.csv`);
    expect(anonymous.status).toBe(401);
  });

  it("one creator never sees another's earnings or payouts", async () => {
    const other = await createCaller(server.baseUrl, "Nosy Creator");
    const summary = await other.api("GET", "/api/payouts/");
    expect(summary.body).toMatchObject({ balance_micros: 0, payouts: [], account: { state: "not_started" } });
    const csv = await fetch(`${server.baseUrl}/api/payouts/statement.csv`, {
      headers: { authorization: `Bearer ${other.token}` },
    });
    expect((await csv.text()).trim().split("\r\n")).toHaveLength(1);
  });
});
