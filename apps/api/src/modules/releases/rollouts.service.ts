import type { Experiment, RolloutBounds, StartRollout, StopRollout } from "@promptmint/contracts";
import { and, eq, isNotNull, sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import {
  type ApplicationRow,
  applications,
  experiments,
  type RolloutState,
  users,
} from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { type ExperimentKind, ownSubject } from "./experiment-subjects.ts";
import { endExperiment, startExperiment, toExperiment } from "./experiments.service.ts";
import { productionOf } from "./labels.ts";
import { authorName, lockApp } from "./versions.ts";

/**
 * Guarded rollouts (docs/decisions/077): a candidate version's share of an app's unpinned callers
 * raised step by step (5% → 25% → 100% by default) while it stays within its bounds, rolled back by
 * itself when it breaches one. A rollout IS an experiment row (arms [production, candidate], the
 * candidate last so a growing share keeps everyone already on it: armOf is cumulative over sticky
 * buckets) with a schedule in its `rollout` column: serving, caching and figures treat it as any
 * experiment. Every change of a running rollout happens under the app's subject row lock and the
 * experiment's row lock, re-read inside them, so two processes never take one step twice.
 */

type ExperimentRow = typeof experiments.$inferSelect;

/** How often the stepper looks at running rollouts (app.ts). */
export const ROLLOUT_STEPPER_INTERVAL_MS = 30_000;

/**
 * The candidate's online eval score since a moment: `onlineEvalScoreOf` (online-evals.ts)
 * (releases/online-evals.ts) once merged; by default "no scores", which never breaches.
 */
export type OnlineScore = (
  db: Database,
  applicationId: string,
  version: number,
  since: Date,
) => Promise<{ scored: number; mean: number | null }>;

export const noOnlineScores: OnlineScore = async () => ({ scored: 0, mean: null });

export interface StepperOptions {
  feePercent: number;
  /** The clock that says when a step is due (tests inject one). */
  now?: () => Date;
  onlineScore?: OnlineScore;
}

const percentText = (rate: number) => `${(rate * 100).toFixed(1)}%`;

/** The arms of a step: production keeps the rest, the candidate LAST (see the module's comment). */
export function rolloutArms(from: number, to: number, percent: number) {
  return [
    { version: from, percent: 100 - percent },
    { version: to, percent },
  ];
}

async function databaseNow(db: Database): Promise<Date> {
  const [row] = await queryRows<{ now: string | Date }>(db, sql`select now() as now`);
  return new Date(row?.now ?? Date.now());
}

/** An experiment's field named as the rollout's request names it. */
function rolloutField(field: string): string {
  return /^arms\.\d+\.version$/.test(field) ? "version" : field === "arms" ? "steps" : field;
}

/**
 * Starts a rollout: the candidate gets `steps[0]`% of production's unpinned callers. Refused as an
 * experiment start is (another experiment running: 409; an unknown version, the price guard, the
 * eval gate: by field), and also when the app has no production version or the candidate is it.
 */
export async function startRollout(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
  input: StartRollout,
  { feePercent, now = () => new Date() }: { feePercent: number; now?: () => Date },
): Promise<Experiment> {
  const subject = await ownSubject(db, owner, kind, subjectId);
  const steps = input.steps ?? [5, 25, 100];
  const stepMinutes = input.step_minutes ?? 60;
  const bounds: RolloutBounds = { ...input.bounds, min_calls: input.bounds.min_calls ?? 20 };
  if (steps.length < 2)
    throw invalidFields({
      steps: "needs a step below 100 before the last (a single step of 100 is a promotion: move production)",
    });
  const production = (await productionOf(db, subject.app.id))?.version ?? null;
  if (production === null)
    throw new AppError("conflict", "This app has no production version to roll out from: release one first");
  if (production === input.version)
    throw invalidFields({ version: `v${input.version} is already production: roll out another version` });

  const first = steps[0] as number;
  let started: Experiment;
  try {
    started = await startExperiment(
      db,
      owner,
      kind,
      subjectId,
      // The rules of a plain experiment stay off: the rollout's bounds judge the candidate.
      { arms: rolloutArms(production, input.version, first), rules: { min_calls: 100 } },
      { feePercent },
    );
  } catch (error) {
    if (!(error instanceof AppError) || !error.fields) throw error;
    // Said as the rollout's request names things: `version`, not an experiment's arm.
    const say = (text: string) =>
      text.replace(/arms\.\d+\.version/g, "version").replace(/\bArm v(\d+)/g, "v$1");
    const fields = Object.fromEntries(
      Object.entries(error.fields).map(([field, problem]) => [rolloutField(field), say(problem)]),
    );
    throw new AppError(error.code, say(error.message), { fields });
  }
  const at = now();
  const stepStartedAt = await databaseNow(db);
  const state: RolloutState = {
    status: "running",
    from_version: production,
    to_version: input.version,
    steps,
    step_index: 0,
    percent: first,
    step_minutes: stepMinutes,
    step_started_at: stepStartedAt.toISOString(),
    next_step_at: new Date(at.getTime() + stepMinutes * 60_000).toISOString(),
    bounds,
    history: [
      {
        at: at.toISOString(),
        percent: first,
        action: "start",
        reason:
          input.reason || `Rollout of v${input.version} started at ${first}% (production v${production})`,
      },
    ],
  };
  const [row] = await db
    .update(experiments)
    .set({ rollout: state })
    .where(and(eq(experiments.id, started.id), eq(experiments.status, "running")))
    .returning();
  forgetLookups(db, "prompts");
  if (!row) throw new AppError("conflict", "The rollout's experiment ended as it started");
  return toExperiment(row, owner.displayName || owner.username || null, subject);
}

/** The app's running rollout (404 when none), as its owner sees it. */
async function ownRunningRollout(db: Database, owner: LocalUser, kind: ExperimentKind, subjectId: string) {
  const subject = await ownSubject(db, owner, kind, subjectId);
  const [row] = await db
    .select()
    .from(experiments)
    .where(
      and(
        eq(experiments.applicationId, subject.app.id),
        eq(experiments.status, "running"),
        isNotNull(experiments.rollout),
      ),
    )
    .limit(1);
  if (!row) throw notFound("Running rollout");
  return { subject, experiment: row };
}

/** The creator stops their running rollout: the experiment ends, production back to `from_version`. */
export async function stopRollout(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
  input: StopRollout,
  { feePercent, now = () => new Date() }: { feePercent: number; now?: () => Date },
): Promise<Experiment> {
  const { subject, experiment } = await ownRunningRollout(db, owner, kind, subjectId);
  const ended = await underLocks(db, subject.app, experiment.id, async (t, locked, rollout) => {
    const reason =
      input.reason ||
      `Rollout stopped by the creator at ${rollout.percent}%: production back to v${rollout.from_version}`;
    return finish(t, subject.app, locked, rollout, "stop", reason, owner.id, { feePercent, now });
  });
  if (!ended) throw new AppError("conflict", "This rollout has already ended");
  const [by] = await db
    .select({ name: authorName })
    .from(users)
    .where(eq(users.id, ended.startedBy ?? ""));
  return toExperiment(ended, by?.name ?? null, subject);
}

/**
 * The creator takes the next step now rather than at its time (Argo Rollouts' "promote"): the
 * stepper's own look at the rollout with the step's time taken as up. The same bounds judge it: a
 * breach rolls back, too few candidate calls is a 409 saying how many more it needs.
 */
export async function advanceRollout(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  subjectId: string,
  { feePercent, onlineScore }: { feePercent: number; onlineScore?: OnlineScore },
): Promise<Experiment> {
  const { subject, experiment } = await ownRunningRollout(db, owner, kind, subjectId);
  const due = experiment.rollout?.next_step_at ? new Date(experiment.rollout.next_step_at).getTime() : 0;
  const now = () => new Date(Math.max(Date.now(), due));
  const outcome = await stepRollout(db, subject.app, experiment.id, { feePercent, onlineScore, now });
  const [row] = await db.select().from(experiments).where(eq(experiments.id, experiment.id));
  if (!row) throw notFound("Running rollout");
  if (outcome === "held") {
    const rollout = row.rollout;
    const last = rollout?.history[rollout.history.length - 1];
    throw new AppError(
      "conflict",
      `${last?.reason ?? "Too few candidate calls in this step"}: the next step needs ${rollout?.bounds.min_calls ?? 0} calls on v${rollout?.to_version ?? ""} first`,
    );
  }
  if (outcome === "gone") throw new AppError("conflict", "This rollout has already ended");
  const [by] = await db
    .select({ name: authorName })
    .from(users)
    .where(eq(users.id, row.startedBy ?? ""));
  return toExperiment(row, by?.name ?? null, subject);
}

/**
 * Runs `work` on a running rollout under the subject's row lock then the experiment's (the order
 * label moves and experiment ends take them), with the row re-read inside: null when it has ended
 * meanwhile. Then this process forgets its cached split (other processes hear the trigger): a tx
 * handle's forgetLookups inside would not reach this process's cache.
 */
async function underLocks(
  db: Database,
  app: ApplicationRow,
  experimentId: string,
  work: (t: Database, row: ExperimentRow, rollout: RolloutState) => Promise<ExperimentRow | null>,
): Promise<ExperimentRow | null> {
  const result = await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await lockApp(t, app.id);
    const [row] = await t.select().from(experiments).where(eq(experiments.id, experimentId)).for("update");
    if (row?.status !== "running" || row.rollout?.status !== "running") return null;
    return work(t, row, row.rollout);
  });
  forgetLookups(db, "prompts", "applications");
  return result;
}

