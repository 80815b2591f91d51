import type {
  ArmComparison,
  ArmSeriesPoint,
  ArmStats,
  Experiment,
  ExperimentDetail,
  ExperimentList,
  ExperimentOutcome,
  StartExperiment,
} from "@promptmint/contracts";
import { isUuid } from "@promptmint/contracts";
import { and, desc, eq, sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import {
  type ApplicationRow,
  type AppVersionRow,
  type ExperimentRules,
  experiments,
  users,
} from "../../db/schema/index.ts";
import { isUniqueViolation } from "../../lib/database-errors.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { type ExperimentKind, type ExperimentSubject, ownSubject } from "./experiment-subjects.ts";
import { productionOf } from "./labels.ts";
import { onlineScoresOfExperiment } from "./online-evals.ts";
import { kindOfApp, releaseKind, releaseProduction } from "./release-kinds.ts";
import { twoProportionZ, welchT } from "./significance.ts";
import { authorName, lockApp, versionsByNumber } from "./versions.ts";

/**
 * Experiments (docs/decisions/058): an app's production traffic split between versions, sticky
 * per caller (serving.ts chooses the arm), judged per arm from its invocations, ended by the
 * creator (stop, promote an arm, roll back) or by its rules (experiment-rules.ts). One code path
 * for prompt apps and workflow apps: what differs per kind is its ReleaseKind (release-kinds.ts).
 * Every end that moves `production` passes releaseProduction, which writes the label move's audit row.
 */

type ExperimentRow = typeof experiments.$inferSelect;

/** A p-value below this is called a difference (two-sided, 95%). */
export const SIGNIFICANCE = 0.05;
/** Micro-dollars in a cent. */
const MICROS_PER_CENT = 10_000;

/** Said with a workflow experiment's figures: its margin has no model cost in it. */
export const WORKFLOW_COST_NOTE =
  "Workflow calls have no model cost from Promptmint: the provider behind each version (Dify, n8n, Flowise, your webhook) bills you directly, so an arm's margin is its revenue less the platform fee.";

/** An experiment as the API shows it; `prompt_id`/`workflow_id` name its app's subject (decision 075). */
export function toExperiment(
  row: ExperimentRow,
  startedByName: string | null,
  subject: Pick<ExperimentSubject, "kind" | "id">,
): Experiment {
  return {
    id: row.id,
    app_kind: subject.kind,
    prompt_id: subject.kind === "prompt" ? subject.id : null,
    workflow_id: subject.kind === "workflow" ? subject.id : null,
    status: row.status,
    arms: row.arms,
    sticky_by: row.stickyBy,
    rules: row.rules,
    control_version: row.controlVersion,
    started_by_name: startedByName,
    started_at: row.startedAt.toISOString(),
    ended_at: row.endedAt?.toISOString() ?? null,
    outcome: row.outcome,
    winner_version: row.winnerVersion,
    end_reason: row.endReason,
    rollout: row.rollout ?? null,
  };
}

async function ownExperiment(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
  experimentId: string,
) {
  const subject = await ownSubject(db, owner, kind, subjectId);
  if (!isUuid(experimentId)) throw notFound("Experiment");
  const [row] = await db
    .select({ experiment: experiments, by: authorName })
    .from(experiments)
    .leftJoin(users, eq(users.id, experiments.startedBy))
    .where(and(eq(experiments.id, experimentId), eq(experiments.applicationId, subject.app.id)))
    .limit(1);
  if (!row) throw notFound("Experiment");
  return { subject, experiment: row.experiment, startedByName: row.by ?? null };
}

export async function listExperiments(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
): Promise<ExperimentList> {
  const subject = await ownSubject(db, owner, kind, subjectId);
  const rows = await db
    .select({ experiment: experiments, by: authorName })
    .from(experiments)
    .leftJoin(users, eq(users.id, experiments.startedBy))
    .where(eq(experiments.applicationId, subject.app.id))
    .orderBy(desc(experiments.startedAt), desc(experiments.id))
    .limit(100);
  const list = rows.map((row) => toExperiment(row.experiment, row.by ?? null, subject));
  return { running: list.find((e) => e.status === "running") ?? null, experiments: list };
}

/**
 * Starts an experiment: 2–5 arms, whole percents summing to 100, distinct versions of this app
 * that its kind accepts as arms (a prompt's take the same inputs; a workflow's have a provider),
 * each judged as a promotion would be (it will serve paid calls: the price guard for a prompt).
 * One running experiment per app: a second is a 409, even when two starts race.
 */
export async function startExperiment(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
  input: StartExperiment,
  { feePercent }: { feePercent: number },
): Promise<Experiment> {
  const side = releaseKind(kind);
  const subject = await ownSubject(db, owner, kind, subjectId);
  const arms = input.arms;
  const rules: ExperimentRules = { min_calls: 100, ...input.rules };
  const problems: Record<string, string> = {};
  const total = arms.reduce((sum, arm) => sum + arm.percent, 0);
  if (total !== 100) problems.arms = `percents must sum to 100 (they sum to ${total})`;
  const seen = new Set<number>();
  arms.forEach((arm, i) => {
    if (seen.has(arm.version)) problems[`arms.${i}.version`] = `v${arm.version} is already an arm`;
    seen.add(arm.version);
  });
  if (Object.keys(problems).length > 0) throw invalidFields(problems);

  const byNumber = await versionsByNumber(
    db,
    subject.app.id,
    arms.map((arm) => arm.version),
  );
  arms.forEach((arm, i) => {
    if (!byNumber.has(arm.version)) problems[`arms.${i}.version`] = `this app has no version v${arm.version}`;
  });
  if (Object.keys(problems).length > 0) throw invalidFields(problems);
  Object.assign(problems, side.armProblems(arms, byNumber));
  if (Object.keys(problems).length > 0) throw invalidFields(problems);
  // Every arm serves paid calls: each is judged as a promotion would be (the price guard, and the
  // eval gate: an arm is a release to its share of callers), the refusal naming the arm (decision 063).
  for (const [i, arm] of arms.entries())
    await side
      .guardServing(db, subject.app, byNumber.get(arm.version) as AppVersionRow, feePercent)
      .catch((error: unknown) => {
        if (!(error instanceof AppError)) throw error;
        const message = `Arm v${arm.version} cannot serve paid calls: ${error.message}`;
        throw new AppError(error.code, message, { fields: { [`arms.${i}.version`]: message } });
      });

  const row = await db
    .transaction(async (tx) => {
      const t = tx as unknown as Database;
      // The app's row lock first, as its label moves and saves take it: they take turns.
      await lockApp(t, subject.app.id);
      const production = (await productionOf(t, subject.app.id))?.version ?? null;
      await refuseRunning(t, subject.app.id);
      const [inserted] = await t
        .insert(experiments)
        .values({
          applicationId: subject.app.id,
          arms: arms.map((arm) => ({ version: arm.version, percent: arm.percent })),
          stickyBy: input.sticky_by ?? null,
          rules,
          controlVersion: production ?? (arms[0]?.version as number),
          startedBy: owner.id,
        })
        .returning();
      return inserted as ExperimentRow;
    })
    .catch((error: unknown) => {
      if (isUniqueViolation(error, "experiments_one_running_per_app")) throw alreadyRunning();
      throw error;
    });
  forgetLookups(db, "prompts");
  return toExperiment(row, owner.displayName || owner.username || null, subject);
}

function alreadyRunning(): AppError {
  return new AppError(
    "conflict",
    "This app already has a running experiment: stop it before starting another",
  );
}

async function refuseRunning(db: Database, applicationId: string): Promise<void> {
  const [running] = await db
    .select({ id: experiments.id })
    .from(experiments)
    .where(and(eq(experiments.applicationId, applicationId), eq(experiments.status, "running")))
    .limit(1);
  if (running) throw alreadyRunning();
}

export interface EndRequest {
  outcome: ExperimentOutcome;
  /** For `promoted`: the arm that takes `production`. */
  version?: number;
  reason: string;
  actorId: string | null;
}

/**
 * Ends a running experiment, under its prompt's or workflow's row lock (as label moves and saves
 * take it): `stopped` leaves `production` where it is; `rolled_back` returns it to the control
 * version (where it pointed at the start); `promoted` moves it to the winning arm. Both moves go
 * through the kind's release function (the audit row, the one release gate). A promoted arm is
 * judged first (a prompt's by the price guard). A second end of one experiment is a 409: the first
 * won.
 */
export async function endExperiment(
  db: Database,
  app: ApplicationRow,
  experiment: ExperimentRow,
  request: EndRequest,
  { feePercent }: { feePercent: number },
): Promise<ExperimentRow> {
  const side = releaseKind(kindOfApp(app));
  const target =
    request.outcome === "promoted"
      ? request.version
      : request.outcome === "rolled_back"
        ? experiment.controlVersion
        : undefined;
  if (request.outcome === "promoted" && !experiment.arms.some((arm) => arm.version === request.version))
    throw invalidFields({
      version: `must be one of this experiment's arms (${experiment.arms.map((a) => `v${a.version}`).join(", ")})`,
    });
  const version =
    target === undefined ? undefined : (await versionsByNumber(db, app.id, [target])).get(target);
  if (target !== undefined && !version)
    throw new AppError("version_not_found", `This app has no version v${target}`);
  if (request.outcome === "promoted" && version) await side.guardServing(db, app, version, feePercent);

  const ended = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await lockApp(t, app.id);
    const [row] = await t
      .update(experiments)
      .set({
        status: "ended",
        endedAt: new Date(),
        endedBy: request.actorId,
        outcome: request.outcome,
        winnerVersion: request.outcome === "promoted" ? (request.version ?? null) : null,
        endReason: request.reason,
      })
      .where(and(eq(experiments.id, experiment.id), eq(experiments.status, "running")))
      .returning();
    if (!row) throw new AppError("conflict", "This experiment has already ended");
    if (version) await releaseProduction(t, app, version, { id: request.actorId, reason: request.reason });
    return row;
  });
  forgetLookups(db, ...new Set(["prompts" as const, ...side.lookups]));
  return ended;
}

