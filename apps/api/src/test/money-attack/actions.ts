import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows } from "../../db/client.ts";
import { walletBalances } from "../../modules/billing/ledger.service.ts";
import { renewDueSubscriptions } from "../../modules/billing/plans.service.ts";
import { fundWallet } from "../caller.ts";
import { type CallPlan, makeCall } from "./calls.ts";
import type { Cluster, Node } from "./cluster.ts";
import type { CallEntry, EventEntry, Journal } from "./journal.ts";
import type { Prng } from "./prng.ts";
import {
  type AttackApp,
  createApp,
  highestVisiblePrice,
  newApiKey,
  type Person,
  type World,
} from "./world.ts";

export const FEE_PERCENT = 10;
/** At most this many calls in flight at once (the machine has two cores for everything). */
const MAX_IN_FLIGHT = 40;
/** No two kills closer than this; none in the last stretch, so the end is not all restarts. */
const KILL_SPACING_MS = 15_000;

/** What every action may use: the cluster, the people and apps, the journal, shared gates. */
export interface Attack {
  cluster: Cluster;
  world: World;
  journal: Journal;
  endsAt: number;
  inFlight: Semaphore;
  lastKillAt: number;
  /** Top-ups per payer id, to tell a fair 402 from one a concurrent top-up makes ambiguous. */
  topUps: Map<string, { from: number; to?: number }[]>;
  /** Idempotency keys already used, with the call they were first sent with (for replays). */
  idempotent: { key: string; plan: CallPlan; payer: Person; app: AttackApp }[];
  busyApps: Set<string>;
}

export interface Action {
  name: string;
  weight: number;
  run(attack: Attack, prng: Prng, actor: number): Promise<void>;
}

/** The random interleaving: each actor picks its next action from this table. */
export const actions: Action[] = [
  { name: "blocking call", weight: 30, run: (a, p, actor) => oneCall(a, p, actor, "blocking call", false) },
  { name: "streaming call", weight: 20, run: (a, p, actor) => oneCall(a, p, actor, "streaming call", true) },
  { name: "burst", weight: 6, run: burst },
  { name: "idempotent replay", weight: 4, run: replay },
  { name: "top-up", weight: 5, run: topUp },
  { name: "subscribe", weight: 5, run: subscribe },
  { name: "cancel plan", weight: 2, run: cancel },
  { name: "renew plan", weight: 4, run: renew },
  { name: "change price", weight: 4, run: changePrice },
  { name: "revoke key", weight: 2, run: revokeKey },
  { name: "remove app", weight: 0.5, run: removeApp },
  { name: "kill a server", weight: 1.5, run: killAServer },
];

export class Semaphore {
  private free: number;
  private waiting: (() => void)[] = [];

  constructor(size = MAX_IN_FLIGHT) {
    this.free = size;
  }

