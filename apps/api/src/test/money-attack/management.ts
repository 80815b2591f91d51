import { sql } from "drizzle-orm";
import { queryRows } from "../../db/client.ts";
import { renewDueSubscriptions } from "../../modules/billing/subscriptions.ts";
import { fundWallet } from "../caller.ts";
import { type Attack, epochMs, FEE_PERCENT, journalEvent, liveApps, pickApp, viaAnyNode } from "./attack.ts";
import type { Prng } from "./prng.ts";
import { createApp, newApiKey } from "./world.ts";

/** No two kills closer than this; none in the last stretch, so the end is not all restarts. */
const KILL_SPACING_MS = 15_000;

/** Tops up a consumer's wallet, never the last one's: it runs dry and meets 402s. */
export async function topUp(attack: Attack, prng: Prng, actor: number) {
  const payer = prng.pick(attack.world.consumers.slice(0, -1));
  const cents = prng.int(300, 1500);
  const window: { from: number; to?: number } = { from: Date.now() };
  attack.topUps.set(payer.id, [...(attack.topUps.get(payer.id) ?? []), window]);
  await journalEvent(attack, actor, "top_up", async () => {
    try {
      await fundWallet(viaAnyNode(attack, prng, payer), cents);
      return { status: 200, detail: { payer: payer.name, cents } };
    } finally {
      window.to = Date.now();
    }
  });
}