/** How a creator ends an experiment by one click: stop, roll back, or promote an arm. */
export type EndAction = { kind: "stop" } | { kind: "rollback" } | { kind: "promote"; version: number };

/** One click (stop, roll back or promote an arm): the end request it makes, with its default reason. */
function endRequestOf(
  experiment: ExperimentRow,
  action: EndAction,
  reason: string | undefined,
  actorId: string,
) {
  switch (action.kind) {
    case "stop":
      return { outcome: "stopped" as const, reason: reason || "Stopped by the creator", actorId };
    case "rollback":
      return {
        outcome: "rolled_back" as const,
        reason: reason || `Experiment rolled back to v${experiment.controlVersion} by the creator`,
        actorId,
      };
    case "promote":
      return {
        outcome: "promoted" as const,
        version: action.version,
        reason: reason || `Experiment arm v${action.version} promoted by the creator`,
        actorId,
      };
  }
}

/** The creator's one-click end of their experiment, answered with its figures. */
export async function endOwnExperiment(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
  experimentId: string,
  action: EndAction,
  input: { reason?: string },
  options: { feePercent: number },
): Promise<ExperimentDetail> {
  const { subject, experiment } = await ownExperiment(db, owner, kind, subjectId, experimentId);
  await endExperiment(
    db,
    subject.app,
    experiment,
    endRequestOf(experiment, action, input.reason, owner.id),
    options,
  );
  return experimentDetail(db, owner, kind, subjectId, experimentId);
}

