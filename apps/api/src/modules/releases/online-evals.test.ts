import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { invocations, modelCostHolds, onlineEvalDays, onlineEvalResults } from "../../db/schema/index.ts";
import { createSecretBox } from "../../lib/secrets.ts";
import { fundWallet, settledWallet } from "../../test/caller.ts";
import type { RecordedRequest } from "../../test/fake-openai.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { createCallPayments } from "../billing/call-payment/index.ts";
import { reconcile } from "../billing/reconcile.ts";
import { onlineEvalJudgeFor } from "../gateway/online-eval-judge.ts";
import { createLlmClient } from "../models/llm.ts";
import {
  inSample,
  onlineEvalScoreOf,
  recoverStaleOnlineEvals,
  reserveJudgeSpend,
  runOnlineEvals,
  utcDayOf,
} from "./online-evals.ts";

// Online evaluation of live calls (docs/decisions/076): settings, sampling on the paid path, the
// judge paid by the creator within a daily cap, crash recovery and the summary.
const { server, vendor } = useVendorServer({ OPENAI_API_KEY: "sk-vendor-test" });
const creator = useCaller(server, "Online Creator");
const consumer = useCaller(server, "Online Consumer");
const stranger = useCaller(server, "Online Stranger");
const broke = useCaller(server, "Online Broke Creator");

/** The judge passes when the answer contains the rubric's last word; the app echoes. */
function judgeOrEcho(request: RecordedRequest): string {
  const system = request.messages.find((m) => m.role === "system")?.content ?? "";
  const last = request.messages.at(-1)?.content ?? "";
  if (!system.includes("strict evaluator")) return `echo: ${last}`;
  const rubric = /Rubric:\n(.*)/.exec(last)?.[1] ?? "";
  const answer = /Answer:\n([\s\S]*)$/.exec(last)?.[1] ?? "";
  const word = rubric.split(/\s+/).at(-1) ?? "";
  const pass = answer.includes(word);
  return JSON.stringify({ pass, reason: pass ? `mentions ${word}` : `never mentions ${word}` });
}
const judgeCalls = () =>
  vendor.requests.filter((r) =>
    (r.messages.find((m) => m.role === "system")?.content ?? "").includes("strict evaluator"),
  ).length;

beforeEach(() => vendor.set({ kind: "respond", answer: judgeOrEcho }));
beforeAll(async () => {
  await fundWallet(creator, 5_000);
  await fundWallet(consumer, 10_000);
});

/** The judge the server's job uses, built the same way (app.ts), on the test's own handles. */
function judge() {
  const db = server.database.db;
  return onlineEvalJudgeFor(
    {
      db,
      llm: createLlmClient(server.config),
      secrets: createSecretBox(server.config.secretKey),
      feePercent: server.config.platformFeePercent,
      publicUrl: server.config.publicUrl,
      payments: createCallPayments(db),
    },
    server.app.log,
  );
}

async function liveApp(owner = creator) {
  const { slug, id } = await createLiveApp(
    owner,
    { price_cents: 25 },
    { model: "gpt-4-turbo", max_tokens: 200, prompt_template: "answer: {{query}}", changelog: "v2" },
  );
  const config = await owner.api("GET", `/api/app/${slug}/prompt/`);
  return { slug, appId: id, promptId: config.body.id as string };
}

const online = (promptId: string) => `/api/prompts/${promptId}/online-evals`;
const settings = (over: Record<string, unknown> = {}) => ({
  enabled: true,
  sample_percent: 100,
  assertions: [{ kind: "contains", value: "answer" }],
  daily_cap_cents: 100,
  ...over,
});

function call(slug: string, query = "hello", caller = consumer) {
  return caller.api("POST", `/api/app/${slug}/completion-messages`, {
    body: { inputs: {}, query, response_mode: "blocking", user: "u1" },
  });
}

async function rowsOf(appId: string) {
  return server.database.db
    .select()
    .from(onlineEvalResults)
    .where(eq(onlineEvalResults.applicationId, appId));
}

