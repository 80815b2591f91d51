import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { wrapFetchWithPayment } from "@x402/fetch";
import { sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import { Mppx, stripe as mppStripe } from "mppx/client";
import pino from "pino";
import { type Database, queryRows } from "../../db/client.ts";
import { retryOwedRefunds } from "../../modules/billing/agent-payments/balances.ts";
import { mppPaymentBook } from "../../modules/billing/agent-payments/mpp-payments.ts";
import { createMppRail } from "../../modules/billing/agent-payments/mpp-rail.ts";
import { DECLINED_PAYMENT_METHOD, type MppStripeDouble } from "../mpp-stripe-double.ts";
import {
  type SettlementMode,
  X402_TEST_PAY_TO,
  type X402Facilitator,
  x402Wallet,
} from "../x402-facilitator.ts";
import { type Attack, pickApp, pickNode } from "./attack.ts";
import { type CallOutcome, type CallPlan, makeCall } from "./calls.ts";
import { MPP_SECRET_KEY, MPP_STRIPE_SECRET_KEY } from "./cluster.ts";
import type { Prng } from "./prng.ts";
import type { AttackApp } from "./world.ts";
import type { X402PaymentRow } from "./x402-calls.ts";

/**
 * Agents without an account in the money attack (issues 30 and 40, docs/decisions/052, 064, 070,
 * 071), on both rails: x402 (`@x402/fetch`, viem wallets, the loopback facilitator) and MPP
 * (`mppx/client`'s stripe charge, shared payment tokens granted by the loopback Stripe). Every
 * payment is settled first and paid into its payer's balance; the call then runs as a wallet call
 * of the payer's account-less user. The agents pay for calls in every style with the attack's
 * faults (failing upstreams, aborted streams, Idempotency-Key retries, kills), some with a budget
 * (`promptmint-prepay-cents`) and a balance key; they call with that key until the balance is spent
 * (a 402, then they pay again), replay spent credentials, send one credential to both processes at
 * once, retry with x402's payment-identifier, and ask their balance back at random moments, also
 * while their own calls run. The facilitator fails settlements after moving the money (decision
 * 064), the Stripe double answers late or with 500s.
 *
 * The judge, after the sweeps: per payer, to the micro-dollar, what its credited payments brought
 * is what its calls were charged, what it took back, and what is left on its balance; every credited
 * x402 payment is one confirmed transfer to the receiving address and every such transfer a
 * payment; Stripe captured exactly the credited MPP payments and refunded exactly the refunded
 * refunds; nothing is left settling; every answered call was charged as a wallet call; no failed
 * call was charged; spent and doubly used credentials were refused.
 */

export type Rail = "x402" | "mpp";

/** One agent: a payer on one rail, whose fetch pays the 402s it meets. */
export interface Agent {
  rail: Rail;
  /** The x402 address, or `mpp-<n>` (the payer's card). */
  id: string;
  fetch: typeof fetch;
  /** The last credential it sent, with its request (for replays). */
  lastPayment?: { url: string; header: string; value: string; body: string };
  /** What the request carrying `lastPayment` got first. */
  lastStatus?: number;
  /** Its balance key, once an answer gave it one. */
  key?: string;
  /** The next credential is also sent at once to this process (the copy's answer in `copy`). */
  duplicateTo?: string;
  copy?: Promise<{ status: number; code?: string }>;
  /** x402: the payment-identifier the next payment names. */
  paymentId?: string;
  /**
   * x402: pays an MCP tool result's requirements (x402's MCP binding on the agents' endpoints,
   * decision 074). An agent without it calls no MCP style without credentials.
   */
  payMcp?: (required: PaymentRequired) => Promise<PaymentPayload>;
}

/** The agents of each actor (one per rail; an actor's payments are sequential), and two that cannot pay. */
export interface AgentPool {
  own: { x402: Agent; mpp: Agent }[];
  broke: { x402: Agent; mpp: Agent };
}

/** One thing an agent did, as it saw it. */
export interface AgentCallEntry extends CallOutcome {
  kind: "agent_call";
  seq: number;
  actor: number;
  rail: Rail;
  action: "paid call" | "key call" | "replay" | "identifier retry" | "refund";
  node: string;
  agent: string;
  app: string;
  appId: string;
  plan: CallPlan;
  startedAt: number;
  endedAt: number;
  /** A credential sent to both processes at once: what the copy got. */
  copy?: { node: string; status: number; code?: string };
  /** A payment-identifier retry: the invocation its first call answered. */
  firstInvocationId?: string;
  /** A refund's answer. */
  refund?: { status?: string; amountMicros?: number };
}

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

/**
 * The Stripe double's faults on captures and refunds: a 500 (the SDK's retry gets through), three
 * in a row (the capture stays pending for the sweep, a refund stays owed), late answers (the
 * money moved; past the server's 20 s the SDK's retry is answered by Stripe's idempotency).
 */
export function stripeFaults(double: MppStripeDouble, prng: Prng): void {
  let failing = 0;
  double.fault = (path) => {
    if (path !== "/v1/payment_intents" && path !== "/v1/refunds") return undefined;
    if (failing > 0) {
      failing -= 1;
      return { kind: "fail" };
    }
    const roll = prng.next();
    if (roll < 0.04) {
      failing = 2;
      return { kind: "fail" };
    }
    if (roll < 0.1) return { kind: "fail" };
    if (roll < 0.115) return { kind: "slow", ms: 21_000 };
    if (roll < 0.2) return { kind: "slow", ms: prng.int(100, 1_500) };
    return undefined;
  };
}

const codeOf = async (response: Response) => {
  const body = (await response.json().catch(() => undefined)) as Record<string, any> | undefined;
  return (body?.code ?? body?.error?.code) as string | undefined;
};

/** Sends a paying request, keeping its credential; when asked, the same credential to another process at once. */
function sendPaying(agent: Agent, url: string, init: RequestInit, header: string, value: string) {
  const body = typeof init.body === "string" ? init.body : "";
  agent.lastPayment = { url, header, value, body };
  const other = agent.duplicateTo;
  agent.duplicateTo = undefined;
  if (other) {
    const copyUrl = `${other}${new URL(url).pathname}`;
    agent.copy = fetch(copyUrl, {
      method: "POST",
      headers: init.headers,
      body,
      signal: AbortSignal.timeout(30_000),
    }).then(
      async (response) => ({ status: response.status, code: await codeOf(response) }),
      () => ({ status: 0 }),
    );
  }
  return fetch(url, init);
}

function x402Agent(facilitator: X402Facilitator, micros: bigint): Agent {
  const wallet = x402Wallet();
  // A budget is worth more than the client's default cap on one payment: the agent raises its own.
  wallet.client.setSpendControls({ maxAmountPerPayment: false });
  facilitator.mint(wallet.address, micros);
  const agent: Agent = {
    rail: "x402",
    id: wallet.address.toLowerCase(),
    fetch,
    payMcp: (required) => wallet.client.createPaymentPayload(required),
  };
  agent.fetch = wrapFetchWithPayment(async (input, init) => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    let signature = headers.get("payment-signature");
    const body = await request.text();
    const plain: RequestInit = { method: request.method, headers, body, signal: init?.signal ?? null };
    if (!signature) return fetch(request.url, plain);
    if (agent.paymentId) {
      // x402's payment-identifier: the payer names its payment (a retry names it again).
      const payload = JSON.parse(Buffer.from(signature, "base64").toString("utf8"));
      payload.extensions = {
        ...payload.extensions,
        "payment-identifier": { info: { required: false, id: agent.paymentId } },
      };
      signature = Buffer.from(JSON.stringify(payload)).toString("base64");
      headers.set("payment-signature", signature);
    }
    return sendPaying(agent, request.url, plain, "payment-signature", signature);
  }, wallet.client);
  return agent;
}