  async use<T>(run: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await run();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}

/** A timestamp column as milliseconds since the epoch (text, exact). */
export const epochMs = (column: ReturnType<typeof sql>) =>
  sql`(extract(epoch from ${column}) * 1000)::bigint::text`;

const liveApps = (attack: Attack) => attack.world.apps.filter((app) => app.removedAt === undefined);

/** Usually a live app; now and then a removed one (its calls must fail and cost nothing). */
function pickApp(attack: Attack, prng: Prng): AttackApp {
  const live = liveApps(attack);
  return prng.chance(0.03) || live.length === 0 ? prng.pick(attack.world.apps) : prng.pick(live);
}

/** Mostly consumers; one call in ten is the creator's own (free). */
function pickPayer(attack: Attack, prng: Prng): Person {
  return prng.chance(0.1) ? attack.world.creator : prng.pick(attack.world.consumers);
}

function pickNode(attack: Attack, prng: Prng): Node {
  const up = attack.cluster.nodes.filter((node) => node.process?.isAlive());
  return prng.pick(up.length > 0 ? up : attack.cluster.nodes);
}

function planCall(prng: Prng, app: AttackApp, streaming: boolean): CallPlan {
  const failing = prng.chance(0.06);
  return {
    style: prng.chance(0.5) ? "dify" : "openai",
    mode: app.mode,
    streaming,
    abortAfterChunks: streaming && prng.chance(0.4) ? prng.int(0, 12) : undefined,
    upstream: {
      delayMs: prng.int(20, 300),
      gapMs: streaming ? prng.int(3, 15) : 0,
      words: prng.int(15, 25),
      ...(failing ? { fail: prng.pick([500, 503]) } : {}),
    },
    idempotencyKey: prng.chance(0.15) ? randomUUID() : undefined,
    maxPriceCents: prng.chance(0.15) ? highestVisiblePrice(app, Date.now()) : undefined,
  };
}

async function oneCall(attack: Attack, prng: Prng, actor: number, action: string, streaming: boolean) {
  const app = pickApp(attack, prng);
  await call(attack, prng, actor, action, pickPayer(attack, prng), app, planCall(prng, app, streaming));
}

/** Sends one call and journals what its client saw; a 402 is checked against the payer's money at once. */
async function call(
  attack: Attack,
  prng: Prng,
  actor: number,
  action: string,
  payer: Person,
  app: AttackApp,
  plan: CallPlan,
): Promise<void> {
  const node = pickNode(attack, prng);
  if (plan.idempotencyKey && !attack.idempotent.some((used) => used.key === plan.idempotencyKey))
    attack.idempotent.push({ key: plan.idempotencyKey, plan, payer, app });
  await attack.inFlight.use(async () => {
    const startedAt = Date.now();
    const outcome = await makeCall(node.baseUrl, payer.apiKey.key, app.slug, plan);
    const entry: CallEntry = {
      kind: "call",
      seq: attack.journal.nextSeq(),
      actor,
      action,
      node: node.name,
      payer: payer.name,
      payerId: payer.id,
      app: app.label,
      appId: app.id,
      owner: payer === attack.world.creator,
      plan,
      startedAt,
      endedAt: Date.now(),
      ...outcome,
    };
    if (outcome.status === 402) {
      const { wallet, held } = await walletBalances(attack.cluster.database.db, payer.id);
      const topUps = attack.topUps.get(payer.id) ?? [];
      entry.refusal = {
        fundsCents: wallet + held,
        topUpOverlapped: topUps.some(
          (t) => t.from <= Date.now() && (t.to ?? Number.POSITIVE_INFINITY) >= startedAt,
        ),
      };
    }
    attack.journal.add(entry);
  });
}

/** Several calls of one pair at once: leases shared between calls, on both processes. */
async function burst(attack: Attack, prng: Prng, actor: number) {
  const payer = pickPayer(attack, prng);
  const app = pickApp(attack, prng);
  const plans = Array.from({ length: prng.int(5, 12) }, () => planCall(prng, app, prng.chance(0.3)));
  await Promise.all(plans.map((plan) => call(attack, prng, actor, "burst", payer, app, plan)));
}

/** The same idempotency key and body again: the first answer, never a second charge. */
async function replay(attack: Attack, prng: Prng, actor: number) {
  if (attack.idempotent.length === 0) return oneCall(attack, prng, actor, "blocking call", false);
  const first = prng.pick(attack.idempotent);
  await call(attack, prng, actor, "idempotent replay", first.payer, first.app, first.plan);
}

/** Runs a management step and journals it. */
async function event(
  attack: Attack,
  actor: number,
  kind: EventEntry["kind"],
  run: () => Promise<{ status?: number; detail: Record<string, unknown> }>,
): Promise<void> {
  const startedAt = Date.now();
  const { status, detail } = await run().catch((error) => ({
    status: 0,
    detail: { error: String(error).slice(0, 200) },
  }));
  attack.journal.add({
    kind,
    seq: attack.journal.nextSeq(),
    actor,
    startedAt,
    endedAt: Date.now(),
    status,
    detail,
  });
}

/** Tops up a consumer's wallet, never the last one's: it runs dry and meets 402s. */
async function topUp(attack: Attack, prng: Prng, actor: number) {
  const payer = prng.pick(attack.world.consumers.slice(0, -1));
  const cents = prng.int(300, 1500);
  const window: { from: number; to?: number } = { from: Date.now() };
  attack.topUps.set(payer.id, [...(attack.topUps.get(payer.id) ?? []), window]);
  await event(attack, actor, "top_up", async () => {
    try {
      await fundWallet(payer.caller, cents);
      return { status: 200, detail: { payer: payer.name, cents } };
    } finally {
      window.to = Date.now();
    }
  });
}

async function subscribe(attack: Attack, prng: Prng, actor: number) {
  const payer = prng.pick(attack.world.consumers);
  const app = pickApp(attack, prng);
  const planId = prng.pick(app.planIds);
  await event(attack, actor, "subscribe", async () => {
    const answer = await payer.caller.api("POST", `/api/app/${app.slug}/subscriptions/`, {
      body: { package_id: planId },
    });
    return {
      status: answer.status,
      detail: { payer: payer.name, app: app.label, subscription: answer.body?.id },
    };
  });
}

/** The attack's subscriptions still active, read from the database. */
async function activeSubscriptions(attack: Attack) {
  return queryRows<{ id: string; subscriber_id: string; application_id: string }>(
    attack.cluster.database.db,
    sql`select id, subscriber_id, application_id from subscriptions where status = 'active' order by created_at, id`,
  );
}

async function cancel(attack: Attack, prng: Prng, actor: number) {
  const active = await activeSubscriptions(attack);
  if (active.length === 0) return;
  const target = prng.pick(active);
  const payer = attack.world.consumers.find((person) => person.id === target.subscriber_id);
  const app = attack.world.apps.find((candidate) => candidate.id === target.application_id);
  if (!payer || !app) return;
  await event(attack, actor, "cancel", async () => {
    const answer = await payer.caller.api("POST", `/api/app/${app.slug}/subscriptions/${target.id}/cancel/`);
    return { status: answer.status, detail: { payer: payer.name, app: app.label, subscription: target.id } };
  });
}

/**
 * Makes a period due (its end set to now, which also ends its included calls at once) and renews
 * it the way the servers' sweeper does. The ended period's count is journalled for the plan check.
 */
async function renew(attack: Attack, prng: Prng, actor: number) {
  const active = await activeSubscriptions(attack);
  if (active.length === 0) return;
  const target = prng.pick(active);
  const { db } = attack.cluster.database;
  await event(attack, actor, "renew", async () => {
    const [ended] = await queryRows<{
      period_start: string;
      period_end: string;
      calls_used: number;
      calls_included: number;
      created_at: string;
    }>(
      db,
      sql`update subscriptions set current_period_end = now()
          where id = ${target.id} and status = 'active'
          returning ${epochMs(sql`current_period_start`)} as period_start,
            ${epochMs(sql`current_period_end`)} as period_end, calls_used, calls_included,
            ${epochMs(sql`created_at`)} as created_at`,
    );
    if (!ended) return { status: 409, detail: { subscription: target.id } };
    await renewDueSubscriptions(db, FEE_PERCENT);
    return {
      status: 200,
      detail: {
        subscription: target.id,
        subscriberId: target.subscriber_id,
        appId: target.application_id,
        periodStart: Number(ended.period_start),
        periodEnd: Number(ended.period_end),
        callsUsed: ended.calls_used,
        callsIncluded: ended.calls_included,
        subscribedAt: Number(ended.created_at),
      },
    };
  });
}

async function changePrice(attack: Attack, prng: Prng, actor: number) {
  const app = prng.pick(liveApps(attack));
  if (!app || attack.busyApps.has(app.id)) return;
  attack.busyApps.add(app.id);
  const cents = prng.int(5, 40);
  const sentAt = Date.now();
  try {
    await event(attack, actor, "price", async () => {
      const answer = await attack.world.creator.caller.api("PATCH", `/api/app/${app.slug}/`, {
        body: { price_cents: cents },
      });
      if (answer.status === 200) app.prices.push({ cents, sentAt, doneAt: Date.now() });
      return { status: answer.status, detail: { app: app.label, cents } };
    });
  } finally {
    attack.busyApps.delete(app.id);
  }
}

/** A consumer revokes their key and makes a new one; calls in flight on the old key may land either way. */
async function revokeKey(attack: Attack, prng: Prng, actor: number) {
  const payer = prng.pick(attack.world.consumers);
  await event(attack, actor, "revoke_key", async () => {
    const old = payer.apiKey;
    const answer = await payer.caller.api("DELETE", `/api/keys/${old.id}/`);
    payer.apiKey = await newApiKey(payer.caller);
    return { status: answer.status, detail: { payer: payer.name, key: old.id } };
  });
}

/** The creator deletes (archives) an app with money history, and makes a new one to keep selling. */
async function removeApp(attack: Attack, prng: Prng, actor: number) {
  const live = liveApps(attack);
  if (live.length <= 2) return;
  const app = prng.pick(live);
  await event(attack, actor, "remove_app", async () => {
    const answer = await attack.world.creator.caller.api("DELETE", `/api/app/${app.slug}/`);
    if (answer.status < 300) app.removedAt = Date.now();
    return { status: answer.status, detail: { app: app.label, body: answer.body } };
  });
  if (app.removedAt !== undefined) await createApp(attack.world, prng, app.mode);
}

/** SIGKILL one process mid-traffic, then start it again on its port. */
async function killAServer(attack: Attack, prng: Prng, actor: number) {
  const now = Date.now();
  if (now - attack.lastKillAt < KILL_SPACING_MS || attack.endsAt - now < 10_000) return;
  const up = attack.cluster.nodes.filter((candidate) => candidate.process?.isAlive());
  if (up.length === 0) return;
  const node = prng.pick(up);
  attack.lastKillAt = now;
  await event(attack, actor, "kill", async () => {
    await attack.cluster.kill(node);
    await new Promise((resolve) => setTimeout(resolve, prng.int(300, 2000)));
    await attack.cluster.restart(node);
    return { status: 200, detail: { node: node.name } };
  });
}