/** Runs the job until nothing is pending (the server's own job may take some rows meanwhile). */
async function judgeAll(appId: string) {
  const run = judge();
  for (let i = 0; i < 50; i++) {
    await runOnlineEvals(server.database.db, run);
    const open = (await rowsOf(appId)).filter((r) => r.status === "pending" || r.status === "running");
    if (open.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("online evals still open");
}

describe("online eval settings", () => {
  it("are refused with a 400 naming each bad field, answered to the owner only", async () => {
    const { promptId } = await liveApp();
    const empty = await creator.api("GET", online(promptId));
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ settings: null, spent_today_micros: 0, versions: [], recent: [] });

    const cases: [Record<string, unknown>, string][] = [
      [settings({ sample_percent: 0 }), "sample_percent"],
      [settings({ sample_percent: 101 }), "sample_percent"],
      [settings({ assertions: [] }), "assertions"],
      [settings({ daily_cap_cents: 100_001 }), "daily_cap_cents"],
      [settings({ daily_cap_cents: 1.5 }), "daily_cap_cents"],
      [settings({ judge: "me" }), "judge"],
      [settings({ assertions: Array.from({ length: 11 }, () => ({ kind: "output_schema" })) }), "assertions"],
    ];
    for (const [body, field] of cases) {
      const answer = await creator.api("PUT", online(promptId), { body });
      expect(answer.status, field).toBe(400);
      expect(JSON.stringify(answer.body), field).toContain(field);
    }
    // RE2 refuses lookbehind: named by its place.
    const pattern = await creator.api("PUT", online(promptId), {
      body: settings({ assertions: [{ kind: "regex", pattern: "(?<=a)b" }] }),
    });
    expect(pattern.status).toBe(400);
    expect(Object.keys(pattern.body.fields)).toEqual(["assertions.0.pattern"]);

    expect((await stranger.api("GET", online(promptId))).status).toBe(404);
    expect((await stranger.api("PUT", online(promptId), { body: settings() })).status).toBe(404);

    const saved = await creator.api("PUT", online(promptId), {
      body: settings({ sample_percent: 12.5, assertions: [{ kind: "rubric", rubric: "mentions hello" }] }),
    });
    expect(saved.status).toBe(200);
    expect(saved.body.settings).toEqual(
      settings({ sample_percent: 12.5, assertions: [{ kind: "rubric", rubric: "mentions hello" }] }),
    );
    expect((await creator.api("GET", online(promptId))).body.settings.sample_percent).toBe(12.5);
  });
});

describe("sampling live calls", () => {
  it("is a stable hash of the invocation id: about the stated share, none at 0", () => {
    const ids = Array.from({ length: 20_000 }, () => randomUUID());
    const ten = ids.filter((id) => inSample(id, 10)).length;
    expect(ten).toBeGreaterThan(1_600);
    expect(ten).toBeLessThan(2_400);
    expect(ids.filter((id) => inSample(id, 0)).length).toBe(0);
    expect(ids.every((id) => inSample(id, 100))).toBe(true);
    const id = ids[0] as string;
    expect(inSample(id, 37)).toBe(inSample(id, 37));
  });

  it("samples every customer call at 100 %, none when off, never the owner's calls nor an eval run's", async () => {
    const { slug, appId, promptId } = await liveApp();
    // Off (never set): nothing sampled.
    expect((await call(slug)).status).toBe(200);
    expect(await rowsOf(appId)).toHaveLength(0);

    await creator.api("PUT", online(promptId), { body: settings() });
    const answered = [];
    for (let i = 0; i < 4; i++) {
      const answer = await call(slug, `q${i}`);
      expect(answer.status).toBe(200);
      answered.push(answer.body.message_id as string);
    }
    // The owner's own call and an eval run's calls are not customers'.
    expect((await call(slug, "mine", creator)).status).toBe(200);
    await creator.api("POST", `/api/prompts/${promptId}/evals/cases`, {
      body: { name: "c", inputs: { query: "x" }, assertions: [{ kind: "contains", value: "x" }] },
    });
    const run = await creator.api("POST", `/api/prompts/${promptId}/evals/runs`, { body: { version: 2 } });
    expect(run.status).toBe(201);

    const rows = await rowsOf(appId);
    expect(rows.map((r) => r.invocationId).sort()).toEqual([...answered].sort());
    const [first] = rows;
    expect(first).toMatchObject({ version: 2, model: "gpt-4-turbo" });
    expect(first?.output).toContain("echo: answer:");

    // Turned off: the next calls are not sampled (the cache heard the change).
    await creator.api("PUT", online(promptId), { body: settings({ enabled: false }) });
    expect((await call(slug)).status).toBe(200);
    expect(await rowsOf(appId)).toHaveLength(4);

    // Deterministic assertions cost nothing and judge every row.
    await judgeAll(appId);
    const judged = await rowsOf(appId);
    expect(judged.every((r) => r.status === "done" && r.passed === true && r.costMicros === 0)).toBe(true);
    expect(judged.every((r) => r.score === 1)).toBe(true);
  });
});

