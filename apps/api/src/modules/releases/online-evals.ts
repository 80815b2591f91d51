import { createHash } from "node:crypto";
import type {
  EvalAssertion,
  IoSchema,
  OnlineEvalSettings,
  OnlineEvalSummary,
  OnlineEvalVersionSummary,
} from "@promptmint/contracts";
import { IoSchemaSchema } from "@promptmint/contracts";
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import type { Database } from "../../db/client.ts";
import { queryRows } from "../../db/client.ts";
import {
  type ApplicationRow,
  applications,
  appVersions,
  onlineEvalDays,
  onlineEvalResults,
  onlineEvalSettings,
  type StoredAssertion,
  users,
} from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { forgetLookups, lookupCache } from "../../lib/lookup-cache.ts";
import { compilePattern } from "../../lib/safe-pattern.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { MICROS_PER_CENT } from "../billing/money.ts";
import { findModel } from "../models/model-catalog.ts";
import { type Judge, judgeCase } from "./evals.ts";
import { type ExperimentKind, ownSubject } from "./experiment-subjects.ts";

/**
 * Online evaluation of live calls (docs/decisions/076). A share of an app's customer calls (chosen
 * from the invocation id: the same call is always in or out) is written as a pending row after it
 * was answered and recorded; a background job judges it by the app's assertions. Deterministic
 * assertions cost nothing; a rubric's judge is the owner's own call, its worst case held from the
 * creator's wallet and its actual cost taken (decision 062, as an eval run's judge), never from the
 * consumer whose call is judged. Judges spend at most `daily_cap_cents` per app and UTC day: each
 * judge call's worst case is reserved on the app's day counter by one conditional upsert before the
 * vendor is called (`reserveJudgeSpend`), so concurrent workers in any number of processes cannot
 * pass it together.
 */

/** Outputs longer than this are kept cut (as eval results keep theirs). */
const MAX_KEPT_OUTPUT = 20_000;
/** Rows judged per pass of the job, and at once. */
const BATCH = 8;
/** A row claimed longer ago than this was left by a crash. */
const STALE_CLAIM_MS = 15 * 60_000;
export const ONLINE_EVALS_INTERVAL_MS = 5_000;
/** The judge model of an app whose calls' model is not one we know (a workflow's provider). */
export const FALLBACK_JUDGE_MODEL = "sandbox";

/** What the paid path keeps of an app's online eval settings (cached per app, "off" too). */
interface SamplingSettings {
  samplePercent: number;
}

const cacheKey = (applicationId: string) => `online-evals:${applicationId}`;

/** The app's sampling settings from the lookup cache: null when off (then the paid path asks nothing). */
async function samplingOf(db: Database, applicationId: string): Promise<SamplingSettings | null> {
  const found = await lookupCache<SamplingSettings | null>(db, "prompts").get(
    cacheKey(applicationId),
    async () => {
      const [row] = await db
        .select({ enabled: onlineEvalSettings.enabled, samplePercent: onlineEvalSettings.samplePercent })
        .from(onlineEvalSettings)
        .where(eq(onlineEvalSettings.applicationId, applicationId))
        .limit(1);
      return row?.enabled ? { samplePercent: row.samplePercent } : null;
    },
  );
  return found ?? null;
}

/** Whether the invocation is in a `percent` sample: a stable hash of its id into a million buckets. */
export function inSample(invocationId: string, percent: number): boolean {
  const digest = createHash("sha256").update(`online-eval\u0000${invocationId}`).digest();
  return digest.readUInt32BE(0) % 1_000_000 < Math.round(percent * 10_000);
}

/** A customer's answered call, as the paid path knows it once it is recorded. */
export interface LiveCall {
  applicationId: string;
  invocationId: string;
  version: number;
  experimentId: string | null;
  model: string;
  output: string;
  inputs: Record<string, unknown>;
  query: string | null;
  latencyMs: number;
  costMicros: number;
}

