import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { apiKeyReservations, includedCalls } from "../../db/schema/index.ts";
import { checkCalls } from "../../modules/billing/call-checks.ts";
import { sweepExpiredHolds } from "../../modules/billing/call-payment/holds.ts";
import { sweepExpiredIncludedCalls } from "../../modules/billing/call-payment/included-calls.ts";
import { sweepKeyReservations } from "../../modules/billing/call-payment/key-reservations.ts";
import { sweepExpiredModelCostHolds } from "../../modules/billing/call-payment/model-cost-holds.ts";
import { MICROS_PER_CENT } from "../../modules/billing/money.ts";
import { reconcile } from "../../modules/billing/reconcile.ts";
import { actions } from "./actions.ts";
import {
  agentFigures,
  createAgents,
  judgeAgents,
  loadAgentBooks,
  payerInvocationIds,
  stripeFaults,
  sweepMppAfterAttack,
} from "./agent-calls.ts";
import { type Attack, epochMs, Semaphore } from "./attack.ts";
import { SECRET_KEY, startCluster } from "./cluster.ts";
import { creatorCallViolations } from "./creator-calls.ts";
import { judgeEvents, startEventReceivers, subscribeEveryone } from "./events.ts";
import { judgeExperiments } from "./experiments.ts";
import { Journal } from "./journal.ts";
import {
  type InvocationRow,
  judge,
  type KeySpend,
  type PeriodTerms,
  type PlanPeriod,
  type Violation,
} from "./judge.ts";
import { judgeOnlineEvals } from "./online-evals.ts";
import { judgeOrganizations, organizationInvocationIds, prepareOrganization } from "./organizations.ts";
import { judgeModelCosts, judgeOversized } from "./oversized.ts";
import { Prng } from "./prng.ts";
import { type Figures, summarize } from "./report.ts";
import { judgeRollouts } from "./rollouts.ts";
import { judgeSponsored } from "./sponsored.ts";
import { suspensionWindows } from "./suspensions.ts";
import { createWorld, type World } from "./world.ts";
import { loadX402Payments, sweepAfterAttack, x402Cleared, x402TransfersAfterAttack } from "./x402-calls.ts";

export interface AttackOptions {
  seed: number;
  minutes: number;
  /** A PostgreSQL URL allowed to create databases (TEST_DATABASE_URL). */
  adminUrl: string;
  redisUrl: string;
  /** Where the JSONL journal goes (default: the temp directory). */
  journalFile?: string;
  /** Progress lines (default: none). */
  progress?: (line: string) => void;
}

export interface AttackResult {
  seed: number;
  violations: Violation[];
  figures: Figures;
  journalFile: string;
}

/** How many actors pick actions at once: with bursts, up to MAX_IN_FLIGHT calls. */
const ACTORS = 6;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The adversarial money test (issue 16): two real server processes on one PostgreSQL, a slow
 * and sometimes failing model, and for `minutes` a seeded random interleaving of paid calls and
 * everything that moves money around them. Then every answer the clients saw is compared with
 * what was charged, and the extended reconcile runs.
 */
