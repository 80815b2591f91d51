import { sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import { type Database, queryRows } from "../../db/client.ts";
import { sweepX402Payments } from "../../modules/billing/agent-payments/x402-payments.ts";
import { createX402Rail } from "../../modules/billing/agent-payments/x402-rail.ts";
import { type X402Facilitator, x402Wallet } from "../x402-facilitator.ts";
import { type Attack, pickApp, pickNode } from "./attack.ts";
import { type CallOutcome, type CallPlan, makeCall } from "./calls.ts";
import type { Node } from "./cluster.ts";
import type { Prng } from "./prng.ts";
import type { AttackApp } from "./world.ts";

/**
 * x402 callers in the money attack (issue 30, docs/decisions/052): agents without an account pay
 * for single calls with `@x402/fetch` (viem wallets, the loopback facilitator checking their
 * signatures), in every style and with the attack's faults (failing upstreams, aborted streams,
 * Idempotency-Key replays, kills); some agents cannot afford a call; some replay a payment they
 * already spent. The judge: every settled payment is one answered call, charged exactly its
 * amount, and one transfer on the (simulated) chain; every transfer is one settled payment; no
 * failed or refused call settled anything; no replay was accepted.
 */

export type X402Agent = ReturnType<typeof x402Wallet>;

/** One x402 call as its agent saw it. */
export interface X402CallEntry extends CallOutcome {
  kind: "x402_call";
  seq: number;
  actor: number;
  action: "x402 call" | "x402 replay";
  node: string;
  agent: string;
  app: string;
  appId: string;
  plan: CallPlan;
  startedAt: number;
  endedAt: number;
}

/**
 * One agent per actor (an actor's calls are sequential, so its last payment is its own), able to
 * pay for many calls; and one that can pay for none (its payments fail verification).
 */
export function createAgents(
  facilitator: X402Facilitator,
  prng: Prng,
  actors: number,
): { agents: X402Agent[]; broke: X402Agent } {
  const agents = Array.from({ length: actors }, () => x402Wallet());
  for (const agent of agents) facilitator.mint(agent.address, BigInt(prng.int(2_000, 6_000)) * 10_000n);
  const broke = x402Wallet();
  facilitator.mint(broke.address, 1n);
  return { agents, broke };
}

/** What each agent's last payment got at first: only one the server took is replayed. */
const firstStatus = new WeakMap<X402Agent, number>();

const STYLES: Record<AttackApp["kind"], CallPlan["style"][]> = {
  prompt: ["dify", "openai", "responses", "mcp-app", "mcp-catalogue"],
  workflow: ["workflow", "mcp-app", "mcp-catalogue"],
};

/** An agent pays for one call with x402, in any style, with the attack's faults. */
export async function x402Call(attack: Attack, prng: Prng, actor: number) {
  const own = attack.x402?.agents[actor % attack.x402.agents.length];
  if (!attack.x402 || !own) return;
  const agent = prng.chance(0.1) ? attack.x402.broke : own;
  const app = pickApp(attack, prng);
  const style = prng.pick(STYLES[app.kind]);
  const mcp = style === "mcp-app" || style === "mcp-catalogue";
  const streaming = !mcp && prng.chance(0.35);
  const plan: CallPlan = {
    style,
    mode: app.mode,
    streaming,
    abortAfterChunks: streaming && prng.chance(0.3) ? prng.int(0, 12) : undefined,
    upstream: {
      delayMs: prng.int(20, 300),
      gapMs: streaming ? prng.int(3, 15) : 0,
      words: prng.int(15, 25),
      ...(prng.chance(0.08) ? { fail: prng.pick([500, 503]) } : {}),
    },
    idempotencyKey: !mcp && prng.chance(0.1) ? crypto.randomUUID() : undefined,
  };
  const node = pickNode(attack, prng);
  await attack.inFlight.use(async () => {
    const startedAt = Date.now();
    const outcome = await makeCall(node.baseUrl, "", app.slug, plan, {}, agent.fetch);
    firstStatus.set(agent, outcome.status);
    journal(attack, {
      actor,
      action: "x402 call",
      node,
      agent: agent.address,
      app,
      plan,
      startedAt,
      outcome,
    });
    // The same key again, with a new payment: the first answer, and the new payment never settles.
    if (plan.idempotencyKey && outcome.status === 200 && prng.chance(0.5)) {
      const again = Date.now();
      const replayed = await makeCall(node.baseUrl, "", app.slug, plan, {}, agent.fetch);
      firstStatus.set(agent, replayed.status);
      journal(attack, {
        actor,
        action: "x402 call",
        node,
        agent: agent.address,
        app,
        plan,
        startedAt: again,
        outcome: replayed,
      });
    }
  });
}

/** An agent sends a payment it already spent again: a 402, and nothing moves. */
export async function x402Replay(attack: Attack, prng: Prng, actor: number) {
  // Its own agent's last payment, if the server took it (answered, or failed after admission).
  const agent = attack.x402?.agents[actor % attack.x402.agents.length];
  const last = agent?.lastPayment;
  const status = agent ? firstStatus.get(agent) : undefined;
  if (!agent || !last || (status !== 200 && status !== 502 && status !== 503))
    return x402Call(attack, prng, actor);
  const node = pickNode(attack, prng);
  const url = new URL(last.url);
  const startedAt = Date.now();
  const outcome: CallOutcome = {
    status: 0,
    chunks: 0,
    completed: false,
    aborted: false,
    replayed: false,
    priceHeaders: {},
  };
  try {
    const response = await fetch(`${node.baseUrl}${url.pathname}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "payment-signature": last.signature,
      },
      body: last.body,
      signal: AbortSignal.timeout(30_000),
    });
    outcome.status = response.status;
    const body = (await response.json().catch(() => undefined)) as Record<string, any> | undefined;
    outcome.errorCode = body?.code ?? body?.error?.code;
  } catch (error) {
    outcome.transportError = String(error).slice(0, 200);
  }
  const plan: CallPlan = {
    style: "dify",
    mode: "completion",
    streaming: false,
    upstream: {} as CallPlan["upstream"],
  };
  attack.journal.add({
    kind: "x402_call",
    seq: attack.journal.nextSeq(),
    actor,
    action: "x402 replay",
    node: node.name,
    agent: agent.address,
    app: url.pathname,
    appId: "",
    plan,
    startedAt,
    endedAt: Date.now(),
    ...outcome,
  });
}

function journal(
  attack: Attack,
  call: {
    actor: number;
    action: X402CallEntry["action"];
    node: Node;
    agent: string;
    app: AttackApp;
    plan: CallPlan;
    startedAt: number;
    outcome: CallOutcome;
  },
) {
  attack.journal.add({
    kind: "x402_call",
    seq: attack.journal.nextSeq(),
    actor: call.actor,
    action: call.action,
    node: call.node.name,
    agent: call.agent,
    app: call.app.label,
    appId: call.app.id,
    plan: call.plan,
    startedAt: call.startedAt,
    endedAt: Date.now(),
    ...call.outcome,
  });
}

/** After the servers stopped: what their kills left verified or settling is ended by the sweep. */
export async function sweepAfterAttack(db: Database, facilitator: X402Facilitator): Promise<number> {
  const env = facilitator.env();
  const rail = createX402Rail({
    payTo: env.X402_PAY_TO as `0x${string}`,
    facilitatorUrl: env.X402_FACILITATOR_URL ?? "",
    network: env.X402_NETWORK as `${string}:${string}`,
    asset: env.X402_ASSET as `0x${string}`,
    assetName: "USDC",
    assetVersion: "2",
    maxTimeoutSeconds: 300,
  });
  const log = pino({ level: "silent" }) as unknown as FastifyBaseLogger;
  let ended = 0;
  for (let round = 0; round < 5; round++) {
    const n = await sweepX402Payments(db, rail, log, { verifiedTtlSeconds: 0, settlingAfterSeconds: 0 });
    ended += n;
    if (n === 0) break;
  }
  return ended;
}

export interface X402PaymentRow {
  id: string;
  status: string;
  payer: string;
  nonce: string;
  amount_micros: string;
  invocation_id: string | null;
  inv_status: string | null;
  charged_cents: string | null;
}

export async function loadX402Payments(db: Database): Promise<X402PaymentRow[]> {
  return queryRows<X402PaymentRow>(
    db,
    sql`select x.id::text, x.status, x.payer, x.nonce, x.amount_micros::text, x.invocation_id::text,
          i.status as inv_status, i.charged_cents::text as charged_cents
        from x402_payments x left join invocations i on i.id = x.invocation_id`,
  );
}

/** The invocations of x402 payers (issuer `x402`): judged here, not by the wallet judge. */
export async function x402InvocationIds(db: Database): Promise<Set<string>> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select i.id::text from invocations i join users u on u.id = i.caller_user_id where u.issuer = 'x402'`,
  );
  return new Set(rows.map((row) => row.id));
}

/** The judge of the x402 calls (see the file's comment). */
export function judgeX402(
  input: {
    calls: X402CallEntry[];
    payments: X402PaymentRow[];
    transfers: X402Facilitator["transfers"];
    nodes: Node[];
  },
  flag: (kind: string, example: string) => void,
) {
  const { calls, payments, transfers } = input;
  const transferKey = (payer: string, nonce: string) => `${payer.toLowerCase()}:${nonce.toLowerCase()}`;
  const moved = new Map<string, number>();
  for (const t of transfers)
    moved.set(transferKey(t.from, t.nonce), (moved.get(transferKey(t.from, t.nonce)) ?? 0) + 1);
  const settledByInvocation = new Map<string, X402PaymentRow>();
  for (const payment of payments) {
    const key = transferKey(payment.payer, payment.nonce);
    const transfersOf = moved.get(key) ?? 0;
    if (payment.status === "settled") {
      if (payment.invocation_id) settledByInvocation.set(payment.invocation_id, payment);
      if (transfersOf !== 1)
        flag("x402: a settled payment is not one transfer", `${payment.id}: ${transfersOf}`);
      if (payment.inv_status !== "success")
        flag("x402: a settled payment's call was not answered", `${payment.id} → ${payment.invocation_id}`);
      if (Number(payment.charged_cents ?? 0) * 10_000 !== Number(payment.amount_micros))
        flag(
          "x402: a call charged other than its payment",
          `${payment.id}: ${payment.charged_cents} cents, paid ${payment.amount_micros} micros`,
        );
    } else {
      if (transfersOf > 0) flag(`x402: money moved for a ${payment.status} payment`, payment.id);
      if (payment.status !== "failed")
        flag(`x402: a payment left ${payment.status} after the sweep`, payment.id);
      if (payment.inv_status === "success" && Number(payment.charged_cents ?? 0) > 0)
        flag("x402: an unpaid call charged", `${payment.id} → ${payment.invocation_id}`);
    }
  }
  const known = new Set(payments.map((p) => transferKey(p.payer, p.nonce)));
  for (const t of transfers)
    if (!known.has(transferKey(t.from, t.nonce)))
      flag("x402: a transfer no payment records", `${t.from} nonce ${t.nonce}`);
  for (const call of calls) {
    if (call.action === "x402 replay") {
      if (call.status !== 402 && call.status !== 0 && call.status !== 404)
        flag("x402: a replayed payment was not refused", `#${call.seq} status ${call.status}`);
      continue;
    }
    const answered = call.status === 200 && (call.completed || call.chunks > 0 || !call.plan.streaming);
    if (!answered || !call.invocationId || call.toolError) continue;
    // A stream its server's crash cut off costs nothing (decision 025): its payment is never
    // settled (the sweep fails it). Any charge it did get is checked above, by its payment.
    const cut =
      !call.completed &&
      !call.aborted &&
      (call.transportError !== undefined || call.streamError !== undefined);
    if (cut) continue;
    if (call.replayed) continue;
    const payment = settledByInvocation.get(call.invocationId);
    if (!payment) flag("x402: an answered call has no settled payment", `#${call.seq} ${call.invocationId}`);
    else if (
      call.reportedCents !== undefined &&
      call.reportedCents * 10_000 !== Number(payment.amount_micros)
    )
      flag("x402: an answer reported another cost", `#${call.seq}: ${call.reportedCents} cents`);
    if (call.paidBy !== undefined && call.paidBy !== "x402")
      flag("x402: an answer says it was paid otherwise", `#${call.seq}: ${call.paidBy}`);
  }
}

/** The x402 lines of the summary table. */
export function x402Figures(calls: X402CallEntry[], payments: X402PaymentRow[], transfers: unknown[]) {
  const paid = calls.filter((call) => call.action === "x402 call");
  const replays = calls.filter((call) => call.action === "x402 replay");
  const statuses: Record<string, number> = {};
  for (const call of paid) statuses[String(call.status)] = (statuses[String(call.status)] ?? 0) + 1;
  const byStatus = (status: string) => payments.filter((p) => p.status === status).length;
  return {
    calls: `${paid.length} (${Object.entries(statuses)
      .map(([s, n]) => `${s}: ${n}`)
      .join(", ")})`,
    payments: `${payments.length}: ${byStatus("settled")} settled, ${byStatus("failed")} failed, ${byStatus("unpaid")} unpaid, ${byStatus("settling") + byStatus("verified")} open`,
    transfers: transfers.length,
    replays: `${replays.length} / ${replays.filter((call) => call.status === 402).length} refused`,
  };
}
