import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { callerAt } from "../caller.ts";
import { type Attack, journalEvent, liveApps, viaAnyNode } from "./attack.ts";
import { creatorTopUp } from "./creator-calls.ts";
import type { Prng } from "./prng.ts";

/**
 * Free trials and promotion codes in the money attack (docs/decisions/080). The creator offers a
 * trial of a few calls on a random live app, and one consumer starts it on both processes at once
 * (now and then after saving the test card, which every consumer saving it shares: one person by
 * card); the creator makes a code of few redemptions and consumers redeem it at once on both
 * processes, some twice. The consumers' ordinary calls then meet their grants. judgeSponsored
 * says what must hold: no trial taken twice by one person (account or card), no code past its
 * limit, every sponsored call paid from its creator's hold and charged 0 to its consumer.
 */

const CARD = { number: "4242 4242 4242 4242", exp_month: 12, exp_year: 2099, cvc: "123" };
const ADDRESS = { name: "Attack", line1: "1 Row", city: "London", postal_code: "N1", country: "GB" };

/**
 * The consumers who take trials and codes: all but the first, whose calls are never sponsored, so
 * that its spend-limited key still meets its limit often (limitedKeyCall favours it): a sponsored
 * call spends nothing of the caller's key.
 */
export function sponsorableConsumers(attack: Attack) {
  return attack.world.consumers.slice(1);
}

export async function trialStep(attack: Attack, prng: Prng, actor: number) {
  const app = prng.pick(liveApps(attack));
  if (!app) return;
  const consumer = prng.pick(sponsorableConsumers(attack));
  const calls = prng.int(1, 3);
  // The creator's wallet starts empty: sponsored calls it cannot pay fall back to their callers.
  if (prng.chance(0.6)) await creatorTopUp(attack, prng, actor);
  await journalEvent(attack, actor, "trial", async () => {
    const offered = await viaAnyNode(attack, prng, attack.world.creator).api(
      "PUT",
      `/api/app/${app.slug}/trial/`,
      {
        body: { trial_calls: calls },
      },
    );
    if (offered.status !== 200) return { status: offered.status, detail: { app: app.label, step: "offer" } };
    if (prng.chance(0.4))
      await viaAnyNode(attack, prng, consumer).api("POST", `/api/app/${app.slug}/payment-methods/`, {
        body: { card: CARD, billing_address: ADDRESS },
      });
    // The same person twice at once, one request per process.
    const starts = await Promise.all(
      attack.cluster.nodes.map((node) =>
        callerAt(node.baseUrl, consumer.caller).api("POST", `/api/app/${app.slug}/trial/`),
      ),
    );
    const statuses = starts.map((start) => start.status);
    return {
      status: statuses.includes(201) ? 201 : (statuses[0] ?? 0),
      detail: { app: app.label, consumer: consumer.name, calls, statuses },
    };
  });
}

let codes = 0;

export async function promotionStep(attack: Attack, prng: Prng, actor: number) {
  const app = prng.chance(0.5) ? prng.pick(liveApps(attack)) : undefined;
  codes += 1;
  const code = `ATTACK-${process.pid}-${codes}`;
  const max = prng.int(1, 3);
  if (prng.chance(0.6)) await creatorTopUp(attack, prng, actor);
  await journalEvent(attack, actor, "promotion", async () => {
    const percent = prng.chance(0.3);
    const created = await viaAnyNode(attack, prng, attack.world.creator).api(
      "POST",
      "/api/promotion-codes/",
      {
        body: {
          code,
          max_redemptions: max,
          ...(percent
            ? { kind: "percent", percent: prng.int(10, 50), cap_cents: prng.int(20, 200) }
            : { kind: "amount", amount_cents: prng.int(10, 120) }),
          ...(app ? { app: app.slug } : {}),
        },
      },
    );
    if (created.status !== 201) return { status: created.status, detail: { code, step: "create" } };
    // Every consumer, some twice, on both processes at once: at most `max` redemptions, one each.
    const tries = sponsorableConsumers(attack).flatMap((consumer) =>
      attack.cluster.nodes.slice(0, prng.chance(0.5) ? 2 : 1).map((node) =>
        callerAt(node.baseUrl, consumer.caller).api("POST", "/api/promotion-codes/redeem/", {
          body: { code },
        }),
      ),
    );
    const statuses = (await Promise.all(tries)).map((answer) => answer.status);
    return {
      status: 201,
      detail: {
        code,
        max,
        app: app?.label,
        redeemed: statuses.filter((status) => status === 201).length,
        statuses,
      },
    };
  });
}