export async function subscribe(attack: Attack, prng: Prng, actor: number) {
  const payer = prng.pick(attack.world.consumers);
  const app = pickApp(attack, prng);
  const planId = prng.pick(app.planIds);
  await journalEvent(attack, actor, "subscribe", async () => {
    const answer = await viaAnyNode(attack, prng, payer).api("POST", `/api/app/${app.slug}/subscriptions/`, {
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

export async function cancel(attack: Attack, prng: Prng, actor: number) {
  const active = await activeSubscriptions(attack);
  if (active.length === 0) return;
  const target = prng.pick(active);
  const payer = attack.world.consumers.find((person) => person.id === target.subscriber_id);
  const app = attack.world.apps.find((candidate) => candidate.id === target.application_id);
  if (!payer || !app) return;
  await journalEvent(attack, actor, "cancel", async () => {
    const answer = await viaAnyNode(attack, prng, payer).api(
      "POST",
      `/api/app/${app.slug}/subscriptions/${target.id}/cancel/`,
    );
    return { status: answer.status, detail: { payer: payer.name, app: app.label, subscription: target.id } };
  });
}

/**
 * Makes a period due (its end set to now, which also ends its included calls at once) and renews
 * it the way the servers' sweeper does. The ended period's count is journalled for the plan check.
 */
export async function renew(attack: Attack, prng: Prng, actor: number) {
  const active = await activeSubscriptions(attack);
  if (active.length === 0) return;
  const target = prng.pick(active);
  const { db } = attack.cluster.database;
  await journalEvent(attack, actor, "renew", async () => {
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
    // A moment later than the end just written: PostgreSQL's now() has microseconds past this
    // process's Date.now(), and a renewal at the same millisecond would find the period not due.
    await renewDueSubscriptions(db, FEE_PERCENT, new Date(Date.now() + 1_000));
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

export async function changePrice(attack: Attack, prng: Prng, actor: number) {
  const app = prng.pick(liveApps(attack));
  if (!app || attack.busyApps.has(app.id)) return;
  attack.busyApps.add(app.id);
  const cents = prng.int(5, 40);
  const sentAt = Date.now();
  try {
    await journalEvent(attack, actor, "price", async () => {
      const answer = await viaAnyNode(attack, prng, attack.world.creator)
        .api("PATCH", `/api/app/${app.slug}/`, { body: { price_cents: cents } })
        .catch((error: unknown) => ({ status: 0, body: { error: String(error).slice(0, 200) } }));
      if (answer.status === 200) app.prices.push({ cents, sentAt, doneAt: Date.now() });
      // No answer (its process was killed) or a 5xx: it may have been written all the same. Such a
      // price may apply from when it was sent until the end (money attack seed 90817: a decrease
      // to 7¢ whose answer a kill cut off was charged for a minute, every later increase pending).
      else if (answer.status === 0 || answer.status >= 500)
        app.prices.push({ cents, sentAt, doneAt: Number.POSITIVE_INFINITY });
      return {
        status: answer.status,
        detail: { app: app.label, cents, ...(answer.status === 0 ? answer.body : {}) },
      };
    });
  } finally {
    attack.busyApps.delete(app.id);
  }
}

/** A consumer revokes their key and makes a new one; calls in flight on the old key may land either way. */
export async function revokeKey(attack: Attack, prng: Prng, actor: number) {
  const payer = prng.pick(attack.world.consumers);
  await journalEvent(attack, actor, "revoke_key", async () => {
    const old = payer.apiKey;
    const caller = viaAnyNode(attack, prng, payer);
    const answer = await caller.api("DELETE", `/api/keys/${old.id}/`);
    payer.apiKey = await newApiKey(caller);
    return { status: answer.status, detail: { payer: payer.name, key: old.id } };
  });
}

/**
 * A consumer moves their limited key's spend limit (`PATCH /api/keys/{id}/`): to a little above or
 * below what it has spent this period, so that calls keep meeting it. Never cleared: a key without
 * a limit reserves nothing, and the spend check (judge.ts) needs every call of the key reserved.
 */
export async function setKeyLimit(attack: Attack, prng: Prng, actor: number) {
  const payer = prng.pick(attack.world.consumers);
  const key = payer.limitedKey;
  if (!key) return;
  await journalEvent(attack, actor, "key_limit", async () => {
    const caller = viaAnyNode(attack, prng, payer);
    const listed = await caller.api("GET", "/api/keys/");
    const mine = (Array.isArray(listed.body) ? listed.body : []) as { id: string; spent_micros: number }[];
    const spentCents = Math.floor((mine.find((row) => row.id === key.id)?.spent_micros ?? 0) / 10_000);
    const cents = Math.max(1, spentCents + prng.int(-20, 150));
    const change: { cents: number; sentAt: number; doneAt?: number } = { cents, sentAt: Date.now() };
    key.limits.push(change);
    const answer = await caller.api("PATCH", `/api/keys/${key.id}/`, { body: { spend_limit_cents: cents } });
    if (answer.status === 200) change.doneAt = Date.now();
    // Refused (4xx): it never applied. Anything else (a kill) may have: it stays "being set".
    else if (answer.status >= 400 && answer.status < 500) key.limits.splice(key.limits.indexOf(change), 1);
    return { status: answer.status, detail: { payer: payer.name, key: key.id, cents, spentCents } };
  });
}

/** The creator deletes (archives) an app with money history, and makes a new one to keep selling. */
export async function removeApp(attack: Attack, prng: Prng, actor: number) {
  const live = liveApps(attack);
  if (live.length <= 2) return;
  const app = prng.pick(live);
  await journalEvent(attack, actor, "remove_app", async () => {
    const answer = await viaAnyNode(attack, prng, attack.world.creator).api(
      "DELETE",
      `/api/app/${app.slug}/`,
    );
    if (answer.status < 300) app.removedAt = Date.now();
    return { status: answer.status, detail: { app: app.label, body: answer.body } };
  });
  if (app.removedAt === undefined) return;
  // A kill may land on the node making the replacement: make it through another, as a person would
  // retry, for as long as a restart can take on a loaded machine (20–30 s seen; 5 tries a second
  // apart gave up while both nodes were briefly unreachable: "fetch failed").
  const giveUpAt = Date.now() + 60_000;
  for (;;) {
    try {
      await createApp(attack.world, prng, app.mode, viaAnyNode(attack, prng, attack.world.creator), app.kind);
      return;
    } catch (error) {
      if (Date.now() >= giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

/** SIGKILL one process mid-traffic, then start it again on its port. */
export async function killAServer(attack: Attack, prng: Prng, actor: number) {
  const now = Date.now();
  if (now - attack.lastKillAt < KILL_SPACING_MS || attack.endsAt - now < 10_000) return;
  const up = attack.cluster.nodes.filter((candidate) => candidate.process?.isAlive());
  if (up.length === 0) return;
  const node = prng.pick(up);
  attack.lastKillAt = now;
  await journalEvent(attack, actor, "kill", async () => {
    await attack.cluster.kill(node);
    await new Promise((resolve) => setTimeout(resolve, prng.int(300, 2000)));
    // A start can fail for a while (a PostgreSQL shared with other work refusing connections):
    // try again rather than leave the attack with one process.
    for (let attempt = 1; ; attempt++) {
      try {
        await attack.cluster.restart(node);
        break;
      } catch (error) {
        if (attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
    }
    return { status: 200, detail: { node: node.name } };
  });
}

/**
 * The creator changes a plan's terms (decision 044): its included calls and often its price, up or
 * down, racing renewals and calls. Less for subscribers waits out the notice; at least as much
 * applies to periods starting from now. The judge checks each period by the terms it recorded.
 */
export async function editPlan(attack: Attack, prng: Prng, actor: number) {
  const app = prng.pick(liveApps(attack));
  if (!app || app.planIds.length === 0) return;
  const planId = prng.pick(app.planIds);
  const body: Record<string, number> = { included_calls: prng.int(1, 6) };
  if (prng.int(0, 1) === 1) body.price_cents = prng.int(100, 200);
  await journalEvent(attack, actor, "edit_plan", async () => {
    const answer = await viaAnyNode(attack, prng, attack.world.creator)
      .api("PATCH", `/api/app/${app.slug}/packages/${planId}/`, { body })
      .catch((error: unknown) => ({ status: 0, body: { error: String(error).slice(0, 200) } }));
    return {
      status: answer.status,
      detail: {
        app: app.label,
        plan: planId,
        ...body,
        terms_version: answer.body?.terms_version,
        pending: answer.body?.pending_terms?.effective_from ?? null,
      },
    };
  });
}