interface ArmRow {
  version: number;
  calls: number;
  successes: number;
  p50: number | null;
  p95: number | null;
  input_tokens: string;
  output_tokens: string;
  model_cost: string;
  charged_cents: string;
  fee: string;
  margin: string;
  margin_mean: number | null;
  margin_var: number | null;
}

/**
 * Each arm's figures over the experiment's calls (its invocations carry its id), in one query: the
 * margin of a call is its price less the platform's fee and its model cost (all of which is the
 * creator's, from the call's share or later from earnings: billing/model-costs.ts), whose mean and
 * variance feed Welch's test.
 */
async function armRows(db: Database, experiment: ExperimentRow): Promise<ArmRow[]> {
  return queryRows<ArmRow>(
    db,
    sql`with calls as (
          select app_version, status, latency_ms, input_tokens, output_tokens, model_cost_micros,
                 charged_cents, fee_micros,
                 charged_cents * ${MICROS_PER_CENT} - fee_micros - model_cost_micros as margin
          from invocations
          where experiment_id = ${experiment.id} and created_at >= ${experiment.startedAt}
            and purpose not in ('eval', 'online_eval')
        )
        select app_version as version, count(*)::int as calls,
               (count(*) filter (where status = 'success'))::int as successes,
               percentile_cont(0.5) within group (order by latency_ms)::float8 as p50,
               percentile_cont(0.95) within group (order by latency_ms)::float8 as p95,
               sum(input_tokens)::text as input_tokens, sum(output_tokens)::text as output_tokens,
               sum(model_cost_micros)::text as model_cost, sum(charged_cents)::text as charged_cents,
               sum(fee_micros)::text as fee, sum(margin)::text as margin,
               avg(margin)::float8 as margin_mean, var_samp(margin)::float8 as margin_var
        from calls group by app_version order by app_version`,
  );
}