function mppAgent(double: MppStripeDouble, id: string, paymentMethod = "pm_card_visa"): Agent {
  const mppx = Mppx.create({
    polyfill: false,
    methods: [
      mppStripe.charge({
        paymentMethod,
        createToken: ({ amount, currency, expiresAt, paymentMethod: method }) =>
          double.grantToken({ paymentMethod: method, maxAmount: Number(amount), currency, expiresAt }),
      }),
    ],
  });
  const agent: Agent = { rail: "mpp", id, fetch };
  agent.fetch = async (input, init) => {
    const first = await fetch(input, init);
    if (first.status !== 402 || !/^Payment /i.test(first.headers.get("www-authenticate") ?? "")) return first;
    await first.arrayBuffer().catch(() => undefined);
    const credential = await mppx.createCredential(first);
    const headers = new Headers(init?.headers);
    headers.set("authorization", credential);
    return sendPaying(agent, String(input), { ...init, headers }, "authorization", credential);
  };
  return agent;
}

/** One agent per actor and rail, able to pay for many calls; one per rail that can pay for none. */
export function createAgents(
  facilitator: X402Facilitator,
  double: MppStripeDouble,
  prng: Prng,
  actors: number,
): AgentPool {
  const own = Array.from({ length: actors }, (_, actor) => ({
    x402: x402Agent(facilitator, BigInt(prng.int(2_000, 6_000)) * 10_000n),
    mpp: mppAgent(double, `mpp-${actor}`),
  }));
  return {
    own,
    broke: { x402: x402Agent(facilitator, 1n), mpp: mppAgent(double, "mpp-broke", DECLINED_PAYMENT_METHOD) },
  };
}

