import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { experiments } from "../../db/schema/index.ts";
import { experimentFigures } from "../../modules/releases/experiments.service.ts";
import { type Attack, journalEvent, liveApps, viaAnyNode } from "./attack.ts";
import type { Prng } from "./prng.ts";

/**
 * Issue 31 in the money attack (docs/decisions/058): the creator saves new versions, starts and
 * ends experiments (stop, promote an arm, roll back) and moves `production` while calls race.
 * A call is priced by its app, never by its version, so the judge's charge checks hold as they
 * are; judgeExperiments adds what experiments must keep: every call an experiment chose is one of
 * its arms, inside its window, of its app, and its arms' figures sum exactly to its calls'.
 */

/** The app's prompt id and its version numbers (a new one saved when it has fewer than two). */
async function versionsOf(attack: Attack, prng: Prng, slug: string) {
  const creator = viaAnyNode(attack, prng, attack.world.creator);
  const config = await creator.api("GET", `/api/app/${slug}/prompt/`);
  if (config.status !== 200) return undefined;
  const promptId = config.body.id as string;
  let latest = config.body.current_version as number;
  if (latest < 2 || prng.chance(0.3)) {
    const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { system_prompt: `You are variant ${prng.int(1, 1_000_000)}.` },
    });
    if (saved.status === 200) latest = saved.body.current_version as number;
  }
  return { promptId, latest, production: config.body.production_version as number };
}

/** Starts an experiment on a live prompt app, or ends its running one (stop, promote, roll back). */
export async function experimentStep(attack: Attack, prng: Prng, actor: number) {
  const app = prng.pick(liveApps(attack).filter((candidate) => candidate.kind === "prompt"));
  if (!app) return;
  await journalEvent(attack, actor, "experiment", async () => {
    const found = await versionsOf(attack, prng, app.slug);
    if (!found) return { status: 404, detail: { app: app.label } };
    const creator = viaAnyNode(attack, prng, attack.world.creator);
    const base = `/api/prompts/${found.promptId}/experiments/`;
    const list = await creator.api("GET", base);
    const running = list.body?.running as { id: string; arms: { version: number }[] } | null | undefined;
    if (!running) {
      const other = found.latest === found.production ? found.latest - 1 : found.latest;
      const percent = prng.int(1, 99);
      const answer = await creator.api("POST", base, {
        body: {
          arms: [
            { version: found.production, percent },
            { version: other, percent: 100 - percent },
          ],
          sticky_by: prng.pick([null, "end_user", "key", "account"]),
          rules: { min_calls: 10, max_error_rate: 0.9, promote_winner_after_calls: 20 },
        },
      });
      // A 400 is a fair refusal (the price guard judging an old version's model): its message is kept.
      const refusal = answer.status >= 400 ? { message: answer.body?.message } : {};
      return {
        status: answer.status,
        detail: { app: app.label, action: "start", percent, other, ...refusal },
      };
    }
    const how = prng.pick(["stop", "promote", "rollback"] as const);
    const arm = prng.pick(running.arms).version;
    const answer = await creator.api(
      "POST",
      `${base}${running.id}/${how}`,
      how === "promote" ? { body: { version: arm } } : {},
    );
    // 409: a rule, a second actor or another step ended it first.
    return { status: answer.status, detail: { app: app.label, action: how, experiment: running.id, arm } };
  });
}

/** The creator moves `production` to another version of a live prompt app (an audited release). */
export async function moveProduction(attack: Attack, prng: Prng, actor: number) {
  const app = prng.pick(liveApps(attack).filter((candidate) => candidate.kind === "prompt"));
  if (!app) return;
  await journalEvent(attack, actor, "label_move", async () => {
    const found = await versionsOf(attack, prng, app.slug);
    if (!found) return { status: 404, detail: { app: app.label } };
    const version = prng.int(1, found.latest);
    const answer = await viaAnyNode(attack, prng, attack.world.creator).api(
      "PUT",
      `/api/prompts/${found.promptId}/labels/production`,
      { body: { version, reason: "money attack" } },
    );
    return { status: answer.status, detail: { app: app.label, version } };
  });
}

/** What experiments must keep, after the attack: each violation named with an example. */
export async function judgeExperiments(db: Database, flag: (kind: string, example: string) => void) {
  const strays = await queryRows<{ id: string; app_version: number | null; why: string }>(
    db,
    sql`select i.id, i.app_version,
               case when e.id is null then 'no such experiment'
                    when e.application_id <> i.application_id then 'another app''s experiment'
                    when i.created_at < e.started_at then 'before its experiment started'
                    when not exists (select 1 from jsonb_array_elements(e.arms) arm
                                     where (arm->>'version')::int = i.app_version) then 'not one of its arms'
               end as why
        from invocations i left join experiments e on e.id = i.experiment_id
        where i.experiment_id is not null
          and (e.id is null or e.application_id <> i.application_id or i.created_at < e.started_at
               or not exists (select 1 from jsonb_array_elements(e.arms) arm
                              where (arm->>'version')::int = i.app_version))
        limit 20`,
  );
  for (const row of strays) flag(`experiment call ${row.why}`, `${row.id} v${row.app_version}`);
  const running = await queryRows<{ application_id: string; n: number }>(
    db,
    sql`select application_id, count(*)::int as n from experiments where status = 'running' group by application_id having count(*) > 1`,
  );
  for (const row of running) flag("two running experiments", `${row.application_id}: ${row.n}`);
  // Each experiment's arms sum exactly to its calls' charges, fees and model costs.
  const all = await db.select().from(experiments);
  let calls = 0;
  for (const experiment of all) {
    const { arms } = await experimentFigures(db, experiment);
    const [total] = await queryRows<{ calls: number; charged: string; fee: string; cost: string }>(
      db,
      sql`select count(*)::int as calls, coalesce(sum(charged_cents), 0)::text as charged,
                 coalesce(sum(fee_micros), 0)::text as fee, coalesce(sum(model_cost_micros), 0)::text as cost
          from invocations where experiment_id = ${experiment.id}`,
    );
    const sum = (pick: (arm: (typeof arms)[number]) => number) => arms.reduce((s, arm) => s + pick(arm), 0);
    calls += total?.calls ?? 0;
    if (
      sum((a) => a.calls) !== total?.calls ||
      sum((a) => a.revenue_micros) !== Number(total?.charged) * 10_000 ||
      sum((a) => a.fee_micros) !== Number(total?.fee) ||
      sum((a) => a.model_cost_micros) !== Number(total?.cost)
    )
      flag(
        "experiment arms do not sum to its calls",
        `${experiment.id}: arms ${JSON.stringify(arms.map((a) => [a.version, a.calls, a.revenue_micros]))} vs ${JSON.stringify(total)}`,
      );
  }
  return {
    experiments: all.length,
    ended: all.filter((e) => e.status === "ended").length,
    byOutcome: Object.fromEntries(
      ["stopped", "promoted", "rolled_back"].map((o) => [o, all.filter((e) => e.outcome === o).length]),
    ),
    ruleEnds: all.filter((e) => e.status === "ended" && e.endedBy === null).length,
    calls,
  };
}