export async function runMoneyAttack(options: AttackOptions): Promise<AttackResult> {
  const say = options.progress ?? (() => {});
  const prng = new Prng(options.seed);
  say(`seed ${options.seed}, ${options.minutes} min: starting PostgreSQL database, model and two servers`);
  const journalFile =
    options.journalFile ?? path.join(os.tmpdir(), `money-attack-${options.seed}-${Date.now()}.jsonl`);
  // Webhook endpoints, CloudEvents and Stripe meters: what leaves the product (issue 39).
  const receivers = await startEventReceivers();
  const cluster = await startCluster({
    adminUrl: options.adminUrl,
    redisUrl: options.redisUrl,
    serverLogPrefix: journalFile.replace(/\.jsonl$/, ""),
    env: receivers.env(),
  });
  try {
    const [first] = cluster.nodes;
    if (!first) throw new Error("no server");
    const world = await createWorld(first.baseUrl, cluster.hookUrl, prng.fork(1000));
    const attack: Attack = {
      cluster,
      world,
      journal: new Journal(),
      endsAt: Date.now() + options.minutes * 60_000,
      inFlight: new Semaphore(),
      lastKillAt: Date.now(),
      topUps: new Map(),
      idempotent: [],
      busyApps: new Set(),
      agents: createAgents(cluster.facilitator, cluster.stripe, prng.fork(2000), ACTORS),
    };
    stripeFaults(cluster.stripe, prng.fork(3000));
    await subscribeEveryone(world, receivers);
    await prepareOrganization(attack);
    attack.endsAt = Date.now() + options.minutes * 60_000;
    say(`people, ${world.apps.length} apps and plans ready; attacking`);
    const harnessErrors: string[] = [];
    await Promise.all(
      Array.from({ length: ACTORS }, (_, actor) => act(attack, prng.fork(actor), actor, harnessErrors)),
    );

    say("stopping the servers; closing the holds their kills left behind");
    await cluster.stopServers();
    const { db } = cluster.database;
    // Holds the sweepers should already have closed (before the final sweep closes the rest).
    const { overdueHolds } = await checkCalls(db);
    while ((await sweepExpiredHolds(db, new Date(Date.now() + 24 * 3_600_000))) > 0);
    // Model cost holds of calls a kill cut off (decision 062): given back the way the sweeper does.
    while ((await sweepExpiredModelCostHolds(db, new Date(Date.now() + 24 * 3_600_000))) > 0);
    // The included calls killed processes took for calls they never recorded: expired now (no
    // server is left to record them), then given back the way the sweeper does.
    await db.update(includedCalls).set({ expiresAt: new Date(0) });
    await sweepExpiredIncludedCalls(db);
    // The keys' reservations of calls not charged that no call gave back (only a killed process's
    // may be left), then the same sweep: those of charged calls stay spent, the rest go back.
    const leftReservations = await unchargedReservations(db);
    // Expired just now, not at the epoch: the sweep finds a reservation's call within a day of its
    // expiry (the day partitions it looks in, decision 038), as a real expiry always is.
    await db.update(apiKeyReservations).set({ expiresAt: new Date(Date.now() - 1_000) });
    await sweepKeyReservations(db);
    const x402Swept = await sweepAfterAttack(db, cluster.facilitator);
    if (x402Swept > 0) say(`the sweep ended ${x402Swept} x402 payments the kills left open`);
    const mppSwept = await sweepMppAfterAttack(db, cluster.stripe);
    if (mppSwept > 0)
      say(`the sweep ended ${mppSwept} MPP payments and refunds Stripe's failures and the kills left open`);
    // Decision 068: what is left of the log relayed, then every receiver's ids against the log's.
    const eventViolations: Violation[] = [];
    const eventFigures = await judgeEvents(
      db,
      world,
      receivers,
      { secretKey: SECRET_KEY, publicUrl: first.baseUrl },
      (kind, example) => eventViolations.push({ kind, example }),
    );
    // Decision 064: the chain's transfers to the x402 receiving address against x402_clearing.
    const report = await reconcile(db, {
      x402Transfers: await x402TransfersAfterAttack(cluster.facilitator),
    });
    report.overdueHolds = [...new Set([...overdueHolds, ...report.overdueHolds])];
    // Agents' payers' calls (x402, MPP) are judged against their payments (agent-calls.ts), the rest as before.
    const books = await loadAgentBooks(db);
    const payerIds = payerInvocationIds(books);
    // An organization's calls are judged by judgeOrganizations (organizations.ts).
    const organizationIds = await organizationInvocationIds(attack);
    const organizationCallers = new Set(
      (await queryRows<{ id: string }>(db, sql`select id::text from users where kind = 'organization'`)).map(
        (row) => row.id,
      ),
    );
    const invocations = (await loadInvocations(db)).filter(
      (row) =>
        !payerIds.has(row.id) &&
        !organizationIds.has(row.id) &&
        !organizationCallers.has(row.caller_user_id ?? ""),
    );
    const x402Payments = await loadX402Payments(db);
    const captured = [...cluster.stripe.captured.values()];
    const keys = await keySpends(db, world, leftReservations);
    const violations = judge({
      journal: attack.journal,
      apps: world.apps,
      nodes: cluster.nodes,
      invocations,
      periods: await planPeriods(db, attack),
      reconcile: report,
      keys,
      suspensions: suspensionWindows(attack),
      periodTerms: await periodTerms(db),
    });
    judgeAgents(
      {
        calls: attack.journal.agentCalls(),
        books,
        x402Payments,
        transfers: cluster.facilitator.transfers,
        cleared: await x402Cleared(db),
        captured,
      },
      (kind, example) => violations.push({ kind, example }),
    );
    violations.push(...(await creatorCallViolations(db)), ...eventViolations);
    const experimentFigures = await judgeExperiments(db, (kind, example) =>
      violations.push({ kind, example }),
    );
    const onlineEvals = await judgeOnlineEvals(db, (kind, example) => violations.push({ kind, example }));
    const sponsored = await judgeSponsored(db, (kind, example) => violations.push({ kind, example }));
    const organizationFigures = await judgeOrganizations(db, attack, (kind, example) =>
      violations.push({ kind, example }),
    );
    const rolloutFigures = await judgeRollouts(db, (kind, example) => violations.push({ kind, example }));
    // Decision 063: oversized inputs refused, price cuts under a serving arm refused, model cost covered.
    const oversized = judgeOversized(attack.journal, (kind, example) => violations.push({ kind, example }));
    await judgeModelCosts(db, 10, (kind, example) => violations.push({ kind, example }));
    const figures = summarize(attack.journal, invocations, world, harnessErrors, keys);
    figures.experiments = `${experimentFigures.experiments} started, ${experimentFigures.ended} ended ${JSON.stringify(experimentFigures.byOutcome)} (${experimentFigures.ruleEnds} by rules), ${experimentFigures.calls} calls chosen by one; ${rolloutFigures.rollouts} rollouts ${JSON.stringify(rolloutFigures.byStatus)}, ${rolloutFigures.steps} steps advanced, ${rolloutFigures.events} rollout events`;
    figures.onlineEvals = `${onlineEvals?.rows ?? 0} sampled calls: ${onlineEvals?.done ?? 0} judged, ${onlineEvals?.capped ?? 0} past the cap, ${onlineEvals?.funds ?? 0} without funds, ${onlineEvals?.failed ?? 0} failed, ${onlineEvals?.open ?? 0} open; ${onlineEvals?.judges ?? 0} judge calls cost creators ${onlineEvals?.cost ?? 0} µ$`;
    figures.sponsored = `${sponsored?.trials ?? 0} trials started, ${sponsored?.codes ?? 0} codes redeemed ${sponsored?.redemptions ?? 0} times, ${sponsored?.calls ?? 0} calls paid by the creator (${sponsored?.open ?? 0} left reserved)`;
    figures.organizationCalls = organizationFigures?.calls ?? 0;
    figures.memberBudgetRefusals = organizationFigures?.budgetRefusals ?? 0;
    figures.organizations = `${organizationFigures?.calls ?? 0} members' calls, ${organizationFigures?.charged ?? 0} charged to the organization, ${organizationFigures?.budgetRefusals ?? 0} refused by a budget, ${organizationFigures?.roleRefusals ?? 0} by a role or removal`;
    figures.oversized = `${oversized.refused} oversized calls refused (413), ${oversized.cuts} price cuts tried under a dear arm`;
    figures.agents = agentFigures(
      attack.journal.agentCalls(),
      books,
      x402Payments,
      cluster.facilitator.transfers,
      captured,
    );
    figures.outgoingCounts = eventFigures;
    figures.outgoing = `${eventFigures.events} events to ${world.consumers.length + 1} webhook receivers (${eventFigures.webhookAttempts} attempts), ${eventFigures.exported} usage events to CloudEvents and Stripe meters`;
    writeFileSync(journalFile, attack.journal.entries.map((entry) => JSON.stringify(entry)).join("\n"));
    return { seed: options.seed, violations, figures, journalFile };
  } finally {
    await cluster.destroy();
    await receivers.stop();
  }
}

