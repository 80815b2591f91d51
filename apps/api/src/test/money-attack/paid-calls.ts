import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { queryRows } from "../../db/client.ts";
import { walletBalances } from "../../modules/billing/balances.ts";
import { MICROS_PER_CENT } from "../../modules/billing/money.ts";
import { type Attack, pickApp, pickNode, pickPayer } from "./attack.ts";
import { type CallHooks, type CallPlan, makeBatchCall, makeCall } from "./calls.ts";
import type { Node } from "./cluster.ts";
import type { CallEntry } from "./journal.ts";
import type { Prng } from "./prng.ts";
import { type AttackApp, highestPriceIn, highestVisiblePrice, type Person } from "./world.ts";

type Style = CallPlan["style"];

/** The styles an app can be called in: workflow apps run, prompt apps answer messages; both are MCP tools. */
const PROMPT_STYLES: Style[] = ["dify", "openai", "responses", "mcp-app", "mcp-catalogue"];
const WORKFLOW_STYLES: Style[] = ["workflow", "mcp-app", "mcp-catalogue"];
const isMcp = (style: Style) => style === "mcp-app" || style === "mcp-catalogue";

export function planCall(
  prng: Prng,
  app: AttackApp,
  streaming: boolean,
  style: Style = prng.chance(0.5) ? "dify" : "openai",
): CallPlan {
  const failing = prng.chance(0.06);
  // MCP tool calls are blocking, and take neither an Idempotency-Key nor a maximum price.
  const mcp = isMcp(style);
  const stream = streaming && !mcp;
  return {
    style,
    mode: app.mode,
    streaming: stream,
    abortAfterChunks: stream && prng.chance(0.4) ? prng.int(0, 12) : undefined,
    upstream: {
      delayMs: prng.int(20, 300),
      gapMs: stream ? prng.int(3, 15) : 0,
      words: prng.int(15, 25),
      ...(failing ? { fail: prng.pick([500, 503]) } : {}),
    },
    idempotencyKey: !mcp && prng.chance(0.15) ? randomUUID() : undefined,
    maxPriceCents: !mcp && prng.chance(0.15) ? highestVisiblePrice(app, Date.now()) : undefined,
  };
}

export async function oneCall(attack: Attack, prng: Prng, actor: number, action: string, streaming: boolean) {
  const app = pickApp(attack, prng, "prompt");
  await payForPlan(attack, prng, actor, action, pickPayer(attack, prng), app, planCall(prng, app, streaming));
}

/** OpenAI's Responses API (`POST /v1/responses`), blocking or streamed (and then sometimes left). */
export async function responsesCall(attack: Attack, prng: Prng, actor: number) {
  const app = pickApp(attack, prng, "prompt");
  const plan = planCall(prng, app, prng.chance(0.5), "responses");
  await payForPlan(attack, prng, actor, "responses call", pickPayer(attack, prng), app, plan);
}

/** An app as an MCP tool: its own server's `tools/call`, or the catalogue's `call_app`. */
export async function mcpCall(attack: Attack, prng: Prng, actor: number) {
  const app = pickApp(attack, prng);
  const plan = planCall(prng, app, false, prng.chance(0.5) ? "mcp-app" : "mcp-catalogue");
  await payForPlan(attack, prng, actor, "mcp tool call", pickPayer(attack, prng), app, plan);
}

/**
 * Several tool calls in one JSON-RPC batch (decision 043), sometimes with a repeated id, sometimes
 * with notifications, sometimes with the payer's limited key: whatever the server answers must be
 * charged once per answer, and nothing it refused may be charged.
 */
export async function mcpBatch(attack: Attack, prng: Prng, actor: number) {
  const limited = prng.chance(0.3);
  const payer = limited ? prng.pick(attack.world.consumers) : pickPayer(attack, prng);
  const app = pickApp(attack, prng);
  const plan = planCall(prng, app, false, prng.chance(0.5) ? "mcp-app" : "mcp-catalogue");
  plan.limitedKey = limited || undefined;
  plan.batch = {
    members: prng.int(2, 30),
    repeatedIds: prng.chance(0.4),
    notifications: prng.chance(0.3) ? prng.int(1, 5) : 0,
  };
  await payForPlan(attack, prng, actor, "mcp batch", payer, app, plan);
}

/** A workflow app's run (`/workflows/run`) on the loopback webhook, blocking or streamed. */
export async function workflowRun(attack: Attack, prng: Prng, actor: number) {
  const app = pickApp(attack, prng, "workflow");
  const plan = planCall(prng, app, prng.chance(0.5), "workflow");
  await payForPlan(attack, prng, actor, "workflow run", pickPayer(attack, prng), app, plan);
}