/**
 * The paid path's one hook (gateway/paid-call.ts), after a customer's call was answered and
 * recorded: nothing but a cache read unless the app samples; a sampled call is written as pending.
 * Answers whether it was sampled.
 */
export async function sampleLiveCall(db: Database, call: LiveCall): Promise<boolean> {
  const settings = await samplingOf(db, call.applicationId);
  if (!settings || !inSample(call.invocationId, settings.samplePercent)) return false;
  await db
    .insert(onlineEvalResults)
    .values({
      applicationId: call.applicationId,
      invocationId: call.invocationId,
      version: call.version,
      experimentId: call.experimentId,
      model: call.model,
      output: call.output.slice(0, MAX_KEPT_OUTPUT),
      inputs: call.inputs,
      query: call.query,
      latencyMs: Math.round(call.latencyMs),
      callCostMicros: Math.ceil(call.costMicros),
    })
    .onConflictDoNothing();
  return true;
}

// ---------------------------------------------------------------------------------------------
// Settings and summary

/** The app behind `/prompts/:id` or `/workflows/:id`, if the user owns it (404 naming the kind). */
async function ownApp(db: Database, owner: LocalUser, kind: ExperimentKind, id: string) {
  return (await ownSubject(db, owner, kind, id)).app;
}

function toSettings(row: typeof onlineEvalSettings.$inferSelect): OnlineEvalSettings {
  return {
    enabled: row.enabled,
    sample_percent: row.samplePercent,
    assertions: row.assertions as EvalAssertion[],
    daily_cap_cents: row.dailyCapCents,
  };
}

/** Today's UTC day, as the day counters key it. */
export function utcDayOf(at: Date = new Date()): string {
  return at.toISOString().slice(0, 10);
}

export async function putOnlineEvalSettings(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  id: string,
  settings: OnlineEvalSettings,
): Promise<OnlineEvalSummary> {
  const app = await ownApp(db, owner, kind, id);
  const problems: Record<string, string> = {};
  settings.assertions.forEach((assertion, i) => {
    if (assertion.kind !== "regex") return;
    const compiled = compilePattern(assertion.pattern);
    if (!compiled.ok) problems[`assertions.${i}.pattern`] = compiled.problem;
  });
  if (Object.keys(problems).length > 0) throw invalidFields(problems);
  const values = {
    enabled: settings.enabled,
    samplePercent: settings.sample_percent,
    assertions: settings.assertions as StoredAssertion[],
    dailyCapCents: settings.daily_cap_cents,
    updatedBy: owner.id,
    updatedAt: new Date(),
  };
  await db
    .insert(onlineEvalSettings)
    .values({ applicationId: app.id, ...values })
    .onConflictDoUpdate({ target: onlineEvalSettings.applicationId, set: values });
  // Other processes hear the table's trigger (migration 0055).
  forgetLookups(db, "prompts");
  return summaryOf(db, app);
}

export async function getOnlineEvalSummary(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  id: string,
): Promise<OnlineEvalSummary> {
  return summaryOf(db, await ownApp(db, owner, kind, id));
}

interface VersionRow {
  version: number;
  experiment_id: string | null;
  scored: number;
  passed: number;
  mean_score: number | null;
  eval_cost: string;
}

interface RevenueRow {
  version: number;
  experiment_id: string | null;
  revenue: string;
  margin: string;
}

/** How far back the summary's figures reach. */
const SUMMARY_DAYS = 30;

/**
 * The summary: settings, today's judge spend against the cap, and per version and experiment arm
 * the scored calls (rows judged: `done`), pass rate, mean score and what judging cost, beside the
 * revenue and margin of that version's (arm's) customer calls, computed as the experiment figures
 * compute them (experiments.service.ts: price less fee less model cost), over the same 30 days.
 */
