import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  appDailyStats,
  holds,
  invocations,
  ownerDailyErrors,
  ownerDailyStats,
} from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { useCaller, useFakeOpenAi, useTestServer } from "../../test/use-test-server.ts";
import { windowDays } from "./analytics.service.ts";
import { recordInvocation } from "./call-records.ts";
import { compactRollups, utcDay } from "./rollups.ts";

const vendor = useFakeOpenAi();
const server = useTestServer(() => ({
  env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: vendor.baseUrl, GATEWAY_RATE_LIMIT_PER_MINUTE: "10000" },
}));
const creator = useCaller(server, "Analyst");
let apps: { slug: string; id: string; name: string }[];
const DAY = 86_400_000;

beforeAll(async () => {
  const creatorId = (await creator.api("GET", "/api/auth/profile/")).body.user.id;
  apps = [];
  for (const [name, body] of [
    ["Alpha", { price_cents: 50 }],
    ["Beta", { interaction_mode: "chat" }],
    ["Gamma Flow", { type: "workflow", provider_config: { app_id: "x", api_key: "k-1234" } }],
  ] as const) {
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name, visibility: "public", ...body },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    if (app.type === "prompt")
      await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
    apps.push(app);
  }
  const [alpha, beta] = apps as [(typeof apps)[0], (typeof apps)[0]];

  // Today, through the real gateway: paid calls, a failure, chats by two end users.
  const consumer = await createCaller(server.baseUrl, "Customer");
  await fundWallet(consumer, 1000);
  for (const user of ["c1", "c2", "c1"]) {
    await consumer.api("POST", `/api/app/${alpha.slug}/completion-messages`, {
      body: { inputs: { query: "hi" }, user },
    });
  }
  vendor.set({ kind: "status", status: 500, message: "down" });
  await consumer.api("POST", `/api/app/${alpha.slug}/completion-messages`, {
    body: { inputs: { query: "hi" }, user: "c3" },
  });
  vendor.set({ kind: "echo" });
  // The owner's own calls hold their model cost from the owner's wallet (decision 062).
  await fundWallet(creator, 100);
  for (const user of ["u1", "u2"])
    await creator.api("POST", `/api/app/${beta.slug}/chat-messages`, { body: { query: "hello", user } });

  // Earlier days, through the same recording code: gaps, failures, users, a call outside 90 days.
  const past: [number, string, "success" | "error", string | null, string | null][] = [
    [3, alpha.id, "success", "old-1", null],
    [3, alpha.id, "error", "old-1", "upstream_timeout"],
    [10, beta.id, "success", null, null],
    [10, alpha.id, "error", "old-2", null],
    [45, alpha.id, "success", "old-3", null],
    [89, beta.id, "success", "old-4", null],
    [120, alpha.id, "success", "ancient", null],
  ];
  for (const [daysAgo, applicationId, status, endUser, errorType] of past)
    await recordPastCall(daysAgo, applicationId, creatorId, status, endUser, errorType);
});

/** Records a backdated call through the gateway's recording code. */
async function recordPastCall(
  daysAgo: number,
  applicationId: string,
  callerUserId: string,
  status: "success" | "error",
  endUser: string | null,
  errorType: string | null = null,
  chargedCents = status === "success" ? 50 : 0,
) {
  await recordInvocation(server.database.db, {
    id: crypto.randomUUID(),
    applicationId,
    callerUserId,
    apiKeyId: null,
    endUser,
    mode: "completion",
    model: "gpt-4-turbo",
    status,
    errorType: errorType ?? undefined,
    latencyMs: 100 * daysAgo,
    inputTokens: daysAgo,
    outputTokens: 2 * daysAgo,
    chargedCents,
    createdAt: new Date(Date.now() - daysAgo * DAY),
  });
}

type Row = typeof invocations.$inferSelect;
async function rawInWindow(days: number, appIds = apps.map((a) => a.id)): Promise<Row[]> {
  const from = windowDays(days)[0] as string;
  const rows = await server.database.db.select().from(invocations);
  return rows.filter(
    (r) => appIds.includes(r.applicationId) && r.createdAt.toISOString().slice(0, 10) >= from,
  );
}
const rate = (rows: Row[]) =>
  rows.length ? (rows.filter((r) => r.status === "success").length / rows.length) * 100 : 0;
const avgSeconds = (rows: Row[]) =>
  rows.length ? rows.reduce((n, r) => n + r.latencyMs, 0) / rows.length / 1000 : 0;
const userKey = (r: Row) => r.endUser ?? `account:${r.callerUserId}`;