export function armStatsOf(experiment: ExperimentRow, rows: ArmRow[]): ArmStats[] {
  const byVersion = new Map(rows.map((row) => [row.version, row]));
  return experiment.arms.map((arm) => {
    const row = byVersion.get(arm.version);
    const calls = row?.calls ?? 0;
    const successes = row?.successes ?? 0;
    const margin = Number(row?.margin ?? 0);
    return {
      version: arm.version,
      percent: arm.percent,
      calls,
      successes,
      errors: calls - successes,
      success_rate: calls > 0 ? successes / calls : null,
      latency_p50_ms: row?.p50 ?? null,
      latency_p95_ms: row?.p95 ?? null,
      input_tokens: Number(row?.input_tokens ?? 0),
      output_tokens: Number(row?.output_tokens ?? 0),
      model_cost_micros: Number(row?.model_cost ?? 0),
      revenue_micros: Number(row?.charged_cents ?? 0) * MICROS_PER_CENT,
      fee_micros: Number(row?.fee ?? 0),
      margin_micros: margin,
      margin_per_call_micros: calls > 0 ? (row?.margin_mean ?? margin / calls) : null,
      refunded_calls: calls - successes,
    };
  });
}

/** Each arm against the control (or the first arm when the control is none of them). */
export function compareArms(experiment: ExperimentRow, stats: ArmStats[], rows: ArmRow[]): ArmComparison[] {
  const minCalls = experiment.rules.min_calls;
  const controlVersion = stats.some((s) => s.version === experiment.controlVersion)
    ? experiment.controlVersion
    : (stats[0]?.version ?? experiment.controlVersion);
  const control = stats.find((s) => s.version === controlVersion);
  const sample = (version: number) => {
    const row = rows.find((r) => r.version === version);
    return { n: row?.calls ?? 0, mean: row?.margin_mean ?? 0, variance: row?.margin_var ?? 0 };
  };
  if (!control) return [];
  return stats
    .filter((arm) => arm.version !== controlVersion)
    .map((arm) => {
      const enough = arm.calls >= minCalls && control.calls >= minCalls;
      if (!enough)
        return {
          version: arm.version,
          control_version: controlVersion,
          enough_calls: false,
          success_rate: null,
          margin_per_call: null,
          verdict: "not_enough_calls" as const,
        };
      const success = twoProportionZ(control.successes, control.calls, arm.successes, arm.calls);
      const margin = welchT(sample(controlVersion), sample(arm.version));
      const decided =
        margin && margin.p_value < SIGNIFICANCE
          ? margin.difference
          : success && success.p_value < SIGNIFICANCE
            ? success.difference
            : 0;
      return {
        version: arm.version,
        control_version: controlVersion,
        enough_calls: true,
        success_rate: success,
        margin_per_call: margin && { ...margin, statistic: clampFinite(margin.statistic) },
        verdict:
          decided > 0
            ? ("better" as const)
            : decided < 0
              ? ("worse" as const)
              : ("no_difference_yet" as const),
      };
    });
}