/**
 * Ends a rollout in the caller's transaction: its state first (the history entry and its event),
 * then the experiment through endExperiment (the one release gate and the label move's audit row):
 * `complete` promotes the candidate (a promotion the price guard or eval gate refuses rolls back
 * instead, saying why); `rollback` and `stop` return production to `from_version`.
 */
async function finish(
  t: Database,
  app: ApplicationRow,
  row: ExperimentRow,
  rollout: RolloutState,
  action: "complete" | "rollback" | "stop",
  reason: string,
  actorId: string | null,
  { feePercent, now = () => new Date() }: { feePercent: number; now?: () => Date },
): Promise<ExperimentRow> {
  const at = now().toISOString();
  const write = async (tx: Database, state: RolloutState) =>
    tx.update(experiments).set({ rollout: state }).where(eq(experiments.id, row.id));
  if (action === "complete") {
    try {
      // In a savepoint: a refused promotion leaves no "complete" entry (nor its event) behind.
      return await t.transaction(async (inner) => {
        const tx = inner as unknown as Database;
        await write(tx, {
          ...rollout,
          status: "completed",
          percent: 100,
          step_index: rollout.steps.length - 1,
          next_step_at: null,
          history: [...rollout.history, { at, percent: 100, action: "complete", reason }],
        });
        return endExperiment(
          tx,
          app,
          row,
          { outcome: "promoted", version: rollout.to_version, reason, actorId },
          { feePercent },
        );
      });
    } catch (error) {
      if (!(error instanceof AppError) || error.code === "conflict") throw error;
      return finish(t, app, row, rollout, "rollback", `${reason}; not promoted: ${error.message}`, actorId, {
        feePercent,
        now,
      });
    }
  }
  await write(t, {
    ...rollout,
    status: action === "stop" ? "stopped" : "rolled_back",
    percent: 0,
    next_step_at: null,
    history: [...rollout.history, { at, percent: 0, action, reason }],
  });
  return endExperiment(t, app, row, { outcome: "rolled_back", reason, actorId }, { feePercent });
}

