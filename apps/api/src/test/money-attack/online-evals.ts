import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { type Attack, journalEvent, liveApps, viaAnyNode } from "./attack.ts";
import type { Prng } from "./prng.ts";

/**
 * Online evals in the money attack (docs/decisions/076): the creator turns online evals on and off
 * on random live prompt apps, with small daily caps and a rubric among the assertions, while calls
 * race; every node's job judges the sampled calls. judgeOnlineEvals adds what must hold: no judge
 * call charged anyone but the app's creator (never a consumer, never a price), no app's online
 * evals spent more in a UTC day than its cap, and every row's cost is what its judges' holds took
 * from the creator's wallet (the reconcile's `onlineEvalMismatches` and `onlineEvalDaysOverCap`
 * check the last two too: their rows fail the run as every reconcile list does).
 */
export async function onlineEvalStep(attack: Attack, prng: Prng, actor: number) {
  const app = prng.pick(liveApps(attack).filter((candidate) => candidate.kind === "prompt"));
  if (!app) return;
  await journalEvent(attack, actor, "online_evals", async () => {
    const creator = viaAnyNode(attack, prng, attack.world.creator);
    const config = await creator.api("GET", `/api/app/${app.slug}/prompt/`);
    if (config.status !== 200) return { status: config.status, detail: { app: app.label } };
    const enabled = prng.chance(0.7);
    const capCents = prng.pick([0, 1, 2, 3, 5]);
    const samplePercent = prng.pick([5, 25, 50, 100]);
    const answer = await creator.api("PUT", `/api/prompts/${config.body.id}/online-evals`, {
      body: {
        enabled,
        sample_percent: samplePercent,
        assertions: [
          { kind: "rubric", rubric: `mentions "${prng.pick(["the", "a", "money"])}"` },
          { kind: "max_latency", max_latency_ms: 60_000 },
        ],
        daily_cap_cents: capCents,
      },
    });
    return { status: answer.status, detail: { app: app.label, enabled, capCents, samplePercent } };
  });
}

/** What online evals must keep, after the attack: each violation named with an example. */
export async function judgeOnlineEvals(db: Database, flag: (kind: string, example: string) => void) {
  // A judge call is the creator's own call: no price, its model cost held from the creator's wallet.
  const strangers = await queryRows<{ id: string; why: string }>(
    db,
    sql`select i.id::text as id,
               case when i.caller_user_id <> a.owner_id then 'made by someone other than the creator'
                    else 'charged a price' end as why
        from online_eval_results r
        join applications a on a.id = r.application_id
        join invocations i on i.id = any(r.judge_invocation_ids)
        where i.caller_user_id <> a.owner_id or i.charged_cents <> 0 or i.hold_id is not null
        limit 20`,
  );
  for (const row of strangers) flag(`online eval judge ${row.why}`, row.id);
  const foreignHolds = await queryRows<{ id: string }>(
    db,
    sql`select h.id::text as id from online_eval_results r
        join applications a on a.id = r.application_id
        join model_cost_holds h on h.id = any(r.judge_invocation_ids)
        where h.creator_id <> a.owner_id limit 20`,
  );
  for (const row of foreignHolds) flag("online eval judge held from another wallet", row.id);
  const overCap = await queryRows<{ application_id: string; day: string; spent: string; cap: string }>(
    db,
    sql`select r.application_id::text as application_id, r.cap_day::text as day,
               sum(r.cost_micros)::text as spent, coalesce(max(d.cap_micros), 0)::text as cap
        from online_eval_results r
        left join online_eval_days d on d.application_id = r.application_id and d.day = r.cap_day
        where r.cap_day is not null group by r.application_id, r.cap_day
        having sum(r.cost_micros) > coalesce(max(d.cap_micros), 0)`,
  );
  for (const row of overCap)
    flag(
      "online evals spent past the daily cap",
      `${row.application_id} ${row.day}: ${row.spent} > ${row.cap}`,
    );
  // A sampled call is a customer's: never the owner's own call.
  const ownerSampled = await queryRows<{ id: string }>(
    db,
    sql`select r.invocation_id::text as id from online_eval_results r
        join applications a on a.id = r.application_id
        join invocations i on i.id = r.invocation_id
        where i.caller_user_id = a.owner_id limit 20`,
  );
  for (const row of ownerSampled) flag("online eval sampled the owner's own call", row.id);
  const [figures] = await queryRows<{
    rows: number;
    done: number;
    capped: number;
    funds: number;
    failed: number;
    open: number;
    judges: number;
    cost: string;
  }>(
    db,
    sql`select count(*)::int as rows, (count(*) filter (where status = 'done'))::int as done,
               (count(*) filter (where status = 'skipped_cap'))::int as capped,
               (count(*) filter (where status = 'skipped_funds'))::int as funds,
               (count(*) filter (where status = 'failed'))::int as failed,
               (count(*) filter (where status in ('pending', 'running')))::int as open,
               coalesce(sum(cardinality(judge_invocation_ids)), 0)::int as judges,
               coalesce(sum(cost_micros), 0)::text as cost
        from online_eval_results`,
  );
  return figures;
}