describe("the judge of a rubric", () => {
  it("is paid from the creator's wallet, the consumer's charge untouched, and the ledger agrees", async () => {
    const { slug, appId, promptId } = await liveApp();
    await creator.api("PUT", online(promptId), {
      body: settings({
        assertions: [
          { kind: "contains", value: "answer" },
          { kind: "rubric", rubric: "mentions hello" },
        ],
        daily_cap_cents: 1_000,
      }),
    });
    // Read before the call: the server's own job may judge it as soon as it is answered.
    const consumerBefore = (await settledWallet(consumer)).balance_micros;
    const creatorBefore = (await settledWallet(creator)).balance_micros;
    const judgesBefore = judgeCalls();
    const answer = await call(slug, "hello");
    expect(answer.status).toBe(200);
    const consumerAfterCall = (await settledWallet(consumer)).balance_micros;
    expect(consumerBefore - consumerAfterCall).toBe(250_000);

    await judgeAll(appId);
    const [row] = await rowsOf(appId);
    expect(row).toMatchObject({ status: "done", passed: true, score: 1 });
    expect(judgeCalls()).toBe(judgesBefore + 1);
    expect(row?.costMicros).toBeGreaterThan(0);
    expect(row?.judgeInvocationIds).toHaveLength(1);
    // The creator's wallet paid exactly what the row says; the consumer paid nothing more.
    const creatorAfter = (await settledWallet(creator)).balance_micros;
    expect(creatorBefore - creatorAfter).toBe(row?.costMicros);
    expect((await settledWallet(consumer)).balance_micros).toBe(consumerAfterCall);
    const [hold] = await server.database.db
      .select()
      .from(modelCostHolds)
      .where(eq(modelCostHolds.id, row?.judgeInvocationIds[0] as string));
    expect(hold).toMatchObject({ status: "spent", spentMicros: row?.costMicros });
    // The judged call's own invocation still says what it charged the consumer.
    const [judged] = await server.database.db
      .select({ charged: invocations.chargedCents })
      .from(invocations)
      .where(eq(invocations.id, row?.invocationId as string));
    expect(judged?.charged).toBe(25);
    const day = await server.database.db
      .select()
      .from(onlineEvalDays)
      .where(and(eq(onlineEvalDays.applicationId, appId), eq(onlineEvalDays.day, utcDayOf())));
    expect(day[0]).toMatchObject({ spentMicros: row?.costMicros, reservedMicros: 0 });

    // The summary: the version's scored call beside its revenue and margin.
    const summary = await creator.api("GET", online(promptId));
    expect(summary.status).toBe(200);
    expect(summary.body.spent_today_micros).toBe(row?.costMicros);
    expect(summary.body.versions).toEqual([
      expect.objectContaining({
        version: 2,
        experiment_id: null,
        scored_calls: 1,
        passed_calls: 1,
        pass_rate: 1,
        mean_score: 1,
        eval_cost_micros: row?.costMicros,
        revenue_micros: 250_000,
      }),
    ]);
    expect(summary.body.versions[0].margin_micros).toBeLessThan(250_000);
    expect(summary.body.recent).toEqual([
      expect.objectContaining({ invocation_id: answer.body.message_id, version: 2, passed: true, score: 1 }),
    ]);
    expect(await onlineEvalScoreOf(server.database.db, appId, 2, new Date(0))).toEqual({
      scored: 1,
      mean: 1,
    });
    expect(await onlineEvalScoreOf(server.database.db, appId, 3, new Date(0))).toEqual({
      scored: 0,
      mean: null,
    });

    const report = await reconcile(server.database.db);
    expect(report.onlineEvalMismatches).toEqual([]);
    expect(report.onlineEvalDaysOverCap).toEqual([]);
  });

  it("is skipped, not a debt, when the creator's wallet cannot pay", async () => {
    const { slug, appId, promptId } = await liveApp(broke);
    await broke.api("PUT", online(promptId), {
      body: settings({ assertions: [{ kind: "rubric", rubric: "mentions hello" }] }),
    });
    const judgesBefore = judgeCalls();
    expect((await call(slug)).status).toBe(200);
    await judgeAll(appId);
    const [row] = await rowsOf(appId);
    expect(row).toMatchObject({ status: "skipped_funds", costMicros: 0 });
    expect(judgeCalls()).toBe(judgesBefore);
    const wallet = await settledWallet(broke);
    expect(wallet.balance_micros).toBeGreaterThanOrEqual(0);
  });
});

