import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { type Caller, callerAt, createCaller, fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { verifyEmailThroughOutbox } from "../../test/mail.ts";
import { signUp } from "../../test/oidc-client.ts";
import { useVendorServer } from "../../test/use-test-server.ts";
import { isPayoutBlocked } from "./suspensions.ts";

const ADMIN_EMAIL = `operator-${Date.now()}@example.test`;
const { server, vendor } = useVendorServer({
  ADMIN_EMAILS: ` Someone@else.test , ${ADMIN_EMAIL.toUpperCase()}`,
});
let admin: Caller;
let creator: Caller;
let consumer: Caller;
let consumerKey: string;
let creatorKey: string;

/** The operator: their ADMIN_EMAILS address verified through the mailed link, which grants the role. */
async function signUpAs(email: string): Promise<Caller> {
  const tokens = await signUp(server.baseUrl, { email, displayName: "Operator" });
  const caller = callerAt(server.baseUrl, { email, token: tokens.access_token });
  expect((await caller.api("POST", "/api/auth/register/")).status).toBe(200);
  await verifyEmailThroughOutbox(server.baseUrl, email);
  return caller;
}

// 10¢: above the worst case of the default model (gpt4) at the default max tokens (the price guard refuses 5¢).
const liveApp = (name: string) =>
  createLiveApp(
    creator,
    { name: `${name} ${Math.random().toString(36).slice(2, 7)}`, price_cents: 10 },
    { model: "gpt-4-turbo" },
  );

const call = (caller: Caller, slug: string, auth?: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, {
    ...(auth ? { auth } : {}),
    body: { inputs: { query: "hello" }, response_mode: "blocking" },
  });

beforeAll(async () => {
  vendor.set({ kind: "echo" });
  admin = await signUpAs(ADMIN_EMAIL);
  creator = await createCaller(server.baseUrl, "Creator", { verified: true });
  consumer = await createCaller(server.baseUrl, "Consumer");
  consumerKey = (await consumer.api("POST", "/api/keys/", { body: { name: "sdk" } })).body.key;
  creatorKey = (await creator.api("POST", "/api/keys/", { body: { name: "own" } })).body.key;
  await fundWallet(consumer, 1_000);
  // The creator's own calls hold their model cost from the creator's wallet (decision 062).
  await fundWallet(creator, 1_000);
});

describe("/admin access", () => {
  it("answers operators and refuses everyone else with 403, and anonymous callers with 401", async () => {
    expect((await admin.api("GET", "/api/admin/access")).status).toBe(200);
    // An ADMIN_EMAILS address not verified yet is told what is missing: verifying makes it an operator.
    const bootstrapEmail = "someone@else.test";
    const tokens = await signUp(server.baseUrl, { email: bootstrapEmail, displayName: "Future Operator" });
    const future = callerAt(server.baseUrl, { email: bootstrapEmail, token: tokens.access_token });
    expect((await future.api("POST", "/api/auth/register/")).status).toBe(200);
    const unverified = await future.api("GET", "/api/admin/access");
    expect(unverified.status).toBe(403);
    expect(unverified.body.code).toBe("email_unverified");
    for (const path of ["/api/admin/access", "/api/admin/overview", "/api/admin/audit"]) {
      // Anyone else is told they are not an operator, verified or not: verifying would not help them.
      const refused = await consumer.api("GET", path);
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe("forbidden");
      expect(refused.body.message).toMatch(/you are not one/);
      const notOperator = await creator.api("GET", path);
      expect(notOperator.status).toBe(403);
      expect(notOperator.body.code).toBe("forbidden");
      expect((await consumer.api("GET", path, { auth: "" })).status).toBe(401);
      // An API key is no way in either, not even an operator's own.
      expect((await consumer.api("GET", path, { auth: consumerKey })).status).toBe(401);
    }
    const app = await liveApp("Refused");
    const suspend = await consumer.api("POST", `/api/admin/apps/${app.id}/suspend`, {
      body: { reason: "spam" },
    });
    expect(suspend.status).toBe(403);
    const answered = await call(consumer, app.slug, consumerKey);
    expect(answered.body).toMatchObject({ answer: expect.any(String) });
    expect(answered.status).toBe(200);
  });

  it("refuses dates out of range, a reversed period and one too long with 400 naming the parameter", async () => {
    const cases: [string, string, RegExp][] = [
      ["from=0000-01-01&to=9999-12-31", "to", /between 2000-01-01 and/],
      ["from=0000-01-01", "from", /between 2000-01-01 and/],
      ["from=1999-12-31&to=2001-01-01", "from", /between 2000-01-01 and/],
      ["to=9999-12-31", "to", /between 2000-01-01 and/],
      ["from=2026-03-01&to=2026-01-01", "from", /must be before to/],
      ["from=2000-01-01&to=2025-01-01", "from", /at most 1100 days before to/],
      ["from=2024-02-30", "from", /must be an ISO 8601 date \(2026-01-31\) or date-time/],
      ["from=yesterday", "from", /must be an ISO 8601 date/],
      ["to=2026-01-01T25:00:00Z", "to", /must be an ISO 8601 date/],
      ["from=2026-01-01&from=2026-02-01", "from", /must be an ISO 8601 date/],
      // A misspelt or bracketed parameter is not read as "no period given" (the 30-day default).
      ["form=2024-01-01", "form", /not an allowed/],
      ["from[]=2024-01-01", "from[]", /not an allowed/],
    ];
    for (const [query, field, problem] of cases) {
      const answer = await admin.api("GET", `/api/admin/overview?${query}`);
      expect(answer.status, query).toBe(400);
      expect(Object.keys(answer.body.fields), query).toContain(field);
      expect(answer.body.fields[field], query).toMatch(problem);
    }
    const fine = await admin.api("GET", "/api/admin/overview?from=2024-01-01&to=2024-12-31T23:59:59Z");
    expect(fine.status).toBe(200);
    expect(fine.body.period).toEqual({ from: "2024-01-01T00:00:00.000Z", to: "2024-12-31T23:59:59.000Z" });
  });

  it("names a bad period or a reason left out", async () => {
    const bad = await admin.api("GET", "/api/admin/overview?from=2026-02-01&to=2026-01-01");
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toEqual({ from: "must be before to" });
    const app = await liveApp("No reason");
    const noReason = await admin.api("POST", `/api/admin/apps/${app.id}/suspend`, { body: {} });
    expect(noReason.status).toBe(400);
    expect(Object.keys(noReason.body.fields)).toEqual(["reason"]);
    const notAnId = await admin.api("POST", "/api/admin/apps/not-a-uuid/suspend", {
      body: { reason: "spam" },
    });
    expect(notAnId.status).toBe(400);
    expect(Object.keys(notAnId.body.fields)).toEqual(["id"]);
    const unknown = await admin.api("POST", `/api/admin/apps/${randomUUID()}/suspend`, {
      body: { reason: "spam" },
    });
    expect(unknown.status).toBe(404);
  });
});

describe("suspension", () => {
  it("a suspended app is a 404 to every caller, its owner sees it marked, and lifting it brings it back", async () => {
    const app = await liveApp("Suspended");
    expect((await call(consumer, app.slug, consumerKey)).status).toBe(200);
    const explored = await consumer.api("GET", `/api/explore/apps/${app.slug}`, { auth: "" });
    expect(explored.status).toBe(200);

    const suspended = await admin.api("POST", `/api/admin/apps/${app.id}/suspend`, {
      body: { reason: "copies another creator's prompt" },
    });
    expect(suspended.body).toEqual({ suspended: true, changed: true });
    expect(
      (await admin.api("POST", `/api/admin/apps/${app.id}/suspend`, { body: { reason: "again" } })).body,
    ).toEqual({ suspended: true, changed: false });
    const gateway = await call(consumer, app.slug, consumerKey);
    expect(gateway.status).toBe(404);
    expect(gateway.body.code).toBe("not_found");
    expect((await call(creator, app.slug, creatorKey)).status).toBe(404);
    expect((await consumer.api("GET", `/api/explore/apps/${app.slug}`, { auth: "" })).status).toBe(404);
    const listed = await consumer.api("GET", `/api/explore/apps?q=${encodeURIComponent("Suspended")}`, {
      auth: "",
    });
    expect(JSON.stringify(listed.body)).not.toContain(app.slug);
    const models = await consumer.api("GET", "/api/v1/models", { auth: consumerKey });
    expect(models.status).toBe(200);
    expect(JSON.stringify(models.body)).not.toContain(app.slug);
    const openai = await consumer.api("POST", "/api/v1/chat/completions", {
      auth: consumerKey,
      body: { model: app.slug, messages: [{ role: "user", content: "hi" }] },
    });
    expect(openai.status).toBe(404);
    // The owner's dashboard still lists it, marked.
    const own = await creator.api("GET", "/api/app/");
    const mine = (own.body.results ?? own.body).find((row: { slug: string }) => row.slug === app.slug);
    expect(mine?.suspension?.reason).toBe("copies another creator's prompt");

    const lifted = await admin.api("POST", `/api/admin/apps/${app.id}/unsuspend`, {
      body: { reason: "appeal upheld" },
    });
    expect(lifted.body).toEqual({ suspended: false, changed: true });
    expect((await call(consumer, app.slug, consumerKey)).status).toBe(200);
  });

  it("a suspended user: their apps are 404, their API keys 403 account_suspended, and no payouts", async () => {
    const app = await liveApp("Owner suspended");
    const [creatorRow] = await queryRows<{ id: string }>(
      server.database.db,
      sql`select owner_id as id from applications where slug = ${app.slug}`,
    );
    const creatorId = creatorRow?.id as string;
    expect(await isPayoutBlocked(server.database.db, creatorId)).toBe(false);
    const done = await admin.api("POST", `/api/admin/users/${creatorId}/suspend`, {
      body: { reason: "fraud" },
    });
    expect(done.status).toBe(200);
    expect(await isPayoutBlocked(server.database.db, creatorId)).toBe(true);
    expect((await call(consumer, app.slug, consumerKey)).status).toBe(404);
    const keyRefused = await creator.api("GET", "/api/v1/models", { auth: creatorKey });
    expect(keyRefused.status).toBe(403);
    expect(keyRefused.body.error?.code ?? keyRefused.body.code).toBe("account_suspended");
    const dify = await call(creator, app.slug, creatorKey);
    expect(dify.status).toBe(403);
    expect(dify.body.code).toBe("account_suspended");
    // An operator cannot lock themselves out.
    const me = await queryRows<{ id: string }>(
      server.database.db,
      sql`select id from users where lower(email) = ${ADMIN_EMAIL.toLowerCase()}`,
    );
    const self = await admin.api("POST", `/api/admin/users/${me[0]?.id}/suspend`, {
      body: { reason: "oops" },
    });
    expect(self.status).toBe(409);

    await admin.api("POST", `/api/admin/users/${creatorId}/unsuspend`, { body: { reason: "cleared" } });
    expect(await isPayoutBlocked(server.database.db, creatorId)).toBe(false);
    expect((await call(creator, app.slug, creatorKey)).status).toBe(200);
  });
});

describe("the audit log", () => {
  it("lists every operator action, newest first, with actor, target and reason, and refuses edits", async () => {
    const log = await admin.api("GET", "/api/admin/audit?limit=200");
    expect(log.status).toBe(200);
    const actions = log.body.entries.map((row: { action: string }) => row.action);
    expect(actions).toContain("app.suspend");
    expect(actions).toContain("app.unsuspend");
    expect(actions).toContain("user.suspend");
    expect(actions).toContain("user.unsuspend");
    // A repeated suspend that changed nothing wrote nothing, and the refused ones neither.
    expect(actions.filter((a: string) => a === "app.suspend")).toHaveLength(1);
    const first = log.body.entries.find((row: { action: string }) => row.action === "user.suspend");
    expect(first).toMatchObject({ actor_email: ADMIN_EMAIL, target_kind: "user", reason: "fraud" });
    const ids = log.body.entries.map((row: { id: number }) => row.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    await expect(server.database.db.execute(sql`update audit_log set reason = 'edited'`)).rejects.toThrow();
    await expect(server.database.db.execute(sql`delete from audit_log`)).rejects.toThrow();
    const again = await admin.api("GET", "/api/admin/audit?limit=200");
    expect(again.body.entries).toHaveLength(log.body.entries.length);
  });

  it("the overview counts the period's gross by app and creator, and lists suspensions", async () => {
    const app = await liveApp("Top");
    for (let i = 0; i < 3; i++) expect((await call(consumer, app.slug, consumerKey)).status).toBe(200);
    await admin.api("POST", `/api/admin/apps/${app.id}/suspend`, { body: { reason: "review" } });
    const overview = await admin.api("GET", "/api/admin/overview");
    expect(overview.status).toBe(200);
    const top = overview.body.top_apps.find((row: { slug: string }) => row.slug === app.slug);
    expect(top).toMatchObject({ calls: 3, gross_micros: 300_000, suspended: true });
    expect(overview.body.suspensions.map((row: { label: string }) => row.label)).toContain(app.slug);
    expect(overview.body.top_creators[0].gross_micros).toBeGreaterThanOrEqual(300_000);
    const empty = await admin.api("GET", "/api/admin/overview?from=2020-01-01&to=2020-02-01");
    expect(empty.body).toMatchObject({ gross_micros: 0, fee_income_micros: 0, top_apps: [] });
  });

  it("the overview's payouts are the payouts table's amounts by state, in micros", async () => {
    const db = server.database.db;
    const [owner] = await queryRows<{ id: string }>(
      db,
      sql`select id from users where lower(email) = ${creator.email.toLowerCase()}`,
    );
    const before = (await admin.api("GET", "/api/admin/overview")).body.payouts;
    const rows: [string, number][] = [
      ["pending", 101],
      ["in_transit", 202],
      ["paid", 1_350],
      ["failed", 404],
      ["reversed", 5],
    ];
    for (const [status, cents] of rows)
      await db.execute(sql`insert into payouts (creator_id, gateway, connect_account_id, amount_cents, status, idempotency_key)
        values (${owner?.id}, 'sandbox', 'acct_sbx_admin_test', ${cents}, ${status}, ${`manual:admin-${status}`})`);
    const after = (await admin.api("GET", "/api/admin/overview")).body.payouts;
    expect(after.source).toBe("payouts_table");
    expect(after.queued_micros - before.queued_micros).toBe(1_010_000);
    expect(after.in_transit_micros - before.in_transit_micros).toBe(2_020_000);
    expect(after.paid_micros - before.paid_micros).toBe(13_500_000);
    expect(after.failed_micros - before.failed_micros).toBe(4_090_000);
    await db.execute(sql`delete from payouts where connect_account_id = 'acct_sbx_admin_test'`);
  });
});