async function summaryOf(db: Database, app: ApplicationRow): Promise<OnlineEvalSummary> {
  const since = new Date(Date.now() - SUMMARY_DAYS * 86_400_000);
  const [settingsRow] = await db
    .select()
    .from(onlineEvalSettings)
    .where(eq(onlineEvalSettings.applicationId, app.id));
  const [day] = await db
    .select()
    .from(onlineEvalDays)
    .where(and(eq(onlineEvalDays.applicationId, app.id), eq(onlineEvalDays.day, utcDayOf())));
  const versions = await queryRows<VersionRow>(
    db,
    sql`select version, experiment_id::text as experiment_id,
               (count(*) filter (where status = 'done'))::int as scored,
               (count(*) filter (where status = 'done' and passed))::int as passed,
               (avg(score) filter (where status = 'done'))::float8 as mean_score,
               sum(cost_micros)::text as eval_cost
        from online_eval_results
        where application_id = ${app.id} and created_at >= ${since}
        group by version, experiment_id order by version, experiment_id`,
  );
  const revenue = await queryRows<RevenueRow>(
    db,
    sql`select app_version as version, experiment_id::text as experiment_id,
               sum(charged_cents * ${MICROS_PER_CENT})::text as revenue,
               sum(charged_cents * ${MICROS_PER_CENT} - fee_micros - model_cost_micros)::text as margin
        from invocations
        where application_id = ${app.id} and created_at >= ${since} and app_version is not null
          and purpose = 'customer'
        group by app_version, experiment_id`,
  );
  const money = new Map(revenue.map((r) => [`${r.version}:${r.experiment_id ?? ""}`, r]));
  const summaries: OnlineEvalVersionSummary[] = versions.map((row) => {
    const figures = money.get(`${row.version}:${row.experiment_id ?? ""}`);
    return {
      version: row.version,
      experiment_id: row.experiment_id,
      scored_calls: row.scored,
      passed_calls: row.passed,
      pass_rate: row.scored > 0 ? row.passed / row.scored : null,
      mean_score: row.mean_score,
      eval_cost_micros: Number(row.eval_cost ?? 0),
      revenue_micros: Number(figures?.revenue ?? 0),
      margin_micros: Number(figures?.margin ?? 0),
    };
  });
  const recent = await db
    .select({
      invocationId: onlineEvalResults.invocationId,
      version: onlineEvalResults.version,
      passed: onlineEvalResults.passed,
      score: onlineEvalResults.score,
      createdAt: onlineEvalResults.createdAt,
    })
    .from(onlineEvalResults)
    .where(and(eq(onlineEvalResults.applicationId, app.id), eq(onlineEvalResults.status, "done")))
    .orderBy(desc(onlineEvalResults.createdAt))
    .limit(20);
  // Reached: a judge was refused by the cap today since the settings last changed.
  const dayStart = new Date(`${utcDayOf()}T00:00:00.000Z`);
  const capFrom = settingsRow && settingsRow.updatedAt > dayStart ? settingsRow.updatedAt : dayStart;
  const [capped] = settingsRow
    ? await db
        .select({ id: onlineEvalResults.id })
        .from(onlineEvalResults)
        .where(
          and(
            eq(onlineEvalResults.applicationId, app.id),
            eq(onlineEvalResults.status, "skipped_cap"),
            sql`${onlineEvalResults.createdAt} >= ${capFrom}`,
          ),
        )
        .limit(1)
    : [];
  return {
    settings: settingsRow ? toSettings(settingsRow) : null,
    spent_today_micros: day?.spentMicros ?? 0,
    cap_reached: capped !== undefined,
    versions: summaries,
    recent: recent.map((r) => ({
      invocation_id: r.invocationId,
      version: r.version,
      passed: r.passed ?? false,
      score: r.score,
      created_at: r.createdAt.toISOString(),
    })),
  };
}

