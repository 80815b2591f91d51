import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { runRolloutSteps } from "../../modules/releases/rollouts.service.ts";
import { type Attack, journalEvent, liveApps, viaAnyNode } from "./attack.ts";
import type { Prng } from "./prng.ts";

/**
 * Issue 41 part 4 in the money attack (docs/decisions/077): the creator starts guarded rollouts
 * with one-minute steps and random bounds, stops some, and the attack forces stepper ticks from
 * its own process (a third "process" racing both nodes' stepper jobs, with a clock ahead so steps
 * are due), while calls race. A rollout is an experiment, so judgeExperiments' checks hold for it;
 * judgeRollouts adds what a rollout must keep.
 */

const FEE = { feePercent: 10 };

/** Starts a rollout on a live prompt app, or stops or steps its running one. */
export async function rolloutStep(attack: Attack, prng: Prng, actor: number) {
  const app = prng.pick(liveApps(attack).filter((candidate) => candidate.kind === "prompt"));
  if (!app) return;
  await journalEvent(attack, actor, "experiment", async () => {
    const creator = viaAnyNode(attack, prng, attack.world.creator);
    const config = await creator.api("GET", `/api/app/${app.slug}/prompt/`);
    if (config.status !== 200)
      return { status: config.status, detail: { app: app.label, action: "rollout" } };
    const promptId = config.body.id as string;
    let latest = config.body.current_version as number;
    const production = config.body.production_version as number;
    const list = await creator.api("GET", `/api/prompts/${promptId}/experiments/`);
    const running = list.body?.running as { id: string; rollout: unknown } | null | undefined;
    if (running?.rollout) {
      if (prng.chance(0.3)) {
        const answer = await creator.api("POST", `/api/prompts/${promptId}/rollouts/current/stop`, {
          body: { reason: "money attack" },
        });
        // 404: it ended meanwhile (a breach, its last step, another actor).
        return {
          status: answer.status,
          detail: { app: app.label, action: "rollout_stop", experiment: running.id },
        };
      }
      const ahead = prng.int(0, 3) * 60_000;
      const outcomes = await runRolloutSteps(attack.cluster.database.db, {
        ...FEE,
        now: () => new Date(Date.now() + ahead),
      });
      return { status: 200, detail: { app: app.label, action: "rollout_tick", ahead, outcomes } };
    }
    if (running)
      return { status: 409, detail: { app: app.label, action: "rollout_start", blocked: running.id } };
    if (latest === production || prng.chance(0.3)) {
      const saved = await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
        body: { system_prompt: `You are rollout variant ${prng.int(1, 1_000_000)}.` },
      });
      if (saved.status === 200) latest = saved.body.current_version as number;
    }
    const first = prng.int(1, 60);
    const steps = prng.chance(0.5) ? [first, 100] : [first, prng.int(first + 1, 99), 100];
    const bounds: Record<string, number> = { min_calls: prng.int(1, 5) };
    if (prng.chance(0.6)) bounds.max_error_rate = prng.pick([0, 0.1, 0.5, 1]);
    if (prng.chance(0.4)) bounds.max_latency_p95_ms = prng.pick([50, 500, 5_000, 60_000]);
    if (prng.chance(0.4)) bounds.min_margin_micros = prng.pick([-1_000_000, 0, 100_000, 240_000]);
    if (prng.chance(0.2)) bounds.min_online_score = prng.pick([0, 0.5]);
    const answer = await creator.api("POST", `/api/prompts/${promptId}/rollouts`, {
      body: { version: latest, steps, step_minutes: 1, bounds },
    });
    // A 400 is a fair refusal (the price guard on an old model, the version already production);
    // a 409 another experiment that started first.
    const refusal = answer.status >= 400 ? { message: answer.body?.message } : {};
    return {
      status: answer.status,
      detail: { app: app.label, action: "rollout_start", version: latest, steps, bounds, ...refusal },
    };
  });
}

interface RolloutRow {
  id: string;
  application_id: string;
  status: string;
  outcome: string | null;
  winner_version: number | null;
  arms: { version: number; percent: number }[];
  rollout: {
    status: string;
    from_version: number;
    to_version: number;
    steps: number[];
    percent: number;
    history: { action: string; percent: number }[];
  };
}