describe.each([7, 30, 90])("a %i-day window", (days) => {
  it("dashboard figures equal those computed from the raw invocations", async () => {
    const response = await creator.api("GET", `/api/analytics/dashboard/?days=${days}`);
    expect(response.status).toBe(200);
    const raw = await rawInWindow(days);
    const body = response.body;
    expect(body.overview).toEqual({
      total_applications: 3,
      total_invocations: raw.length,
      total_users: new Set(raw.map(userKey)).size,
      success_rate: rate(raw),
    });
    expect(body.time_series.data.map((d: { date: string }) => d.date)).toEqual(windowDays(days));
    for (const point of body.time_series.data) {
      const onDay = raw.filter((r) => r.createdAt.toISOString().slice(0, 10) === point.date);
      expect(point).toEqual({
        date: point.date,
        invocations: onDay.length,
        success_count: onDay.filter((r) => r.status === "success").length,
        error_count: onDay.filter((r) => r.status === "error").length,
        avg_response_time: avgSeconds(onDay),
        input_tokens: onDay.reduce((n, r) => n + r.inputTokens, 0),
        output_tokens: onDay.reduce((n, r) => n + r.outputTokens, 0),
      });
    }
    for (const app of apps) {
      const mine = raw.filter((r) => r.applicationId === app.id);
      const listed = body.applications.find(
        (a: { application_slug: string }) => a.application_slug === app.slug,
      );
      const last = mine.map((r) => r.createdAt.getTime()).sort((a, b) => b - a)[0];
      expect(listed).toMatchObject({
        invocations: mine.length,
        success_rate: rate(mine),
        avg_response_time: avgSeconds(mine),
        last_used: last ? new Date(last).toISOString() : "",
      });
    }
    const errorCounts = new Map<string | null, number>();
    for (const r of raw.filter((r) => r.status === "error"))
      errorCounts.set(r.errorType, (errorCounts.get(r.errorType) ?? 0) + 1);
    expect(
      new Map(body.errors.map((e: { error_type: string | null; count: number }) => [e.error_type, e.count])),
    ).toEqual(errorCounts);
  });

  it("per-app usage, performance and revenue equal the raw invocations", async () => {
    for (const app of apps) {
      const raw = await rawInWindow(days, [app.id]);
      const usage = (await creator.api("GET", `/api/app/${app.slug}/analytics/usage/?days=${days}`)).body;
      const revenueCents = raw.filter((r) => r.status === "success").reduce((n, r) => n + r.chargedCents, 0);
      expect(usage.total_invocations).toBe(raw.length);
      expect(usage.total_revenue).toBe(revenueCents / 100);
      expect(usage.summary.total_users).toBe(new Set(raw.map(userKey)).size);
      expect(usage.summary.series).toHaveLength(days);
      expect(
        usage.summary.series.reduce((n: number, d: { invocations: number }) => n + d.invocations, 0),
      ).toBe(raw.length);
      const performance = (
        await creator.api("GET", `/api/app/${app.slug}/analytics/performance/?days=${days}`)
      ).body.performance;
      expect(performance.success_rate).toBe(rate(raw));
      expect(performance.average_response_time).toBe(avgSeconds(raw));
    }
  });
});

