import { sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import { type Database, queryRows } from "../../db/client.ts";
import { sweepX402Payments } from "../../modules/billing/agent-payments/x402-payments.ts";
import type { ReceivedTransfer } from "../../modules/billing/agent-payments/x402-rail.ts";
import { createX402Rail } from "../../modules/billing/agent-payments/x402-rail.ts";
import {
  type SettlementMode,
  X402_TEST_PAY_TO,
  type X402Facilitator,
  x402Wallet,
} from "../x402-facilitator.ts";
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
 * already spent. The facilitator answers some settlements the ways a real one fails after
 * moving the money (decision 064: pending, a 500, success with an empty transaction, a lost
 * answer) or the payer burns its nonce meanwhile, and broadcast transfers are mined at random
 * times. The judge: every settled payment is one answered call, charged exactly its amount, and
 * one confirmed transfer to the receiving address with its transaction; every transfer to that
 * address is a settled payment (its call answered) or a credited one (the money held for its
 * payer); no failed or refused call settled anything; no replay was accepted; and the receiving
 * address got exactly what x402_clearing shows, to the micro-dollar.
 */

/** How the facilitator answers an agent's next settlements: mostly plainly, else a failure after broadcast. */
const SETTLEMENTS: [SettlementMode, number][] = [
  ["settle", 60],
  ["pending", 10],
  ["error-after-move", 8],
  ["empty-transaction", 8],
  ["lost", 8],
  ["burn", 6],
];

function pickSettlement(prng: Prng): SettlementMode {
  let roll = prng.int(0, SETTLEMENTS.reduce((sum, [, weight]) => sum + weight, 0) - 1);
  for (const [mode, weight] of SETTLEMENTS) {
    if (roll < weight) return mode;
    roll -= weight;
  }
  return "settle";
}

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
  // Decision 064: how the facilitator answers this call's settlement; what it broadcast lands now and then.
  attack.cluster.facilitator.settlePayerAs(agent.address, pickSettlement(prng));
  if (prng.chance(0.3)) attack.cluster.facilitator.mine();
  await attack.inFlight.use(async () => {
    const startedAt = Date.now();
    const outcome = await makeCall(node.baseUrl, "", app.slug, plan, {}, agent.fetch, (required) =>
      agent.client.createPaymentPayload(required),
    );
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
      const replayed = await makeCall(node.baseUrl, "", app.slug, plan, {}, agent.fetch, (required) =>
        agent.client.createPaymentPayload(required),
      );
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

/** The attack's rail, as the servers have it (the loopback facilitator and its chain). */
function attackRail(facilitator: X402Facilitator) {
  const env = facilitator.env();
  return createX402Rail({
    payTo: env.X402_PAY_TO as `0x${string}`,
    facilitatorUrl: env.X402_FACILITATOR_URL ?? "",
    network: env.X402_NETWORK as `${string}:${string}`,
    asset: env.X402_ASSET as `0x${string}`,
    assetName: "USDC",
    assetVersion: "2",
    maxTimeoutSeconds: 300,
    rpcUrl: env.X402_RPC_URL,
  });
}

/**
 * After the servers stopped: what the facilitator broadcast is mined (or reverts), and what their
 * kills and the facilitator's failures left verified or settling is ended by the sweep. Nothing is
 * broadcast any more, so an authorization the chain shows unused now never moves money: the sweep
 * may take it as expired.
 */
export async function sweepAfterAttack(db: Database, facilitator: X402Facilitator): Promise<number> {
  facilitator.mine();
  const rail = attackRail(facilitator);
  const log = pino({ level: "silent" }) as unknown as FastifyBaseLogger;
  let ended = 0;
  for (let round = 0; round < 5; round++) {
    const n = await sweepX402Payments(db, rail, log, {
      verifiedTtlSeconds: 0,
      settlingAfterSeconds: 0,
      expiryMarginSeconds: -86_400,
    });
    ended += n;
    if (n === 0) break;
  }
  return ended;
}

/** What the chain moved to the receiving address (for reconcile's comparison with x402_clearing). */
export async function x402TransfersAfterAttack(facilitator: X402Facilitator): Promise<ReceivedTransfer[]> {
  return (await attackRail(facilitator).transfersToPayTo()) ?? [];
}

/** What x402_clearing says came in, in micro-dollars (minus its balance). */
export async function x402Cleared(db: Database): Promise<number> {
  const [row] = await queryRows<{ balance: string }>(
    db,
    sql`select coalesce(sum(balance_micros), 0)::text as balance from ledger_accounts where kind = 'x402_clearing'`,
  );
  return 0 - Number(row?.balance ?? 0) || 0;
}

export interface X402PaymentRow {
  id: string;
  status: string;
  tx_hash: string | null;
  payer_user_id: string;
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
    sql`select x.id::text, x.status, x.tx_hash, x.payer_user_id::text, x.payer, x.nonce, x.amount_micros::text, x.invocation_id::text,
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
    /** What x402_clearing shows came in (micro-dollars). */
    cleared: number;
    /** Each payer user's credit (its wallet), micro-dollars. */
    credits: Map<string, number>;
  },
  flag: (kind: string, example: string) => void,
) {
  const { calls, payments, transfers } = input;
  const transferKey = (payer: string, nonce: string) => `${payer.toLowerCase()}:${nonce.toLowerCase()}`;
  const toUs = transfers.filter((t) => t.to.toLowerCase() === X402_TEST_PAY_TO.toLowerCase());
  const moved = new Map<string, (typeof transfers)[number][]>();
  for (const t of toUs)
    moved.set(transferKey(t.from, t.nonce), [...(moved.get(transferKey(t.from, t.nonce)) ?? []), t]);
  const settledByInvocation = new Map<string, X402PaymentRow>();
  const creditedBy = new Map<string, number>();
  for (const payment of payments) {
    const key = transferKey(payment.payer, payment.nonce);
    const transfersOf = moved.get(key) ?? [];
    if (payment.status === "settled" || payment.status === "credited") {
      // No settled or credited payment without a confirmed transfer to us: its own transaction.
      if (transfersOf.length !== 1 || transfersOf[0]?.transaction !== payment.tx_hash)
        flag(
          `x402: a ${payment.status} payment is not one confirmed transfer to the receiving address`,
          `${payment.id}: tx ${payment.tx_hash}, ${transfersOf.length} transfers ${transfersOf.map((t) => t.transaction).join(",")}`,
        );
      if (transfersOf[0] && transfersOf[0].value !== BigInt(payment.amount_micros))
        flag("x402: a transfer moved another amount than its payment", `${payment.id}`);
    }
    if (payment.status === "settled") {
      if (payment.invocation_id) settledByInvocation.set(payment.invocation_id, payment);
      if (payment.inv_status !== "success")
        flag("x402: a settled payment's call was not answered", `${payment.id} → ${payment.invocation_id}`);
      if (Number(payment.charged_cents ?? 0) * 10_000 !== Number(payment.amount_micros))
        flag(
          "x402: a call charged other than its payment",
          `${payment.id}: ${payment.charged_cents} cents, paid ${payment.amount_micros} micros`,
        );
    } else if (payment.status === "credited") {
      // Charged on chain, its answer never given: the money is its payer's.
      creditedBy.set(
        payment.payer_user_id,
        (creditedBy.get(payment.payer_user_id) ?? 0) + Number(payment.amount_micros),
      );
      if (payment.inv_status === "success" && Number(payment.charged_cents ?? 0) > 0)
        flag("x402: a credited payment's call was charged", `${payment.id} → ${payment.invocation_id}`);
    } else {
      if (transfersOf.length > 0) flag(`x402: money moved to us for a ${payment.status} payment`, payment.id);
      if (payment.status !== "failed")
        flag(`x402: a payment left ${payment.status} after the sweep`, payment.id);
      if (payment.inv_status === "success" && Number(payment.charged_cents ?? 0) > 0)
        flag("x402: an unpaid call charged", `${payment.id} → ${payment.invocation_id}`);
    }
  }
  for (const [payerUserId, micros] of creditedBy)
    if ((input.credits.get(payerUserId) ?? 0) !== micros)
      flag(
        "x402: a payer's credit is not what its credited payments kept",
        `${payerUserId}: ${input.credits.get(payerUserId) ?? 0} µ$, credited ${micros} µ$`,
      );
  const known = new Set(payments.map((p) => transferKey(p.payer, p.nonce)));
  for (const t of transfers)
    if (!known.has(transferKey(t.from, t.nonce)))
      flag("x402: a transfer no payment records", `${t.from} nonce ${t.nonce}`);
  const received = toUs.reduce((sum, t) => sum + Number(t.value), 0);
  if (received !== input.cleared)
    flag(
      "x402: the receiving address's transfers differ from x402_clearing",
      `received ${received} µ$, x402_clearing ${input.cleared} µ$`,
    );
  for (const call of calls) {
    if (call.action === "x402 replay") {
      if (call.status !== 402 && call.status !== 0 && call.status !== 404)
        flag("x402: a replayed payment was not refused", `#${call.seq} status ${call.status}`);
      continue;
    }
    const answered = call.status === 200 && (call.completed || call.chunks > 0 || !call.plan.streaming);
    if (!answered || !call.invocationId || call.toolError) continue;
    // A stream its server's crash cut off costs nothing (decision 025): its payment is never
    // settled (the sweep fails it, or credits its payer). Any charge it did get is checked above.
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

/** Each x402 payer user's credit (its wallet), for the judge. */
export async function x402Credits(db: Database): Promise<Map<string, number>> {
  const rows = await queryRows<{ owner_id: string; balance: string }>(
    db,
    sql`select a.owner_id::text, a.balance_micros::text as balance from ledger_accounts a
        join users u on u.id = a.owner_id where u.issuer = 'x402' and a.kind = 'wallet'`,
  );
  return new Map(rows.map((row) => [row.owner_id, Number(row.balance)]));
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
    payments: `${payments.length}: ${byStatus("settled")} settled, ${byStatus("credited")} credited to their payer, ${byStatus("failed")} failed, ${byStatus("unpaid")} unpaid, ${byStatus("settling") + byStatus("verified")} open`,
    transfers: transfers.length,
    replays: `${replays.length} / ${replays.filter((call) => call.status === 402).length} refused`,
  };
}