/** One actor: picks an action from the table, runs it, pauses a little, until the time is up. */
async function act(attack: Attack, prng: Prng, actor: number, errors: string[]): Promise<void> {
  while (Date.now() < attack.endsAt) {
    const action = prng.weighted(actions);
    await action.run(attack, prng, actor).catch((error: unknown) => {
      errors.push(`actor ${actor} ${action.name}: ${String(error).slice(0, 300)}`);
    });
    await sleep(prng.int(0, 80));
  }
}

async function loadInvocations(db: Database): Promise<InvocationRow[]> {
  const rows = await queryRows<
    InvocationRow & { charged_cents: string; started_ms: string; recorded_ms: string }
  >(
    db,
    sql`select i.id, i.application_id, i.caller_user_id, i.status, i.charged_cents::text, i.hold_id, i.subscription_id,
          (extract(epoch from i.created_at) * 1000 - i.latency_ms)::bigint::text as started_ms,
          ${epochMs(sql`i.created_at`)} as recorded_ms, g.kind as sponsored
        from invocations i
        left join sponsored_calls sc on sc.call_id = i.id
        left join sponsored_grants g on g.id = sc.grant_id`,
  );
  return rows.map((row) => ({
    ...row,
    charged_cents: Number(row.charged_cents),
    started_ms: Number(row.started_ms),
    recorded_ms: Number(row.recorded_ms),
  }));
}

/** A call its creator paid for (decision 080): the caller's key spent nothing on it. */
const notSponsored = sql`not exists (select 1 from sponsored_calls sc where sc.call_id = invocations.id)`;