describe("the daily cap", () => {
  it("holds under concurrent reservations: exactly what fits is reserved", async () => {
    const { appId } = await liveApp();
    const day = "2026-01-01";
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => reserveJudgeSpend(server.database.db, appId, day, 1_000, 10_500)),
    );
    expect(answers.filter(Boolean)).toHaveLength(10);
    const [row] = await server.database.db
      .select()
      .from(onlineEvalDays)
      .where(and(eq(onlineEvalDays.applicationId, appId), eq(onlineEvalDays.day, day)));
    expect(row?.reservedMicros).toBe(10_000);
    // A worst case above the whole cap is refused outright.
    expect(await reserveJudgeSpend(server.database.db, appId, "2026-01-02", 2_000, 1_000)).toBe(false);
  });

  it("stops judges past the cap while workers race; skipped rows make no vendor call", async () => {
    const { slug, appId, promptId } = await liveApp();
    // One judge's worst case is about 1.1 cents (300 output tokens at 30 µ$) and its actual cost far
    // less: a 2 cent cap lets one in flight at a time and a few in all, never 12.
    await creator.api("PUT", online(promptId), {
      body: settings({ assertions: [{ kind: "rubric", rubric: "mentions hello" }], daily_cap_cents: 2 }),
    });
    // Counted before the calls: the server's own job may judge some while they are made.
    const judgesBefore = judgeCalls();
    for (let i = 0; i < 12; i++) expect((await call(slug, `hello ${i}`)).status).toBe(200);
    const run = judge();
    // Four workers at once, as four processes' jobs would.
    await Promise.all(Array.from({ length: 4 }, () => runOnlineEvals(server.database.db, run)));
    await judgeAll(appId);
    const rows = await rowsOf(appId);
    const done = rows.filter((r) => r.status === "done");
    const capped = rows.filter((r) => r.status === "skipped_cap");
    expect(done.length + capped.length).toBe(12);
    expect(capped.length).toBeGreaterThan(0);
    expect(done.length).toBeGreaterThan(0);
    expect(judgeCalls() - judgesBefore).toBe(done.length);
    const spent = rows.reduce((sum, r) => sum + r.costMicros, 0);
    expect(spent).toBeLessThanOrEqual(20_000);
    expect(capped.every((r) => r.costMicros === 0 && r.judgeInvocationIds.length === 0)).toBe(true);
    const summary = await creator.api("GET", online(promptId));
    expect(summary.body.cap_reached).toBe(true);
    expect(summary.body.spent_today_micros).toBe(spent);
  });
});