describe("analytics", () => {
  it("counts today's revenue exactly as the ledger settled it", async () => {
    const alpha = apps[0] as (typeof apps)[0];
    const settled = await server.database.db
      .select({ cents: sql<number>`(coalesce(sum(${holds.amountMicros}), 0) / 10000)::int` })
      .from(holds)
      .where(sql`${holds.applicationId} = ${alpha.id} and ${holds.status} = 'settled'`);
    const usage = (await creator.api("GET", `/api/app/${alpha.slug}/analytics/usage/?days=7`)).body;
    const backdated = 50; // the one successful call 3 days ago, recorded without the ledger
    expect(usage.total_revenue * 100 - backdated).toBe(settled[0]?.cents);
    expect(settled[0]?.cents).toBe(150);
  });

  it("lists the latest invocations newest first, up to the limit", async () => {
    const alpha = apps[0] as (typeof apps)[0];
    const recent = (await creator.api("GET", `/api/app/${alpha.slug}/analytics/invocations/?limit=3`)).body
      .recent_invocations;
    const raw = (
      await server.database.db.select().from(invocations).where(eq(invocations.applicationId, alpha.id))
    ).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
    expect(recent.map((r: { id: string }) => r.id)).toEqual(raw.slice(0, 3).map((r) => r.id));
    expect(recent[0]).toMatchObject({
      end_user: raw[0]?.endUser ?? null,
      status: raw[0]?.status,
      response_time: (raw[0]?.latencyMs ?? 0) / 1000,
    });
  });

  it("refuses other windows and other people's apps, and counts only the caller's own apps", async () => {
    expect((await creator.api("GET", "/api/analytics/dashboard/?days=14")).body.fields).toEqual({
      days: "must be 7, 30 or 90",
    });
    const stranger = await createCaller(server.baseUrl);
    expect((await stranger.api("GET", `/api/app/${apps[0]?.slug}/analytics/usage/`)).status).toBe(404);
    const theirs = (await stranger.api("GET", "/api/analytics/dashboard/")).body;
    expect(theirs.overview).toEqual({
      total_applications: 0,
      total_invocations: 0,
      total_users: 0,
      success_rate: 0,
    });
    expect(theirs.time_series.data).toHaveLength(30);
  });

  it("folds the shards of finished days into one row without changing a figure", async () => {
    const owner = await createCaller(server.baseUrl, "Folder");
    const ownerId = (await owner.api("GET", "/api/auth/profile/")).body.user.id;
    const app = (await owner.api("POST", "/api/app/", { body: { name: "Busy", visibility: "public" } })).body;
    // Calls from several connections leave several shard rows per day; seed them as they would be.
    const past = utcDay(new Date(Date.now() - 5 * DAY));
    const today = utcDay(new Date());
    const shards: [string, number, number][] = [
      [past, 3, 4],
      [past, 17, 6],
      [past, 0, 1],
      [today, 5, 2],
      [today, 9, 3],
    ];
    const db = server.database.db;
    for (const [day, shard, n] of shards) {
      const sums = { invocations: n, successes: n - 1, errors: 1, latencyMsSum: 100 * n };
      const tokens = { inputTokens: n, outputTokens: 2 * n };
      const at = new Date(`${day}T0${shard % 10}:00:00Z`);
      await db.insert(appDailyStats).values({
        applicationId: app.id,
        day,
        shard,
        ...sums,
        ...tokens,
        revenueCents: 10 * n,
        lastInvocationAt: at,
      });
      await db.insert(ownerDailyStats).values({ ownerId, day, shard, ...sums, ...tokens });
      await db.insert(ownerDailyErrors).values({ ownerId, day, shard, errorType: "boom", count: 1 });
    }
    const read = async () => ({
      dashboard: (await owner.api("GET", "/api/analytics/dashboard/?days=7")).body,
      usage: (await owner.api("GET", `/api/app/${app.slug}/analytics/usage/?days=7`)).body,
      performance: (await owner.api("GET", `/api/app/${app.slug}/analytics/performance/?days=7`)).body,
    });
    const before = await read();
    expect(before.dashboard.overview.total_invocations).toBe(16);
    expect(before.dashboard.errors).toEqual([{ error_type: "boom", count: 5 }]);

    expect(await compactRollups(db)).toBeGreaterThanOrEqual(6);
    const rows = await db.select().from(appDailyStats).where(eq(appDailyStats.applicationId, app.id));
    expect(rows.map((r) => [r.day, r.shard, r.invocations]).sort()).toEqual([
      [past, 0, 11],
      [today, 5, 2],
      [today, 9, 3],
    ]);
    expect(rows.find((r) => r.day === past)?.lastInvocationAt).toEqual(new Date(`${past}T07:00:00Z`));
    const owned = await db.select().from(ownerDailyStats).where(eq(ownerDailyStats.ownerId, ownerId));
    expect(owned.filter((r) => r.day === past).map((r) => [r.shard, r.invocations])).toEqual([[0, 11]]);
    const errors = await db.select().from(ownerDailyErrors).where(eq(ownerDailyErrors.ownerId, ownerId));
    expect(errors.filter((r) => r.day === past).map((r) => [r.shard, r.count])).toEqual([[0, 3]]);
    expect(await read()).toEqual(before);
  });

  it("takes a deleted app's calls, users and errors out of its owner's dashboard", async () => {
    const owner = await createCaller(server.baseUrl, "Deleter");
    const ownerId = (await owner.api("GET", "/api/auth/profile/")).body.user.id;
    const created = [];
    for (const name of ["Kept", "Dropped"])
      created.push((await owner.api("POST", "/api/app/", { body: { name, visibility: "public" } })).body);
    const [kept, dropped] = created as [{ id: string; slug: string }, { id: string; slug: string }];
    await recordPastCall(2, kept.id, ownerId, "success", "shared");
    await recordPastCall(2, kept.id, ownerId, "success", "kept-only");
    // The owner's own calls, free: an app without money history is erased, not archived
    // (decision 023), and its calls leave the owner's figures with it.
    await recordPastCall(2, dropped.id, ownerId, "success", "shared", null, 0);
    await recordPastCall(1, dropped.id, ownerId, "error", "dropped-only", "boom");
    const overview = async () => (await owner.api("GET", "/api/analytics/dashboard/?days=7")).body;
    const before = await overview();
    expect(before.overview).toMatchObject({ total_invocations: 4, total_users: 3 });
    expect(before.errors).toEqual([{ error_type: "boom", count: 1 }]);

    expect((await owner.api("DELETE", `/api/app/${dropped.slug}/`)).status).toBe(204);
    const after = await overview();
    const raw = await rawInWindow(7, [kept.id]);
    expect(after.overview).toEqual({
      total_applications: 1,
      total_invocations: raw.length,
      total_users: new Set(raw.map(userKey)).size,
      success_rate: 100,
    });
    expect(after.overview.total_users).toBe(2);
    expect(after.errors).toEqual([]);
    expect(
      after.time_series.data.reduce((n: number, d: { invocations: number }) => n + d.invocations, 0),
    ).toBe(2);
  });
});