function clampFinite(value: number): number {
  return Math.max(-1e12, Math.min(1e12, value));
}

/** The figures rules and the screen judge an experiment by. */
export async function experimentFigures(db: Database, experiment: ExperimentRow) {
  const rows = await armRows(db, experiment);
  const arms = armStatsOf(experiment, rows);
  return { arms, comparisons: compareArms(experiment, arms, rows) };
}

/** Buckets of about 1/48 of the experiment's time so far, at least a minute. */
function bucketSecondsOf(experiment: ExperimentRow): number {
  const end = experiment.endedAt?.getTime() ?? Date.now();
  const span = Math.max(0, end - experiment.startedAt.getTime()) / 1000;
  const steps = [60, 300, 900, 3600, 3 * 3600, 6 * 3600, 86_400];
  return steps.find((step) => span / step <= 48) ?? 86_400;
}

async function seriesOf(db: Database, experiment: ExperimentRow, bucket: number): Promise<ArmSeriesPoint[]> {
  const rows = await queryRows<{
    at: string;
    version: number;
    calls: number;
    successes: number;
    p50: number | null;
    charged_cents: string;
    model_cost: string;
    margin: string;
  }>(
    db,
    sql`select to_char(to_timestamp(floor(extract(epoch from created_at) / ${bucket}) * ${bucket}) at time zone 'UTC',
                       'YYYY-MM-DD"T"HH24:MI:SS"Z"') as at,
               app_version as version, count(*)::int as calls,
               (count(*) filter (where status = 'success'))::int as successes,
               percentile_cont(0.5) within group (order by latency_ms)::float8 as p50,
               sum(charged_cents)::text as charged_cents, sum(model_cost_micros)::text as model_cost,
               sum(charged_cents * ${MICROS_PER_CENT} - fee_micros - model_cost_micros)::text as margin
        from invocations
        where experiment_id = ${experiment.id} and created_at >= ${experiment.startedAt}
            and purpose not in ('eval', 'online_eval')
        group by 1, 2 order by 1, 2`,
  );
  return rows.map((row) => ({
    at: row.at,
    version: row.version,
    calls: row.calls,
    success_rate: row.calls > 0 ? row.successes / row.calls : null,
    latency_p50_ms: row.p50,
    revenue_micros: Number(row.charged_cents) * MICROS_PER_CENT,
    model_cost_micros: Number(row.model_cost),
    margin_micros: Number(row.margin),
  }));
}

export async function experimentDetail(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
  experimentId: string,
): Promise<ExperimentDetail> {
  const { experiment, subject } = await ownExperiment(db, owner, kind, subjectId, experimentId);
  const [fresh] = await db
    .select({ experiment: experiments, by: authorName })
    .from(experiments)
    .leftJoin(users, eq(users.id, experiments.startedBy))
    .where(eq(experiments.id, experiment.id));
  const row = fresh?.experiment ?? experiment;
  const figures = await experimentFigures(db, row);
  const bucket = bucketSecondsOf(row);
  // Each arm's online eval score beside its money (decision 076).
  const scores = await onlineScoresOfExperiment(db, row.id);
  return {
    experiment: toExperiment(row, fresh?.by ?? null, subject),
    ...figures,
    arms: figures.arms.map((arm) => ({
      ...arm,
      online_score: scores.get(arm.version)?.mean ?? null,
      online_scored_calls: scores.get(arm.version)?.scored ?? 0,
    })),
    series: await seriesOf(db, row, bucket),
    bucket_seconds: bucket,
    model_cost_note: subject.kind === "workflow" ? WORKFLOW_COST_NOTE : null,
  };
}