describe("a crash", () => {
  it("leaves rows that are judged once: a claim without a judge call goes back, one with a judge call is closed", async () => {
    const { slug, appId, promptId } = await liveApp();
    await creator.api("PUT", online(promptId), { body: settings() });
    expect((await call(slug, "one")).status).toBe(200);
    expect((await call(slug, "two")).status).toBe(200);
    const db = server.database.db;
    const [a, b] = await rowsOf(appId);
    if (!a || !b) throw new Error("no rows");
    const longAgo = new Date(Date.now() - 60 * 60_000);
    // `a` was claimed by a process that died before any judge call; `b` after one was opened.
    const holdId = randomUUID();
    await db
      .update(onlineEvalResults)
      .set({ status: "running", claimedAt: longAgo })
      .where(eq(onlineEvalResults.id, a.id));
    await db
      .update(onlineEvalResults)
      .set({ status: "running", claimedAt: longAgo, judgeInvocationIds: [holdId] })
      .where(eq(onlineEvalResults.id, b.id));
    // A fresh claim is not a crash's leftover.
    expect(await recoverStaleOnlineEvals(db, new Date(Date.now() - 50 * 60_000))).toBe(0);
    await judgeAll(appId);
    const rows = await rowsOf(appId);
    expect(rows.find((r) => r.id === a.id)).toMatchObject({ status: "done", passed: true });
    expect(rows.find((r) => r.id === b.id)).toMatchObject({
      status: "failed",
      error: "interrupted while judging",
      costMicros: 0,
    });
    expect(rows.every((r) => Object.keys(r.inputs).length === 0)).toBe(true);
    const [{ n } = { n: -1 }] = await queryRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from online_eval_results where application_id = ${appId}`,
    );
    expect(n).toBe(2);
  });
});

describe("reconcile", () => {
  it("fails when a row's cost and the creator's wallet disagree, or a day passes its cap", async () => {
    const { slug, appId, promptId } = await liveApp();
    await creator.api("PUT", online(promptId), {
      body: settings({ assertions: [{ kind: "rubric", rubric: "mentions hello" }], daily_cap_cents: 1_000 }),
    });
    expect((await call(slug)).status).toBe(200);
    await judgeAll(appId);
    const db = server.database.db;
    const [row] = await rowsOf(appId);
    if (!row) throw new Error("no row");
    expect((await reconcile(db)).onlineEvalMismatches).toEqual([]);
    // By hand: the row claims less than the wallet paid.
    await db
      .update(onlineEvalResults)
      .set({ costMicros: row.costMicros + 7 })
      .where(eq(onlineEvalResults.id, row.id));
    const broken = await reconcile(db);
    expect(broken.onlineEvalMismatches).toEqual([
      expect.objectContaining({
        result_id: row.id,
        row_micros: row.costMicros + 7,
        charged_micros: row.costMicros,
      }),
    ]);
    expect(broken.ok).toBe(false);
    // By hand: the day's spend above its cap.
    await db
      .update(onlineEvalResults)
      .set({ costMicros: 10_000_001 })
      .where(eq(onlineEvalResults.id, row.id));
    expect((await reconcile(db)).onlineEvalDaysOverCap).toEqual([
      expect.objectContaining({ application_id: appId, spent_micros: 10_000_001, cap_micros: 10_000_000 }),
    ]);
    await db
      .update(onlineEvalResults)
      .set({ costMicros: row.costMicros })
      .where(eq(onlineEvalResults.id, row.id));
    expect((await reconcile(db)).onlineEvalMismatches).toEqual([]);
  });
});

describe("scores per experiment arm", () => {
  it("are in the summary per arm and in the experiment's detail beside its money", async () => {
    const { slug, appId, promptId } = await liveApp();
    await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { prompt_template: "second: {{query}}" },
    });
    const started = await creator.api("POST", `/api/prompts/${promptId}/experiments/`, {
      body: {
        arms: [
          { version: 2, percent: 50 },
          { version: 3, percent: 50 },
        ],
      },
    });
    expect(started.status).toBe(201);
    // v2 answers "answer: …" and passes; v3 answers "second: …" and fails.
    await creator.api("PUT", online(promptId), { body: settings() });
    for (let i = 0; i < 16; i++)
      expect(
        (
          await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
            body: { inputs: {}, query: "hi", response_mode: "blocking", user: `arm-${i}` },
          })
        ).status,
      ).toBe(200);
    await judgeAll(appId);
    const summary = (await creator.api("GET", online(promptId))).body;
    const byVersion = new Map(
      summary.versions.map((v: { version: number }) => [v.version, v] as const),
    ) as Map<number, Record<string, unknown>>;
    expect(byVersion.get(2)).toMatchObject({ experiment_id: started.body.id, pass_rate: 1, mean_score: 1 });
    expect(byVersion.get(3)).toMatchObject({ experiment_id: started.body.id, pass_rate: 0, mean_score: 0 });
    const v2 = byVersion.get(2) as { scored_calls: number; revenue_micros: number };
    expect(v2.revenue_micros).toBe(v2.scored_calls * 250_000);

    const detail = await creator.api("GET", `/api/prompts/${promptId}/experiments/${started.body.id}`);
    expect(detail.status).toBe(200);
    const arms = detail.body.arms as {
      version: number;
      calls: number;
      online_score: number | null;
      online_scored_calls: number;
    }[];
    expect(arms.find((a) => a.version === 2)).toMatchObject({
      online_score: 1,
      online_scored_calls: v2.scored_calls,
    });
    expect(arms.find((a) => a.version === 3)?.online_score).toBe(0);
    expect(arms.reduce((n, a) => n + a.online_scored_calls, 0)).toBe(16);
  });
});