/** The candidate's calls in the current step, the figures its bounds judge. */
export interface CandidateFigures {
  calls: number;
  errors: number;
  p95: number | null;
  marginPerCall: number | null;
}

async function candidateFigures(db: Database, row: ExperimentRow, rollout: RolloutState) {
  const [figures] = await queryRows<{
    calls: number;
    errors: number;
    p95: number | null;
    margin: number | null;
  }>(
    db,
    sql`select count(*)::int as calls,
               (count(*) filter (where status <> 'success'))::int as errors,
               percentile_cont(0.95) within group (order by latency_ms)::float8 as p95,
               avg(charged_cents * 10000 - fee_micros - model_cost_micros)::float8 as margin
        from invocations
        where experiment_id = ${row.id} and app_version = ${rollout.to_version} and purpose = 'customer'
          and created_at >= ${new Date(rollout.step_started_at)}`,
  );
  return {
    calls: figures?.calls ?? 0,
    errors: figures?.errors ?? 0,
    p95: figures?.p95 ?? null,
    marginPerCall: figures?.margin ?? null,
  };
}

/** The first bound the candidate breaches in this step (named), or null. A pure function. */
export function breachOf(
  bounds: RolloutBounds,
  version: number,
  figures: CandidateFigures,
  score: { scored: number; mean: number | null },
): string | null {
  if (figures.calls < bounds.min_calls) return null;
  const after = `after ${figures.calls} calls in this step`;
  const errorRate = figures.errors / figures.calls;
  if (bounds.max_error_rate !== undefined && errorRate > bounds.max_error_rate)
    return `v${version}'s error rate ${percentText(errorRate)} is above ${percentText(bounds.max_error_rate)} ${after}`;
  if (
    bounds.max_latency_p95_ms !== undefined &&
    figures.p95 !== null &&
    figures.p95 > bounds.max_latency_p95_ms
  )
    return `v${version}'s p95 latency ${Math.round(figures.p95)} ms is above ${bounds.max_latency_p95_ms} ms ${after}`;
  if (
    bounds.min_margin_micros !== undefined &&
    figures.marginPerCall !== null &&
    figures.marginPerCall < bounds.min_margin_micros
  )
    return `v${version}'s margin per call ${Math.round(figures.marginPerCall)} µ$ is below ${bounds.min_margin_micros} µ$ ${after}`;
  if (bounds.min_online_score !== undefined && score.mean !== null && score.mean < bounds.min_online_score)
    return `v${version}'s online eval score ${score.mean.toFixed(2)} (${score.scored} scored calls) is below ${bounds.min_online_score} ${after}`;
  return null;
}