/** What trials and promotion codes must keep, after the attack: each violation named with an example. */
export async function judgeSponsored(db: Database, flag: (kind: string, example: string) => void) {
  const twice = await queryRows<{ example: string }>(
    db,
    sql`select g.application_id::text || ' ' || g.consumer_id::text as example from sponsored_grants g
        where g.kind = 'trial' group by g.application_id, g.consumer_id having count(*) > 1 limit 20`,
  );
  for (const row of twice) flag("a trial taken twice by one account", row.example);
  // Two trials of one app by accounts sharing a card that both had saved before the later trial.
  const byCard = await queryRows<{ example: string }>(
    db,
    sql`select a.id::text || ' & ' || b.id::text as example
        from sponsored_grants a join sponsored_grants b
          on b.application_id = a.application_id and b.kind = 'trial' and b.created_at > a.created_at
        join payment_methods pa on pa.user_id = a.consumer_id and pa.fingerprint is not null
          and pa.created_at < b.created_at
        join payment_methods pb on pb.user_id = b.consumer_id and pb.fingerprint = pa.fingerprint
          and pb.created_at < b.created_at
        where a.kind = 'trial' and a.consumer_id <> b.consumer_id limit 20`,
  );
  for (const row of byCard) flag("a trial taken twice with one card", row.example);
  const pastLimit = await queryRows<{ example: string }>(
    db,
    sql`select c.code || ': ' || c.redemptions || ' counted, ' || count(g.id) || ' redeemed, max ' || c.max_redemptions as example
        from promotion_codes c left join sponsored_grants g on g.promotion_code_id = c.id
        group by c.id having count(g.id) > c.max_redemptions or count(g.id) <> c.redemptions
          or count(distinct g.consumer_id) <> count(g.id) limit 20`,
  );
  for (const row of pastLimit)
    flag("a promotion code redeemed past its limit or twice by one person", row.example);
  const mispaid = await queryRows<{ id: string; why: string }>(
    db,
    sql`select i.id::text as id,
               case when i.charged_cents <> 0 then 'charged its consumer'
                    when h.payer_id is distinct from g.creator_id then 'paid by someone other than its creator'
                    else 'not made by its consumer' end as why
        from sponsored_calls sc join sponsored_grants g on g.id = sc.grant_id
        join invocations i on i.id = sc.call_id
        left join holds h on h.id = i.hold_id
        where i.status = 'success' and i.hold_id is not null
          and (i.charged_cents <> 0 or h.payer_id is distinct from g.creator_id
               or i.caller_user_id is distinct from g.consumer_id)
        limit 20`,
  );
  for (const row of mispaid) flag(`a sponsored call ${row.why}`, row.id);
  const negative = await queryRows<{ id: string }>(
    db,
    sql`select id::text from sponsored_grants where calls_left < 0 or credit_left_micros < 0 limit 20`,
  );
  for (const row of negative) flag("a grant below zero", row.id);
  const [figures] = await queryRows<{
    trials: number;
    redemptions: number;
    codes: number;
    calls: number;
    open: number;
  }>(
    db,
    sql`select (select count(*)::int from sponsored_grants where kind = 'trial') as trials,
               (select count(*)::int from sponsored_grants where kind = 'promotion') as redemptions,
               (select count(*)::int from promotion_codes) as codes,
               (select count(*)::int from sponsored_calls where state = 'spent') as calls,
               (select count(*)::int from sponsored_calls where state = 'reserved') as open`,
  );
  return figures;
}