/**
 * A stream its caller stops (Dify's `…/{task_id}/stop`): a message stream after a few chunks, a
 * workflow run as soon as it started (before its one chunk) or after it. Now and then the stop goes
 * to the process that does not hold the stream, which stops nothing.
 */
export async function stopStream(attack: Attack, prng: Prng, actor: number) {
  const workflow = prng.chance(0.35);
  const app = pickApp(attack, prng, workflow ? "workflow" : "prompt");
  const plan = planCall(prng, app, true, workflow ? "workflow" : "dify");
  plan.abortAfterChunks = undefined;
  plan.stopAfterChunks = workflow ? prng.int(0, 1) : prng.int(1, plan.upstream.words - 2);
  plan.stopOnOtherNode = prng.chance(0.2);
  await payForPlan(attack, prng, actor, "stopped stream", pickPayer(attack, prng), app, plan);
}

/** A call with the consumer's spend-limited key, in any style (its limit is met often). */
export async function limitedKeyCall(attack: Attack, prng: Prng, actor: number) {
  // Mostly the consumer no trial or code ever sponsors (sponsored.ts): their key's limit is met.
  const [unsponsored] = attack.world.consumers;
  const payer = unsponsored && prng.chance(0.75) ? unsponsored : prng.pick(attack.world.consumers);
  const app = pickApp(attack, prng);
  const style = prng.pick(app.kind === "workflow" ? WORKFLOW_STYLES : PROMPT_STYLES);
  const plan = planCall(prng, app, prng.chance(0.4), style);
  plan.limitedKey = true;
  await payForPlan(attack, prng, actor, "limited-key call", payer, app, plan);
}

/** Sends one call and journals what its client saw; a 402 is checked against the payer's money at once. */
export async function payForPlan(
  attack: Attack,
  prng: Prng,
  actor: number,
  action: string,
  payer: Person,
  app: AttackApp,
  plan: CallPlan,
): Promise<void> {
  const node = pickNode(attack, prng);
  const key = plan.limitedKey ? payer.limitedKey : undefined;
  if (plan.limitedKey && !key) throw new Error(`${payer.name} has no limited key`);
  const apiKey = key?.key ?? payer.apiKey.key;
  const hooks: CallHooks = {};
  let stopNode: Node | undefined;
  if (plan.stopAfterChunks !== undefined) {
    const other = attack.cluster.nodes.find((candidate) => candidate !== node);
    const to: Node = plan.stopOnOtherNode && other ? other : node;
    stopNode = to;
    hooks.stop = (taskId) => stopCall(to, apiKey, app, plan, taskId);
  }
  if (plan.idempotencyKey && !attack.idempotent.some((used) => used.key === plan.idempotencyKey))
    attack.idempotent.push({ key: plan.idempotencyKey, plan, payer, app });
  await attack.inFlight.use(async () => {
    const startedAt = Date.now();
    // Alone on its key: no other call in flight, none that ended just before (an abandoned stream's
    // server gives its reservation back a moment after its client left).
    const alone = key ? key.inFlight === 0 && startedAt - key.lastEndedAt > KEY_SETTLE_MS : false;
    const startedBefore = key?.started ?? 0;
    if (key) {
      key.inFlight += 1;
      key.started += 1;
    }
    const send = plan.batch ? makeBatchCall : makeCall;
    const outcome = await send(node.baseUrl, apiKey, app.slug, plan, hooks).finally(() => {
      if (!key) return;
      key.inFlight -= 1;
      key.lastEndedAt = Date.now();
    });
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
      stopNode: stopNode?.name,
      plan,
      startedAt,
      endedAt: Date.now(),
      ...outcome,
    };
    if (outcome.status === 402 && outcome.errorCode === "key_limit_reached" && key) {
      // Judged only for a call that had its key to itself (no other call's reservation in the way).
      const lone = alone && key.started === startedBefore + 1;
      entry.keyRefusal = {
        lone,
        ...(lone ? await keySpendNow(attack, key.id) : {}),
        priceCents: highestPriceIn(app, startedAt - LOOKUP_STALE_MS, entry.endedAt),
        limitCents: lowestLimitIn(key.limits, startedAt, entry.endedAt),
      };
    } else if (outcome.status === 402) {
      const { wallet, held } = await walletBalances(attack.cluster.database.db, payer.id);
      const [recalled] = await queryRows<{ micros: string }>(
        attack.cluster.database.db,
        sql`select coalesce(sum(amount_micros - settled_micros), 0)::text as micros from holds
            where payer_id = ${payer.id}::uuid and status = 'held' and recalled_at is not null`,
      );
      const topUps = attack.topUps.get(payer.id) ?? [];
      entry.refusal = {
        walletCents: wallet / MICROS_PER_CENT,
        heldCents: held / MICROS_PER_CENT,
        recalledHeldCents: Number(recalled?.micros ?? 0) / MICROS_PER_CENT,
        topUpOverlapped: topUps.some(
          (t) => t.from <= Date.now() && (t.to ?? Number.POSITIVE_INFINITY) >= startedAt,
        ),
      };
    }
    attack.journal.add(entry);
  });
}