const STYLES: Record<AttackApp["kind"], CallPlan["style"][]> = {
  prompt: ["dify", "openai", "responses", "mcp-app", "mcp-catalogue"],
  workflow: ["workflow", "mcp-app", "mcp-catalogue"],
};

function planCall(prng: Prng, app: AttackApp, mcpAllowed = true): CallPlan {
  const styles = STYLES[app.kind].filter((style) => mcpAllowed || !style.startsWith("mcp"));
  const style = prng.pick(styles);
  const mcp = style === "mcp-app" || style === "mcp-catalogue";
  const streaming = !mcp && prng.chance(0.35);
  return {
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
}

const ownAgent = (attack: Attack, prng: Prng, actor: number): Agent | undefined => {
  const pool = attack.agents;
  const own = pool?.own[actor % pool.own.length];
  return own ? own[prng.chance(0.5) ? "x402" : "mpp"] : undefined;
};

/** An agent pays for one call on its rail, in any style, with the attack's faults; maybe a budget and a balance key. */
export async function agentCall(attack: Attack, prng: Prng, actor: number, given?: Agent) {
  const own = given ?? ownAgent(attack, prng, actor);
  if (!attack.agents || !own) return;
  const agent = !given && prng.chance(0.08) ? attack.agents.broke[own.rail] : own;
  const app = pickApp(attack, prng);
  // MCP without credentials is the agents' endpoints' x402 binding (decision 074): x402 agents only.
  const plan = planCall(prng, app, agent.payMcp !== undefined);
  const headers: Record<string, string> = {};
  if (prng.chance(0.35)) headers["promptmint-prepay-cents"] = String(prng.int(20, 300));
  if (!agent.key || prng.chance(0.2)) if (prng.chance(0.5)) headers["promptmint-balance-key"] = "issue";
  plan.headers = headers;
  const node = pickNode(attack, prng);
  const other = attack.cluster.nodes.find((candidate) => candidate !== node);
  // One credential to both processes at once: at most one may take it.
  if (other?.process?.isAlive() && prng.chance(0.1)) agent.duplicateTo = other.baseUrl;
  // x402's payment-identifier, retried with a new authorization below (blocking, one answer).
  const identified =
    agent.rail === "x402" &&
    !plan.streaming &&
    !plan.idempotencyKey &&
    (plan.style === "dify" || plan.style === "openai" || plan.style === "responses") &&
    prng.chance(0.35);
  agent.paymentId = identified ? `pay_attack_${crypto.randomUUID()}` : undefined;
  if (agent.rail === "x402") {
    attack.cluster.facilitator.settlePayerAs(agent.id, pickSettlement(prng));
    if (prng.chance(0.3)) attack.cluster.facilitator.mine();
  }
  await attack.inFlight.use(async () => {
    const startedAt = Date.now();
    agent.copy = undefined;
    const outcome = await makeCall(node.baseUrl, "", app.slug, plan, {}, agent.fetch, agent.payMcp).finally(
      () => {
        agent.duplicateTo = undefined;
      },
    );
    const copied = agent.copy ? await agent.copy : undefined;
    agent.copy = undefined;
    agent.lastStatus = outcome.status;
    const key = outcome.priceHeaders["promptmint-balance-key"];
    if (key) {
      if (agent === own) agent.key = key;
      outcome.priceHeaders["promptmint-balance-key"] = "(issued)";
    }
    journal(attack, { actor, action: "paid call", node, agent, app, plan, startedAt, outcome, copied });
    if (agent.paymentId && outcome.status === 200) {
      // The same payment id with a new authorization: answered from the first answer, not paid again.
      const again = Date.now();
      const retried = await makeCall(node.baseUrl, "", app.slug, plan, {}, agent.fetch, agent.payMcp);
      journal(attack, {
        actor,
        action: "identifier retry",
        node,
        agent,
        app,
        plan,
        startedAt: again,
        outcome: retried,
        firstInvocationId: outcome.invocationId,
      });
    }
    agent.paymentId = undefined;
    // The same Idempotency-Key again, with a new payment: the first answer; the payment stays on the balance.
    if (plan.idempotencyKey && outcome.status === 200 && prng.chance(0.5)) {
      const again = Date.now();
      const replayed = await makeCall(node.baseUrl, "", app.slug, plan, {}, agent.fetch, agent.payMcp);
      journal(attack, {
        actor,
        action: "paid call",
        node,
        agent,
        app,
        plan,
        startedAt: again,
        outcome: replayed,
      });
    }
  });
}

/** An agent calls with its balance key (no new payment); spent, it pays again. */
export async function keyCall(attack: Attack, prng: Prng, actor: number) {
  const pool = attack.agents?.own[actor % (attack.agents?.own.length ?? 1)];
  const holders = pool ? [pool.x402, pool.mpp].filter((candidate) => candidate.key) : [];
  const agent = holders.length > 0 ? prng.pick(holders) : undefined;
  if (!agent?.key) return agentCall(attack, prng, actor);
  const outcome = await oneKeyCall(attack, prng, actor, agent);
  if (outcome.status === 402) await agentCall(attack, prng, actor, agent);
}

async function oneKeyCall(attack: Attack, prng: Prng, actor: number, agent: Agent): Promise<CallOutcome> {
  const app = pickApp(attack, prng);
  const plan = planCall(prng, app);
  const node = pickNode(attack, prng);
  return attack.inFlight.use(async () => {
    const startedAt = Date.now();
    const outcome = await makeCall(node.baseUrl, agent.key ?? "", app.slug, plan);
    journal(attack, { actor, action: "key call", node, agent, app, plan, startedAt, outcome });
    return outcome;
  });
}

/** An agent sends a credential it already spent again (either rail): a 402, and nothing moves. */
export async function agentReplay(attack: Attack, prng: Prng, actor: number) {
  const agent = ownAgent(attack, prng, actor);
  const last = agent?.lastPayment;
  const status = agent?.lastStatus;
  if (!agent || !last || (status !== 200 && status !== 502 && status !== 503))
    return agentCall(attack, prng, actor);
  const node = pickNode(attack, prng);
  const url = new URL(last.url);
  const startedAt = Date.now();
  const outcome = emptyOutcome();
  try {
    const response = await fetch(`${node.baseUrl}${url.pathname}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        [last.header]: last.value,
      },
      body: last.body,
      signal: AbortSignal.timeout(30_000),
    });
    outcome.status = response.status;
    for (const [name, value] of response.headers)
      if (name.startsWith("promptmint-")) outcome.priceHeaders[name] = value;
    outcome.errorCode = await codeOf(response);
  } catch (error) {
    outcome.transportError = String(error).slice(0, 200);
  }
  attack.journal.add({
    kind: "agent_call",
    seq: attack.journal.nextSeq(),
    actor,
    rail: agent.rail,
    action: "replay",
    node: node.name,
    agent: agent.id,
    app: url.pathname,
    appId: "",
    plan: NO_PLAN,
    startedAt,
    endedAt: Date.now(),
    ...outcome,
  });
}

/** An agent with a key asks its whole balance back, now and then while its own calls run. */
export async function agentRefund(attack: Attack, prng: Prng, actor: number) {
  const pool = attack.agents?.own[actor % (attack.agents?.own.length ?? 1)];
  const agent = pool ? prng.pick([pool.x402, pool.mpp]) : undefined;
  if (!agent?.key) return keyCall(attack, prng, actor);
  const racing = prng.chance(0.5)
    ? Array.from({ length: prng.int(1, 3) }, () => oneKeyCall(attack, prng, actor, agent))
    : [];
  await new Promise((resolve) => setTimeout(resolve, prng.int(0, 400)));
  const node = pickNode(attack, prng);
  const startedAt = Date.now();
  const outcome = emptyOutcome();
  const refund: AgentCallEntry["refund"] = {};
  try {
    const response = await fetch(`${node.baseUrl}/api/v1/agents/refund`, {
      method: "POST",
      headers: { authorization: `Bearer ${agent.key}` },
      signal: AbortSignal.timeout(60_000),
    });
    outcome.status = response.status;
    const body = (await response.json().catch(() => undefined)) as Record<string, any> | undefined;
    outcome.errorCode = body?.code;
    refund.status = body?.status;
    refund.amountMicros = body?.amount_micros;
  } catch (error) {
    outcome.transportError = String(error).slice(0, 200);
  }
  attack.journal.add({
    kind: "agent_call",
    seq: attack.journal.nextSeq(),
    actor,
    rail: agent.rail,
    action: "refund",
    node: node.name,
    agent: agent.id,
    app: "/api/v1/agents/refund",
    appId: "",
    plan: NO_PLAN,
    startedAt,
    endedAt: Date.now(),
    ...outcome,
    refund,
  });
  await Promise.all(racing);
}

const NO_PLAN: CallPlan = {
  style: "dify",
  mode: "completion",
  streaming: false,
  upstream: {} as CallPlan["upstream"],
};

const emptyOutcome = (): CallOutcome => ({
  status: 0,
  chunks: 0,
  completed: false,
  aborted: false,
  replayed: false,
  priceHeaders: {},
});

function journal(
  attack: Attack,
  call: {
    actor: number;
    action: AgentCallEntry["action"];
    node: { name: string };
    agent: Agent;
    app: AttackApp;
    plan: CallPlan;
    startedAt: number;
    outcome: CallOutcome;
    copied?: { status: number; code?: string };
    firstInvocationId?: string;
  },
) {
  const other = attack.cluster.nodes.find((node) => node.name !== call.node.name);
  attack.journal.add({
    kind: "agent_call",
    seq: attack.journal.nextSeq(),
    actor: call.actor,
    rail: call.agent.rail,
    action: call.action,
    node: call.node.name,
    agent: call.agent.id,
    app: call.app.label,
    appId: call.app.id,
    plan: call.plan,
    startedAt: call.startedAt,
    endedAt: Date.now(),
    ...call.outcome,
    ...(call.copied ? { copy: { node: other?.name ?? "?", ...call.copied } } : {}),
    ...(call.firstInvocationId ? { firstInvocationId: call.firstInvocationId } : {}),
  });
}

/**
 * After the servers stopped: MPP captures whose answer was lost are settled again by the book's
 * sweep (Stripe's idempotency answers what was done), and refunds a kill or Stripe's failures left
 * owed are asked again with their key (balances.ts `retryOwedRefunds`), their waits made up by
 * moving `updated_at` back. The double's faults end first.
 */
export async function sweepMppAfterAttack(db: Database, double: MppStripeDouble): Promise<number> {
  double.fault = undefined;
  const rail = createMppRail(
    {
      secretKey: MPP_SECRET_KEY,
      stripeSecretKey: MPP_STRIPE_SECRET_KEY,
      stripeApiUrl: double.url,
      networkId: "internal",
      realm: "money-attack",
      challengeTtlSeconds: 300,
    },
    { timeoutMs: 10_000 },
  );
  const book = mppPaymentBook(db, rail);
  const log = pino({ level: "silent" }) as unknown as FastifyBaseLogger;
  let ended = 0;
  for (let round = 0; round < 5; round++) {
    await db.execute(
      sql`update mpp_payments set updated_at = now() - interval '1 hour' where status = 'settling'`,
    );
    await db.execute(
      sql`update agent_refunds set updated_at = now() - interval '1 hour' where status = 'owed'`,
    );
    const n = (await book.sweep(log)) + (await retryOwedRefunds(db, new Map([["mpp", { rail, book }]]), log));
    ended += n;
    if (n === 0) break;
  }
  return ended;
}

export interface MppPaymentRow {
  id: string;
  status: string;
  reference: string | null;
  payer_user_id: string;
  amount_micros: string;
}

export interface AgentRefundRow {
  id: string;
  payer_user_id: string;
  rail: string;
  status: string;
  amount_micros: string;
}

/** A payer's (issuer x402 or mpp) invocation. */
export interface PayerInvocation {
  id: string;
  caller_user_id: string;
  status: string;
  charged_cents: number;
}

/** Everything the agents' judge reads from the database after the sweeps. */
export interface AgentBooks {
  payers: { id: string; issuer: string }[];
  invocations: PayerInvocation[];
  mppPayments: MppPaymentRow[];
  refunds: AgentRefundRow[];
  /** Each payer's wallet plus held, micro-dollars. */
  balances: Map<string, number>;
}

export async function loadAgentBooks(db: Database): Promise<AgentBooks> {
  const payers = await queryRows<{ id: string; issuer: string }>(
    db,
    sql`select id::text, issuer from users where issuer in ('x402', 'mpp')`,
  );
  const invocations = (
    await queryRows<PayerInvocation & { charged_cents: string }>(
      db,
      sql`select i.id::text, i.caller_user_id::text, i.status, i.charged_cents::text as charged_cents
          from invocations i join users u on u.id = i.caller_user_id where u.issuer in ('x402', 'mpp')`,
    )
  ).map((row) => ({ ...row, charged_cents: Number(row.charged_cents) }));
  const mppPayments = await queryRows<MppPaymentRow>(
    db,
    sql`select id::text, status, reference, payer_user_id::text, amount_micros::text from mpp_payments`,
  );
  const refunds = await queryRows<AgentRefundRow>(
    db,
    sql`select id::text, payer_user_id::text, rail, status, amount_micros::text from agent_refunds`,
  );
  const balanceRows = await queryRows<{ owner_id: string; balance: string }>(
    db,
    sql`select a.owner_id::text, sum(a.balance_micros)::text as balance from ledger_accounts a
        join users u on u.id = a.owner_id
        where u.issuer in ('x402', 'mpp') and a.kind in ('wallet', 'held') group by a.owner_id`,
  );
  return {
    payers,
    invocations,
    mppPayments,
    refunds,
    balances: new Map(balanceRows.map((row) => [row.owner_id, Number(row.balance)])),
  };
}

/** The invocations of agents' payers (issuer x402 or mpp): judged here, not by the wallet judge. */
export const payerInvocationIds = (books: AgentBooks) => new Set(books.invocations.map((row) => row.id));

/** The judge of the agents' calls and money (see the file's comment). */
export function judgeAgents(
  input: {
    calls: AgentCallEntry[];
    books: AgentBooks;
    x402Payments: X402PaymentRow[];
    transfers: X402Facilitator["transfers"];
    /** What x402_clearing shows came in (micro-dollars). */
    cleared: number;
    /** What the Stripe double captured (PaymentIntents, their refunds). */
    captured: { id: string; amount: number; refunded: number }[];
  },
  flag: (kind: string, example: string) => void,
) {
  const { calls, books, x402Payments, transfers } = input;
  // Per payer: credited = charged + refunds taken + balance.
  const credited = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, micros: number) =>
    map.set(key, (map.get(key) ?? 0) + micros);
  for (const payment of [...x402Payments, ...books.mppPayments])
    if (payment.status === "credited") add(credited, payment.payer_user_id, Number(payment.amount_micros));
  const charged = new Map<string, number>();
  for (const invocation of books.invocations) {
    add(charged, invocation.caller_user_id, invocation.charged_cents * 10_000);
    if (invocation.status !== "success" && invocation.charged_cents > 0)
      flag(
        "agents: a failed call was charged",
        `${invocation.id}: ${invocation.status}, ${invocation.charged_cents} cents`,
      );
  }
  const refunded = new Map<string, number>();
  for (const refund of books.refunds) add(refunded, refund.payer_user_id, Number(refund.amount_micros));
  for (const payer of books.payers) {
    const came = credited.get(payer.id) ?? 0;
    const went =
      (charged.get(payer.id) ?? 0) + (refunded.get(payer.id) ?? 0) + (books.balances.get(payer.id) ?? 0);
    if (came !== went)
      flag(
        "agents: a payer's credited payments are not its charged calls, refunds and balance",
        `${payer.issuer} ${payer.id}: credited ${came} µ$, charged ${charged.get(payer.id) ?? 0} + refunds ${refunded.get(payer.id) ?? 0} + balance ${books.balances.get(payer.id) ?? 0} µ$`,
      );
  }

  // x402: every credited payment is one confirmed transfer to us, every transfer a payment.
  const transferKey = (payer: string, nonce: string) => `${payer.toLowerCase()}:${nonce.toLowerCase()}`;
  const toUs = transfers.filter((t) => t.to.toLowerCase() === X402_TEST_PAY_TO.toLowerCase());
  const moved = new Map<string, (typeof transfers)[number][]>();
  for (const t of toUs)
    moved.set(transferKey(t.from, t.nonce), [...(moved.get(transferKey(t.from, t.nonce)) ?? []), t]);
  for (const payment of x402Payments) {
    const transfersOf = moved.get(transferKey(payment.payer, payment.nonce)) ?? [];
    if (payment.status === "credited") {
      if (transfersOf.length !== 1 || transfersOf[0]?.transaction !== payment.tx_hash)
        flag(
          "x402: a credited payment is not one confirmed transfer to the receiving address",
          `${payment.id}: tx ${payment.tx_hash}, ${transfersOf.length} transfers ${transfersOf.map((t) => t.transaction).join(",")}`,
        );
      if (transfersOf[0] && transfersOf[0].value !== BigInt(payment.amount_micros))
        flag("x402: a transfer moved another amount than its payment", payment.id);
    } else {
      if (transfersOf.length > 0) flag(`x402: money moved to us for a ${payment.status} payment`, payment.id);
      if (payment.status !== "failed")
        flag(`x402: a payment left ${payment.status} after the sweep`, payment.id);
    }
  }
  const known = new Set(x402Payments.map((p) => transferKey(p.payer, p.nonce)));
  for (const t of transfers)
    if (!known.has(transferKey(t.from, t.nonce)))
      flag("x402: a transfer no payment records", `${t.from} nonce ${t.nonce}`);
  const received = toUs.reduce((sum, t) => sum + Number(t.value), 0);
  if (received !== input.cleared)
    flag(
      "x402: the receiving address's transfers differ from x402_clearing",
      `received ${received} µ$, x402_clearing ${input.cleared} µ$`,
    );

  // MPP: Stripe captured exactly the credited payments, and refunded exactly the refunded refunds.
  const creditedMpp = new Map(
    books.mppPayments.filter((p) => p.status === "credited").map((p) => [p.reference ?? "", p]),
  );
  const capturedIds = new Set(input.captured.map((c) => c.id));
  for (const capture of input.captured) {
    const payment = creditedMpp.get(capture.id);
    if (!payment)
      flag("mpp: a Stripe capture no credited payment records", `${capture.id}: ${capture.amount} cents`);
    else if (capture.amount * 10_000 !== Number(payment.amount_micros))
      flag(
        "mpp: a capture of another amount than its payment",
        `${capture.id}: ${capture.amount} cents, ${payment.amount_micros} µ$`,
      );
  }
  for (const payment of books.mppPayments) {
    if (payment.status === "credited" && !capturedIds.has(payment.reference ?? ""))
      flag("mpp: a credited payment Stripe never captured", `${payment.id}: ${payment.reference}`);
    if (payment.status !== "credited" && payment.status !== "failed")
      flag(`mpp: a payment left ${payment.status} after the sweep`, payment.id);
    // Decision 071: never less than Stripe's smallest card charge (50 cents).
    if (Number(payment.amount_micros) < 500_000)
      flag("mpp: a payment below Stripe's 50-cent minimum", `${payment.id}: ${payment.amount_micros} µ$`);
  }
  const stripeRefunded = input.captured.reduce((sum, c) => sum + c.refunded, 0) * 10_000;
  const refundedRefunds = books.refunds
    .filter((r) => r.rail === "mpp" && r.status === "refunded")
    .reduce((sum, r) => sum + Number(r.amount_micros), 0);
  if (stripeRefunded !== refundedRefunds)
    flag(
      "mpp: what Stripe refunded differs from the refunded refunds",
      `Stripe ${stripeRefunded} µ$, refunds marked refunded ${refundedRefunds} µ$`,
    );
  for (const refund of books.refunds)
    if (refund.rail === "x402" && refund.status !== "owed")
      flag("x402: a refund marked paid (x402 has no refund)", refund.id);

  // The calls as the agents saw them.
  const invocationOf = new Map(books.invocations.map((row) => [row.id, row]));
  const payerIds = new Set(books.payers.map((p) => p.id));
  for (const call of calls) {
    if (call.action === "replay") {
      // A credential naming an x402 payment-identifier is a retry of that payment: answered from
      // its first answer (promptmint-payment-replayed), never paid again (the books above).
      const retried = call.status === 200 && call.priceHeaders["promptmint-payment-replayed"] === "true";
      if (call.status !== 402 && call.status !== 0 && call.status !== 404 && !retried)
        flag(
          "agents: a replayed credential was not refused",
          `#${call.seq} ${call.rail} status ${call.status}`,
        );
      continue;
    }
    if (call.action === "refund") {
      if (call.status !== 200 && call.status !== 0)
        flag(
          "agents: a refund was not answered",
          `#${call.seq} ${call.rail} status ${call.status} ${call.errorCode}`,
        );
      continue;
    }
    if (call.copy) {
      // Taken: the call ran (2xx, or failed after its payment, 5xx) or its payment is pending (503).
      // A 4xx took nothing: refused (402), or refused before paying (409 a key in flight, 413, 404).
      const accepted = [call.status, call.copy.status].filter((s) => (s >= 200 && s < 300) || s >= 500);
      if (accepted.length > 1)
        flag(
          "agents: one credential taken by both processes",
          `#${call.seq} ${call.rail}: ${call.status} on ${call.node}, ${call.copy.status} on ${call.copy.node}`,
        );
    }
    if (call.action === "identifier retry") {
      if (
        call.status !== 0 &&
        (call.status !== 200 || call.priceHeaders["promptmint-payment-replayed"] !== "true")
      )
        flag(
          "x402: a payment-identifier retry was not answered from its first payment",
          `#${call.seq} status ${call.status}`,
        );
      else if (call.status === 200 && call.invocationId !== call.firstInvocationId)
        flag(
          "x402: a payment-identifier retry ran another call",
          `#${call.seq} ${call.invocationId} ≠ ${call.firstInvocationId}`,
        );
      continue;
    }
    const invocation = call.invocationId ? invocationOf.get(call.invocationId) : undefined;
    const answered = call.status === 200 && (call.completed || call.chunks > 0 || !call.plan.streaming);
    if (!answered || !call.invocationId || call.toolError) {
      if (invocation && call.status >= 400 && invocation.charged_cents > 0)
        flag(
          "agents: a refused or failed call was charged",
          `#${call.seq} ${call.invocationId} status ${call.status}`,
        );
      continue;
    }
    // A stream its server's crash cut off costs nothing (decision 025).
    const cut =
      !call.completed &&
      !call.aborted &&
      (call.transportError !== undefined || call.streamError !== undefined);
    if (cut || call.replayed) continue;
    if (
      invocation?.status !== "success" ||
      invocation.charged_cents <= 0 ||
      !payerIds.has(invocation.caller_user_id)
    )
      flag(
        "agents: an answered call has no charged call of its payer",
        `#${call.seq} ${call.rail} ${call.action} ${call.invocationId}: ${invocation ? `${invocation.status}, ${invocation.charged_cents} cents` : "no invocation"}`,
      );
    else if (call.reportedCents !== undefined && call.reportedCents !== invocation.charged_cents)
      flag(
        "agents: an answer reported another cost than charged",
        `#${call.seq}: ${call.reportedCents} ≠ ${invocation.charged_cents} cents`,
      );
    if (call.paidBy !== undefined && call.paidBy !== "wallet")
      flag(
        "agents: an answer says it was paid otherwise than from the balance",
        `#${call.seq}: ${call.paidBy}`,
      );
  }
}