/**
 * A version's online score since `since` (guarded rollouts' `min_online_score`): how many of its
 * sampled calls were judged, and their mean score (the share of assertions passed), null with none.
 */
export async function onlineEvalScoreOf(
  db: Database,
  applicationId: string,
  version: number,
  since: Date,
): Promise<{ scored: number; mean: number | null }> {
  const [row] = await queryRows<{ scored: number; mean: number | null }>(
    db,
    sql`select count(*)::int as scored, avg(score)::float8 as mean from online_eval_results
        where application_id = ${applicationId} and version = ${version} and status = 'done'
          and created_at >= ${since}`,
  );
  return { scored: row?.scored ?? 0, mean: row?.scored ? (row.mean ?? null) : null };
}

/** Per experiment arm: scored calls and mean score (ExperimentDetail's arms). */
export async function onlineScoresOfExperiment(
  db: Database,
  experimentId: string,
): Promise<Map<number, { scored: number; mean: number | null }>> {
  const rows = await queryRows<{ version: number; scored: number; mean: number | null }>(
    db,
    sql`select version, count(*)::int as scored, avg(score)::float8 as mean from online_eval_results
        where experiment_id = ${experimentId} and status = 'done' group by version`,
  );
  return new Map(rows.map((r) => [r.version, { scored: r.scored, mean: r.mean }]));
}

// ---------------------------------------------------------------------------------------------
// The daily cap

/** Thrown by the cap's reservation: the row is `skipped_cap` and no vendor call happens. */
export class OnlineEvalCapReached extends Error {}

/**
 * Reserves `worstMicros` of the app's day: one statement that inserts or raises the day's counter
 * only while what was spent, what is in flight and this call fit under the cap. The upsert locks
 * the counter row, so concurrent reservations (any process) take turns and the cap holds.
 */
export async function reserveJudgeSpend(
  db: Database,
  applicationId: string,
  day: string,
  worstMicros: number,
  capMicros: number,
): Promise<boolean> {
  const worst = Math.max(0, Math.ceil(worstMicros));
  if (worst > capMicros) return false;
  const rows = await queryRows<{ reserved: string }>(
    db,
    sql`insert into online_eval_days (application_id, day, reserved_micros, spent_micros, cap_micros)
        values (${applicationId}, ${day}, ${worst}, 0, ${capMicros})
        on conflict (application_id, day) do update
          set reserved_micros = online_eval_days.reserved_micros + excluded.reserved_micros,
              cap_micros = greatest(online_eval_days.cap_micros, excluded.cap_micros)
          where online_eval_days.spent_micros + online_eval_days.reserved_micros + excluded.reserved_micros
                <= ${capMicros}
        returning reserved_micros::text as reserved`,
  );
  return rows.length > 0;
}

/** Settles a reservation: its worst case leaves what is in flight, what it cost is spent. */
export async function settleJudgeSpend(
  db: Database,
  applicationId: string,
  day: string,
  worstMicros: number,
  costMicros: number,
): Promise<void> {
  const worst = Math.max(0, Math.ceil(worstMicros));
  const cost = Math.max(0, Math.ceil(costMicros));
  await db
    .update(onlineEvalDays)
    .set({
      reservedMicros: sql`greatest(0, ${onlineEvalDays.reservedMicros} - ${worst})`,
      spentMicros: sql`${onlineEvalDays.spentMicros} + ${cost}`,
    })
    .where(and(eq(onlineEvalDays.applicationId, applicationId), eq(onlineEvalDays.day, day)));
}

// ---------------------------------------------------------------------------------------------
// The job

/** What the job needs from the gateway: a rubric judge that is the owner's own paid call. */
export type OnlineJudgeFor = (
  application: ApplicationRow,
  owner: LocalUser,
  model: string,
  guard: {
    reserve(worstCaseMicros: number): Promise<void>;
    opened(invocationId: string): Promise<void>;
    settle(worstCaseMicros: number, costMicros: number): Promise<void>;
  },
) => Judge;

