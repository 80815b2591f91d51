import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { users } from "../../db/schema/index.ts";
import { MICROS_PER_CENT } from "../../lib/money.ts";
import { PAGE_SHELL_CSS } from "../../pages/page-shell.ts";
import { type Caller, createCaller } from "../../test/caller.ts";
import { useTestServer } from "../../test/use-test-server.ts";
import { reconcile } from "../billing/reconcile.ts";
import { runPayoutSchedule } from "./payouts.service.ts";
import { creditEarnings, daysAgo } from "./payouts-test-helpers.ts";

const server = useTestServer();
afterEach(async () => expect((await reconcile(server.database.db)).ok).toBe(true));

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
  // The sign-in pages' shell: their stylesheet, no inline style or script for the CSP to refuse.
  expect(html).toContain(`<link rel="stylesheet" href="${PAGE_SHELL_CSS}">`);
  expect(html).toContain('<a class="brand" href="/">');
  expect(html).not.toMatch(/<style|<script|\sstyle=/);
  expect(page.headers.get("content-security-policy")).toMatch(/script-src 'self';/);
  return submitBank(link.body.url, bank);
}

/** The onboarding page's form as a browser posts it (redirects not followed). */
const submitBank = (url: string, bank: string) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `bank=${bank}`,
    redirect: "manual",
  });

describe("payouts in the sandbox (Connect test mode, offline)", () => {
  it("onboards through its own page; the link works once; bad input is named", async () => {
    const creator = await createCaller(server.baseUrl, "Sandbox Creator", { verified: true });
    const link = await creator.api("POST", "/api/payouts/onboarding");
    expect(link.body.url).toMatch(/\/api\/payouts\/sandbox\/onboarding\/[A-Za-z0-9_-]{32}$/);
    const bad = await submitBank(link.body.url, "maybe");
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

  it("each creator's test clock is their own, moves 1 to 30 days a step and at most 90 days ahead", async () => {
    const mover = await createCaller(server.baseUrl, "Clock Mover", { verified: true });
    const bystander = await createCaller(server.baseUrl, "Clock Bystander", { verified: true });
    for (const creator of [mover, bystander]) {
      await onboard(creator, "succeeds");
      await creditEarnings(server.database.db, await userIdOf(creator), 2000 * MICROS_PER_CENT);
    }
    const moved = await mover.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: 8 } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ offset_days: 8, max_offset_days: 90 });
    expect((await mover.api("GET", "/api/payouts/")).body).toMatchObject({ withdrawable_cents: 2000 });
    // The bystander's money still waits out the real hold period, and their clock has not moved.
    const untouched = await bystander.api("GET", "/api/payouts/");
    expect(untouched.body).toMatchObject({ withdrawable_cents: 0, available_micros: 0 });
    expect(untouched.body.pending).toHaveLength(1);
    expect(Math.abs(Date.parse(untouched.body.now) - Date.now())).toBeLessThan(60_000);
    expect((await bystander.api("GET", "/api/payouts/sandbox/clock")).body.offset_days).toBe(0);
    expect((await mover.api("GET", "/api/payouts/sandbox/clock")).body.offset_days).toBe(8);
    // The schedule goes by each creator's own clock: the mover is paid, the bystander not.
    const deps = { db: server.database.db, config: server.config, connect: undefined };
    await Promise.all([runPayoutSchedule(deps), runPayoutSchedule(deps)]);
    expect((await mover.api("GET", "/api/payouts/")).body.payouts).toMatchObject([
      { automatic: true, amount_cents: 2000, status: "paid" },
    ]);
    expect((await bystander.api("GET", "/api/payouts/")).body.payouts).toEqual([]);

    for (const days of [0.5, 1.5, 31, 1e300]) {
      const wrong = await mover.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: days } });
      expect(wrong.status, String(days)).toBe(400);
      expect(wrong.body.fields.advance_days).toMatch(/1 to 30/);
    }
    // 8 + 30 + 30 = 68; then 30 more would pass 90: refused naming the bound; 22 reaches it exactly.
    for (const days of [30, 30]) {
      expect(
        (await mover.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: days } })).status,
      ).toBe(200);
    }
    const past = await mover.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: 30 } });
    expect(past.status).toBe(400);
    expect(past.body.fields.advance_days).toMatch(/90 days ahead.*68 days ahead; at most 22 more/);
    expect(
      (await mover.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: 22 } })).body,
    ).toMatchObject({ offset_days: 90 });
    expect(
      (await mover.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: 1 } })).status,
    ).toBe(400);
    const summary = await mover.api("GET", "/api/payouts/");
    expect(summary.status).toBe(200);
    expect(Date.parse(summary.body.now) - Date.now()).toBeLessThanOrEqual(90 * 86_400_000 + 60_000);
    await runPayoutSchedule(deps);
  });

  it("many steps at once stop at the bound: nobody's clock passes 90 days, nothing answers 500", async () => {
    const creator = await createCaller(server.baseUrl, "Clock Hammer", { verified: true });
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        creator.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: 30 } }),
      ),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 400)).toHaveLength(37);
    expect((await creator.api("GET", "/api/payouts/sandbox/clock")).body.offset_days).toBe(90);
    expect((await creator.api("GET", "/api/payouts/")).status).toBe(200);
  });

  it("withdraws everything available when POST /api/payouts/ has no body; an empty JSON body is refused by name", async () => {
    const creator = await createCaller(server.baseUrl, "Bodiless Creator", { verified: true });
    await onboard(creator, "succeeds");
    await creditEarnings(server.database.db, await userIdOf(creator), 3000 * MICROS_PER_CENT, daysAgo(30));
    const post = (headers: Record<string, string>, body?: string) =>
      fetch(`${server.baseUrl}/api/payouts/`, {
        method: "POST",
        headers: { authorization: `Bearer ${creator.token}`, ...headers },
        body,
      });
    const bare = await post({ "idempotency-key": "bare" });
    expect(bare.status, await bare.clone().text()).toBe(201);
    expect(await bare.json()).toMatchObject({ amount_cents: 3000, status: "paid" });
    // A Content-Type naming JSON with nothing in it is broken JSON (the security suite's rule for
    // every route): refused by name, and nothing paid.
    const emptyJson = await post({ "content-type": "application/json", "idempotency-key": "empty" }, "");
    expect(emptyJson.status).toBe(400);
    expect((await emptyJson.json()).message).toMatch(/body is empty/i);
    const junk = await post({ "content-type": "application/json" }, "{not json");
    expect(junk.status).toBe(400);
  });
});