/** The agents' lines of the summary table. */
export function agentFigures(
  calls: AgentCallEntry[],
  books: AgentBooks,
  x402Payments: X402PaymentRow[],
  transfers: unknown[],
  captured: { amount: number; refunded: number }[],
): [string, string | number][] {
  const statuses = (list: AgentCallEntry[]) => {
    const counts: Record<string, number> = {};
    for (const call of list) counts[String(call.status)] = (counts[String(call.status)] ?? 0) + 1;
    return `${list.length} (${Object.entries(counts)
      .map(([s, n]) => `${s}: ${n}`)
      .join(", ")})`;
  };
  const of = (rail: Rail, action: AgentCallEntry["action"]) =>
    calls.filter((call) => call.rail === rail && call.action === action);
  const payments = (rows: { status: string }[]) => {
    const counts: Record<string, number> = {};
    for (const row of rows) counts[row.status] = (counts[row.status] ?? 0) + 1;
    return `${rows.length}: ${Object.entries(counts)
      .map(([s, n]) => `${n} ${s}`)
      .join(", ")}`;
  };
  const replays = calls.filter((call) => call.action === "replay");
  const copies = calls.filter((call) => call.copy);
  const refunds = calls.filter((call) => call.action === "refund");
  const retries = calls.filter((call) => call.action === "identifier retry");
  const refundRows = (rail: Rail, status: string) =>
    books.refunds.filter((r) => r.rail === rail && r.status === status);
  const sum = (rows: { amount_micros: string }[]) => rows.reduce((a, r) => a + Number(r.amount_micros), 0);
  return [
    ["x402 paid calls (by status)", statuses(of("x402", "paid call"))],
    ["x402 balance-key calls", statuses(of("x402", "key call"))],
    ["mpp paid calls (by status)", statuses(of("mpp", "paid call"))],
    ["mpp balance-key calls", statuses(of("mpp", "key call"))],
    ["x402 payments", payments(x402Payments)],
    ["mpp payments", payments(books.mppPayments)],
    ["x402 transfers on the chain", transfers.length],
    [
      "Stripe captures / refunds",
      `${captured.length} captures, ${captured.reduce((a, c) => a + c.amount, 0)} cents; ${captured.reduce((a, c) => a + c.refunded, 0)} cents refunded`,
    ],
    [
      "replays / refused",
      `${replays.length} / ${replays.filter((c) => c.status === 402).length} (x402 ${replays.filter((c) => c.rail === "x402").length}, mpp ${replays.filter((c) => c.rail === "mpp").length})`,
    ],
    [
      "one credential to both processes / copies refused",
      `${copies.length} / ${copies.filter((c) => c.status === 402 || c.copy?.status === 402).length}`,
    ],
    [
      "payment-identifier retries (200 replayed)",
      `${retries.length} (${retries.filter((c) => c.status === 200).length})`,
    ],
    [
      "refunds asked (by status)",
      `${refunds.length}: ${JSON.stringify(
        refunds.reduce<Record<string, number>>((acc, c) => {
          const key = `${c.rail} ${c.refund?.status ?? c.status}`;
          acc[key] = (acc[key] ?? 0) + 1;
          return acc;
        }, {}),
      )}`,
    ],
    [
      "agent refunds (rows)",
      `mpp ${refundRows("mpp", "refunded").length} refunded ${sum(refundRows("mpp", "refunded"))} µ$, ${refundRows("mpp", "owed").length} owed ${sum(refundRows("mpp", "owed"))} µ$; x402 ${refundRows("x402", "owed").length} owed ${sum(refundRows("x402", "owed"))} µ$`,
    ],
  ];
}