/** Each limited key's counters against what its calls were charged (judge.ts `judgeKeys`). */
async function keySpends(db: Database, world: World, left: Map<string, number>): Promise<KeySpend[]> {
  const keys = world.consumers.flatMap((person) =>
    person.limitedKey ? [{ person, key: person.limitedKey }] : [],
  );
  const result: KeySpend[] = [];
  for (const { person, key } of keys) {
    const [row] = await queryRows<{ spent: string; highest: string; charged: string; calls: number }>(
      db,
      sql`select (select coalesce(sum(spent_micros), 0) from api_key_spend where key_id = ${key.id}::uuid)::text as spent,
            (select coalesce(max(spent_micros), 0) from api_key_spend where key_id = ${key.id}::uuid)::text as highest,
            (select coalesce(sum(charged_cents), 0) * ${MICROS_PER_CENT} from invocations
              where api_key_id = ${key.id}::uuid and hold_id is not null and status = 'success' and ${notSponsored})::text as charged,
            (select count(*)::int from invocations
              where api_key_id = ${key.id}::uuid and hold_id is not null and status = 'success' and ${notSponsored}) as calls`,
    );
    result.push({
      id: key.id,
      payer: person.name,
      spentMicros: Number(row?.spent ?? 0),
      highestPeriodMicros: Number(row?.highest ?? 0),
      chargedMicros: Number(row?.charged ?? 0),
      chargedCalls: row?.calls ?? 0,
      highestLimitCents: Math.max(...key.limits.map((limit) => limit.cents)),
      unchargedReservations: left.get(key.id) ?? 0,
    });
  }
  return result;
}

/** Per key, its reservations whose call was not charged from a hold (before the final sweep). */
async function unchargedReservations(db: Database): Promise<Map<string, number>> {
  const rows = await queryRows<{ key_id: string; n: number }>(
    db,
    sql`select r.key_id, count(*)::int as n from api_key_reservations r
        left join invocations i on i.id = r.call_id and i.hold_id is not null and i.status = 'success'
        where i.id is null group by r.key_id`,
  );
  return new Map(rows.map((row) => [row.key_id, row.n]));
}

/** Every recorded plan period with the terms it started under (decision 044). */
async function periodTerms(db: Database): Promise<PeriodTerms[]> {
  const rows = await queryRows<{
    subscription_id: string;
    period_start: string;
    calls_included: number;
    counted: number;
    charged_cents: number | null;
    version: number;
    terms_calls: number;
    terms_price: number;
    in_force: boolean;
  }>(
    db,
    sql`select p.subscription_id, p.period_start::text, p.calls_included,
          ((select count(*) from invocations i where i.subscription_id = p.subscription_id
              and i.plan_period_start = p.period_start and i.status = 'success')
           + (select coalesce(sum(d.calls), 0) from dropped_plan_calls d
              where d.subscription_id = p.subscription_id and d.plan_period_start = p.period_start))::int as counted,
          (select (-sum(e.amount_micros) filter (where e.amount_micros < 0) / 10000)::int
             from ledger_entries e where e.transaction_id = p.transaction_id) as charged_cents,
          t.version, t.included_calls as terms_calls, t.price_cents as terms_price,
          t.effective_from <= p.period_start as in_force
        from subscription_periods p join plan_terms t on t.id = p.terms_id`,
  );
  return rows.map((row) => ({
    subscriptionId: row.subscription_id,
    periodStart: row.period_start,
    callsIncluded: row.calls_included,
    counted: Number(row.counted),
    chargedCents: row.charged_cents === null ? null : Number(row.charged_cents),
    termsVersion: row.version,
    termsCalls: row.terms_calls,
    termsPriceCents: row.terms_price,
    inForceAtStart: row.in_force,
  }));
}

/** The periods the attack ended (renewals) and those still running at the end. */
async function planPeriods(db: Database, attack: Attack): Promise<PlanPeriod[]> {
  const ended = attack.journal
    .events("renew")
    .filter((event) => event.status === 200)
    .map(({ detail }) => ({
      subscriptionId: String(detail.subscription),
      subscriberId: String(detail.subscriberId),
      appId: String(detail.appId),
      subscribedAt: Number(detail.subscribedAt),
      start: Number(detail.periodStart),
      end: Number(detail.periodEnd),
      callsUsed: Number(detail.callsUsed),
      callsIncluded: Number(detail.callsIncluded),
    }));
  const running = await queryRows<{
    id: string;
    subscriber_id: string;
    application_id: string;
    created_at: string;
    period_start: string;
    calls_used: number;
    calls_included: number;
  }>(
    db,
    sql`select id, subscriber_id, application_id, ${epochMs(sql`created_at`)} as created_at,
          ${epochMs(sql`current_period_start`)} as period_start, calls_used, calls_included
        from subscriptions where status = 'active'`,
  );
  const now = Date.now();
  return [
    ...ended,
    ...running.map((row) => ({
      subscriptionId: row.id,
      subscriberId: row.subscriber_id,
      appId: row.application_id,
      subscribedAt: Number(row.created_at),
      start: Number(row.period_start),
      end: now,
      callsUsed: row.calls_used,
      callsIncluded: row.calls_included,
    })),
  ];
}