type ResultRow = typeof onlineEvalResults.$inferSelect;

/**
 * A crash's leftovers: a row claimed long ago is put back to pending when no judge call was opened
 * for it (nothing was spent), else closed as failed with what its judge calls cost the wallet (so
 * it is never judged, nor paid for, twice).
 */
export async function recoverStaleOnlineEvals(db: Database, now: Date = new Date()): Promise<number> {
  const before = new Date(now.getTime() - STALE_CLAIM_MS);
  const back = await db
    .update(onlineEvalResults)
    .set({ status: "pending", claimedAt: null })
    .where(
      and(
        eq(onlineEvalResults.status, "running"),
        sql`${onlineEvalResults.claimedAt} < ${before}`,
        sql`cardinality(${onlineEvalResults.judgeInvocationIds}) = 0`,
      ),
    )
    .returning({ id: onlineEvalResults.id });
  const closed = await queryRows<{ id: string }>(
    db,
    sql`update online_eval_results r
        set status = 'failed', error = 'interrupted while judging', done_at = now(), inputs = '{}'::jsonb,
            cost_micros = coalesce((select sum(h.spent_micros + h.overrun_micros) from model_cost_holds h
                                    where h.id = any(r.judge_invocation_ids)), 0)
        where r.status = 'running' and r.claimed_at < ${before}
          and cardinality(r.judge_invocation_ids) > 0
        returning r.id`,
  );
  return back.length + closed.length;
}

/** Claims up to `limit` pending rows (SKIP LOCKED: two workers never take the same row). */
async function claimPending(db: Database, limit: number): Promise<ResultRow[]> {
  const ids = await queryRows<{ id: string }>(
    db,
    sql`update online_eval_results set status = 'running', claimed_at = now()
        where id in (select id from online_eval_results where status = 'pending'
                     order by created_at limit ${limit} for update skip locked)
        returning id`,
  );
  if (ids.length === 0) return [];
  return db
    .select()
    .from(onlineEvalResults)
    .where(
      inArray(
        onlineEvalResults.id,
        ids.map((r) => r.id),
      ),
    );
}

async function appAndOwner(db: Database, applicationId: string) {
  const [row] = await db
    .select({ app: applications, owner: users, settings: onlineEvalSettings })
    .from(applications)
    .innerJoin(users, eq(users.id, applications.ownerId))
    .leftJoin(onlineEvalSettings, eq(onlineEvalSettings.applicationId, applications.id))
    .where(eq(applications.id, applicationId));
  return row;
}

async function outputSchemaOf(
  db: Database,
  applicationId: string,
  version: number,
): Promise<IoSchema | null> {
  const [row] = await db
    .select({ payload: appVersions.payload, kind: appVersions.kind })
    .from(appVersions)
    .where(and(eq(appVersions.applicationId, applicationId), eq(appVersions.version, version)))
    .limit(1);
  // A prompt version's payload names its output schema (decision 075); a workflow's has none.
  const schema = row?.kind === "prompt" ? (row.payload as { output_schema?: unknown }).output_schema : null;
  if (!schema) return null;
  const parsed = IoSchemaSchema.safeParse(schema);
  return parsed.success ? parsed.data : null;
}