/** How long after its client a call's server may still be settling its key reservation. */
const KEY_SETTLE_MS = 2_000;

/** How stale a process's cached app (its price) may be (lib/lookup-cache.ts). */
const LOOKUP_STALE_MS = 5_000;

/** Dify's stop of a streamed call, sent to one process with the stream's key; answers its status. */
async function stopCall(node: Node, apiKey: string, app: AttackApp, plan: CallPlan, taskId: string) {
  const path =
    plan.style === "workflow"
      ? `/api/app/${app.slug}/workflows/tasks/${taskId}/stop`
      : `/api/app/${app.slug}/${plan.mode}-messages/${taskId}/stop`;
  const response = await fetch(`${node.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: "{}",
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer().catch(() => undefined);
  return response.status;
}

/** The lowest limit the key could have had in [from, until] (one in force, or one being set). */
function lowestLimitIn(
  limits: { cents: number; sentAt: number; doneAt?: number }[],
  from: number,
  until: number,
) {
  let inForce = limits[0]?.cents ?? 0;
  for (const change of limits)
    if (change.doneAt !== undefined && change.doneAt <= from) inForce = change.cents;
  let lowest = inForce;
  for (const change of limits)
    if (change.sentAt <= until && (change.doneAt ?? Number.POSITIVE_INFINITY) > from)
      lowest = Math.min(lowest, change.cents);
  return lowest;
}

/**
 * A key's spend counter in its current period, and how much of it is held by reservations of calls
 * not charged (a killed process's, not yet swept; or a call its server is still finishing although
 * its client is done, such as an abandoned stream). Read when no call of the key is in flight.
 */
async function keySpendNow(
  attack: Attack,
  keyId: string,
): Promise<{ spentMicros: number; unchargedReservedMicros: number }> {
  const [row] = await queryRows<{ spent: string; uncharged: string }>(
    attack.cluster.database.db,
    sql`with k as (
          select id, case limit_reset when 'daily' then date_trunc('day', now(), 'UTC')
            when 'weekly' then date_trunc('week', now(), 'UTC') when 'monthly' then date_trunc('month', now(), 'UTC')
            else 'epoch'::timestamptz end as period_start
          from api_keys where id = ${keyId}::uuid)
        select coalesce((select s.spent_micros from api_key_spend s, k
                         where s.key_id = k.id and s.period_start = k.period_start), 0)::text as spent,
          coalesce((select sum(r.micros - least(r.micros, coalesce(i.charged_cents * ${MICROS_PER_CENT}, 0)))
              from api_key_reservations r join k on r.key_id = k.id and r.period_start = k.period_start
              left join invocations i on i.id = r.call_id and i.hold_id is not null and i.status = 'success'), 0)::text
            as uncharged`,
  );
  return { spentMicros: Number(row?.spent ?? 0), unchargedReservedMicros: Number(row?.uncharged ?? 0) };
}

/** Several calls of one pair at once: leases shared between calls, on both processes. */
export async function burst(attack: Attack, prng: Prng, actor: number) {
  const payer = pickPayer(attack, prng);
  const app = pickApp(attack, prng, "prompt");
  const plans = Array.from({ length: prng.int(5, 12) }, () => planCall(prng, app, prng.chance(0.3)));
  await Promise.all(plans.map((plan) => payForPlan(attack, prng, actor, "burst", payer, app, plan)));
}

/** The same idempotency key and body again: the first answer, never a second charge. */
export async function replay(attack: Attack, prng: Prng, actor: number) {
  if (attack.idempotent.length === 0) return oneCall(attack, prng, actor, "blocking call", false);
  const first = prng.pick(attack.idempotent);
  await payForPlan(attack, prng, actor, "idempotent replay", first.payer, first.app, first.plan);
}