export type StepOutcome = "advanced" | "held" | "rolled_back" | "completed" | "waiting" | "gone";

/**
 * One look at one running rollout, under its locks: a breached bound (after `min_calls` candidate
 * calls in this step) rolls back at once; a step whose time is up advances when it has its calls
 * (the last advance, to 100%, promotes the candidate and completes), else holds until it has them.
 */
export async function stepRollout(
  db: Database,
  app: ApplicationRow,
  experimentId: string,
  options: StepperOptions,
): Promise<StepOutcome> {
  const now = options.now ?? (() => new Date());
  const onlineScore = options.onlineScore ?? noOnlineScores;
  let outcome: StepOutcome = "gone";
  await underLocks(db, app, experimentId, async (t, row, rollout) => {
    const figures = await candidateFigures(t, row, rollout);
    const score =
      rollout.bounds.min_online_score === undefined
        ? { scored: 0, mean: null }
        : await onlineScore(t, app.id, rollout.to_version, new Date(rollout.step_started_at));
    const breach = breachOf(rollout.bounds, rollout.to_version, figures, score);
    if (breach) {
      outcome = "rolled_back";
      return finish(
        t,
        app,
        row,
        rollout,
        "rollback",
        `Rollout rolled back at ${rollout.percent}%: ${breach}`,
        null,
        { ...options, now },
      );
    }
    const at = now();
    if (!rollout.next_step_at || at.getTime() < new Date(rollout.next_step_at).getTime()) {
      outcome = "waiting";
      return row;
    }
    if (figures.calls < rollout.bounds.min_calls) {
      outcome = "held";
      const last = rollout.history[rollout.history.length - 1];
      // One hold entry per step: the next tick looks again.
      if (last?.action === "hold" && last.percent === rollout.percent) return row;
      const state: RolloutState = {
        ...rollout,
        history: [
          ...rollout.history,
          {
            at: at.toISOString(),
            percent: rollout.percent,
            action: "hold",
            reason: `Held at ${rollout.percent}%: ${figures.calls} of ${rollout.bounds.min_calls} candidate calls in this step`,
          },
        ],
      };
      await t.update(experiments).set({ rollout: state }).where(eq(experiments.id, row.id));
      return row;
    }
    const nextIndex = rollout.step_index + 1;
    const next = rollout.steps[nextIndex] ?? 100;
    const within = `within its bounds after ${figures.calls} calls at ${rollout.percent}%`;
    if (next >= 100) {
      outcome = "completed";
      return finish(
        t,
        app,
        row,
        rollout,
        "complete",
        `Rollout completed: v${rollout.to_version} promoted to production, ${within}`,
        null,
        { ...options, now },
      );
    }
    outcome = "advanced";
    const stepStartedAt = await databaseNow(t);
    const state: RolloutState = {
      ...rollout,
      step_index: nextIndex,
      percent: next,
      step_started_at: stepStartedAt.toISOString(),
      next_step_at: new Date(at.getTime() + rollout.step_minutes * 60_000).toISOString(),
      history: [
        ...rollout.history,
        {
          at: at.toISOString(),
          percent: next,
          action: "advance",
          reason: `Advanced to ${next}%: v${rollout.to_version} ${within}`,
        },
      ],
    };
    const [updated] = await t
      .update(experiments)
      .set({ rollout: state, arms: rolloutArms(rollout.from_version, rollout.to_version, next) })
      .where(eq(experiments.id, row.id))
      .returning();
    return updated ?? row;
  });
  return outcome;
}

/**
 * The stepper job (app.ts, every process): each running rollout looked at once. Answers what it
 * did to each (`waiting` and `gone` included: a rollout another process or the creator ended).
 */
export async function runRolloutSteps(db: Database, options: StepperOptions): Promise<StepOutcome[]> {
  const running = await db
    .select({ id: experiments.id, app: applications })
    .from(experiments)
    .innerJoin(applications, eq(applications.id, experiments.applicationId))
    .where(
      and(
        eq(experiments.status, "running"),
        isNotNull(experiments.rollout),
        sql`${experiments.rollout}->>'status' = 'running'`,
      ),
    );
  const outcomes: StepOutcome[] = [];
  for (const { id, app } of running) outcomes.push(await stepRollout(db, app, id, options));
  return outcomes;
}