/** Judges one claimed row and closes it (done, skipped_cap, skipped_funds or failed). */
async function judgeRow(db: Database, judgeFor: OnlineJudgeFor, row: ResultRow): Promise<void> {
  const found = await appAndOwner(db, row.applicationId);
  const close = (set: Partial<typeof onlineEvalResults.$inferInsert>) =>
    db
      .update(onlineEvalResults)
      .set({ inputs: {}, doneAt: new Date(), ...set })
      .where(and(eq(onlineEvalResults.id, row.id), eq(onlineEvalResults.status, "running")));
  if (!found?.settings) {
    await close({ status: "failed", error: "online evals are not set up for this app" });
    return;
  }
  const { app, owner, settings } = found;
  const assertions = settings.assertions as EvalAssertion[];
  const capMicros = settings.dailyCapCents * MICROS_PER_CENT;
  const day = utcDayOf();
  const state = { cap: false, funds: false, cost: 0, judged: false };
  const model = findModel(row.model) ? row.model : FALLBACK_JUDGE_MODEL;
  const inner = judgeFor(app, owner, model, {
    async reserve(worst) {
      if (!(await reserveJudgeSpend(db, app.id, day, worst, capMicros))) {
        state.cap = true;
        throw new OnlineEvalCapReached("the daily cap of online evals is reached");
      }
    },
    async opened(invocationId) {
      state.judged = true;
      await db
        .update(onlineEvalResults)
        .set({
          capDay: day,
          judgeInvocationIds: sql`array_append(${onlineEvalResults.judgeInvocationIds}, ${invocationId}::uuid)`,
        })
        .where(eq(onlineEvalResults.id, row.id));
    },
    async settle(worst, cost) {
      state.cost += Math.max(0, Math.ceil(cost));
      await settleJudgeSpend(db, app.id, day, worst, cost);
    },
  });
  const judge: Judge = async (input) => {
    try {
      return await inner(input);
    } catch (error) {
      if (error instanceof AppError && error.code === "payment_required") state.funds = true;
      throw error;
    }
  };
  const { results } = await judgeCase(
    assertions,
    {
      output: row.output,
      error: null,
      costMicros: row.callCostMicros,
      latencyMs: row.latencyMs,
      inputTokens: 0,
      outputTokens: 0,
      invocationId: row.invocationId,
    },
    {
      outputSchema: assertions.some((a) => a.kind === "output_schema")
        ? await outputSchemaOf(db, app.id, row.version)
        : null,
      inputs: row.inputs,
      query: row.query,
      judge,
    },
  );
  const spent = { costMicros: state.cost, capDay: state.judged ? day : null };
  if (state.cap || state.funds) {
    await close({
      status: state.cap ? "skipped_cap" : "skipped_funds",
      assertionResults: results,
      error: state.cap
        ? "the daily cap of online evals is reached"
        : "the creator's wallet cannot pay the judge",
      ...spent,
    });
    return;
  }
  const passedCount = results.filter((r) => r.passed).length;
  await close({
    status: "done",
    passed: passedCount === results.length,
    score: results.length > 0 ? passedCount / results.length : null,
    assertionResults: results,
    ...spent,
  });
}

/**
 * One pass of the job: a crash's leftovers first, then up to `limit` pending rows, judged
 * `BATCH` at a time. A row whose judging throws is closed as failed (never left running).
 */
export async function runOnlineEvals(
  db: Database,
  judgeFor: OnlineJudgeFor,
  { limit = 64, log }: { limit?: number; log?: FastifyBaseLogger } = {},
): Promise<number> {
  await recoverStaleOnlineEvals(db);
  let judged = 0;
  while (judged < limit) {
    const rows = await claimPending(db, Math.min(BATCH, limit - judged));
    if (rows.length === 0) break;
    await Promise.all(
      rows.map((row) =>
        judgeRow(db, judgeFor, row).catch(async (error) => {
          log?.error({ err: error, row: row.id }, "could not judge an online eval");
          await db
            .update(onlineEvalResults)
            .set({
              status: "failed",
              error: "could not be judged",
              doneAt: new Date(),
              inputs: {},
              costMicros: sql`coalesce((select sum(h.spent_micros + h.overrun_micros) from model_cost_holds h
                                        where h.id = any(${onlineEvalResults.judgeInvocationIds})), 0)`,
            })
            .where(and(eq(onlineEvalResults.id, row.id), eq(onlineEvalResults.status, "running")));
        }),
      ),
    );
    judged += rows.length;
  }
  return judged;
}