const EVENT_OF: Record<string, string> = {
  start: "release.rollout.started",
  advance: "release.rollout.advanced",
  rollback: "release.rollout.rolled_back",
  complete: "release.rollout.completed",
  stop: "release.rollout.stopped",
};

/**
 * What rollouts must keep, after the attack: every call a rollout chose is its production or its
 * candidate (and none long after it ended); its state agrees with its experiment's (a running
 * rollout's arms are its current percent, an ended one says how it ended); no step was taken twice
 * (advances strictly increasing, each one of its steps); each history entry but a hold is exactly
 * one event, and no rollout event lacks its entry.
 */
export async function judgeRollouts(db: Database, flag: (kind: string, example: string) => void) {
  const strays = await queryRows<{ id: string; app_version: number; why: string }>(
    db,
    sql`select i.id, i.app_version,
               case when i.app_version not in ((e.rollout->>'from_version')::int, (e.rollout->>'to_version')::int)
                    then 'neither its production nor its candidate' else 'long after it ended' end as why
        from invocations i join experiments e on e.id = i.experiment_id
        where e.rollout is not null
          and (i.app_version not in ((e.rollout->>'from_version')::int, (e.rollout->>'to_version')::int)
               or (e.ended_at is not null and i.created_at > e.ended_at + interval '2 minutes'))
        limit 20`,
  );
  for (const row of strays) flag(`rollout call ${row.why}`, `${row.id} v${row.app_version}`);

  const rows = await queryRows<RolloutRow>(
    db,
    sql`select id, application_id, status, outcome, winner_version, arms, rollout
        from experiments where rollout is not null`,
  );
  const events = await queryRows<{ id: string; type: string }>(
    db,
    sql`select id, type from events where type like 'release.rollout.%'`,
  );
  const eventById = new Map(events.map((event) => [event.id, event.type]));
  const expected = new Set<string>();
  const byStatus: Record<string, number> = {};
  let steps = 0;
  for (const row of rows) {
    const { rollout } = row;
    byStatus[rollout.status] = (byStatus[rollout.status] ?? 0) + 1;
    const running = row.status === "running";
    if (running !== (rollout.status === "running"))
      flag("rollout state disagrees with its experiment", `${row.id}: ${row.status} / ${rollout.status}`);
    if (running) {
      const [from, to] = row.arms;
      if (
        row.arms.length !== 2 ||
        from?.version !== rollout.from_version ||
        to?.version !== rollout.to_version ||
        to?.percent !== rollout.percent ||
        from?.percent !== 100 - rollout.percent
      )
        flag(
          "running rollout's arms are not its percent",
          `${row.id}: ${JSON.stringify(row.arms)} at ${rollout.percent}%`,
        );
    }
    if (
      rollout.status === "completed" &&
      !(row.outcome === "promoted" && row.winner_version === rollout.to_version)
    )
      flag(
        "completed rollout did not promote its candidate",
        `${row.id}: ${row.outcome} v${row.winner_version}`,
      );
    if (
      (rollout.status === "rolled_back" || rollout.status === "stopped") &&
      row.outcome === "promoted" &&
      row.winner_version === rollout.to_version
    )
      flag("rolled-back rollout promoted its candidate", row.id);
    let last = 0;
    rollout.history.forEach((entry, i) => {
      if (entry.action === "advance") {
        steps += 1;
        if (entry.percent <= last || !rollout.steps.includes(entry.percent))
          flag("rollout step taken twice or out of its steps", `${row.id}: ${entry.percent}% after ${last}%`);
      }
      if (entry.action === "start" || entry.action === "advance") last = entry.percent;
      const type = EVENT_OF[entry.action];
      if (!type) return;
      const id = `rollout_${row.id}_${i}`;
      expected.add(id);
      if (eventById.get(id) !== type)
        flag(
          "rollout history entry without its event",
          `${id}: ${entry.action} → ${eventById.get(id) ?? "none"}`,
        );
    });
  }
  for (const event of events)
    if (!expected.has(event.id)) flag("rollout event without its history entry", `${event.id} ${event.type}`);
  return { rollouts: rows.length, byStatus, steps, events: events.length };
}
