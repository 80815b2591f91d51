import { MICROS_PER_CENT } from "../../modules/billing/money.ts";
import { type ReconcileReport, reconcileLists } from "../../modules/billing/reconcile.ts";
import type { Node } from "./cluster.ts";
import type { CallEntry, Journal } from "./journal.ts";
import { judgeSuspensions, type SuspensionWindow } from "./suspensions.ts";
import { type AttackApp, highestVisiblePrice, pricesUntil } from "./world.ts";

/** An invocation as the database recorded it. */
export interface InvocationRow {
  id: string;
  application_id: string;
  caller_user_id: string | null;
  status: "success" | "error";
  charged_cents: number;
  hold_id: string | null;
  subscription_id: string | null;
  /** A call its creator sponsored (decision 080): paid from the creator's hold, charged 0 to its caller. */
  sponsored?: "trial" | "promotion" | null;
  /** When the call was paid for, about: recorded time minus latency (ms since epoch). */
  started_ms: number;
  recorded_ms: number;
}

/** A plan period: one the attack ended (renew) or one still running at the end. */
export interface PlanPeriod {
  subscriptionId: string;
  subscriberId: string;
  appId: string;
  subscribedAt: number;
  start: number;
  end: number;
  callsUsed: number;
  callsIncluded: number;
}

/**
 * A recorded plan period and the terms it started under (decision 044): what it allows and was
 * charged, against the terms' own figures, and whether the terms were in force at its start.
 */
export interface PeriodTerms {
  subscriptionId: string;
  periodStart: string;
  callsIncluded: number;
  /** Successful invocations counted in the period (and calls of dropped days). */
  counted: number;
  /** What its ledger transaction took, in cents (null: not paid by a transaction we posted). */
  chargedCents: number | null;
  termsVersion: number;
  termsCalls: number;
  termsPriceCents: number;
  /** The terms took effect at or before the period started. */
  inForceAtStart: boolean;
}

/** A spend-limited key at the end, once no call is in flight and every reservation was swept. */
export interface KeySpend {
  id: string;
  payer: string;
  /** The key's spend counters (`api_key_spend`), summed over its periods. */
  spentMicros: number;
  /** The most any one period's counter holds. */
  highestPeriodMicros: number;
  /** What the invocations made with the key were charged from a hold (success, `hold_id`), summed. */
  chargedMicros: number;
  chargedCalls: number;
  /** The highest limit the attack ever set (or sent) on it. */
  highestLimitCents: number;
  /** Its reservations of calls not charged still there once the servers stopped (before the final sweep). */
  unchargedReservations: number;
}

export interface Violation {
  kind: string;
  /** What the example is, with the call's journal line where there is one. */
  example: string;
}

/**
 * The rules (issue 16): every 2xx answer is charged exactly once (or counted against a plan once),
 * a stream from its first chunk; nothing else is charged; no 5xx the attack did not inject; no
 * 402 to a payer who could pay; no wallet charge while the plan had included calls left.
 */
export function judge(input: {
  journal: Journal;
  apps: AttackApp[];
  nodes: Node[];
  invocations: InvocationRow[];
  periods: PlanPeriod[];
  reconcile: ReconcileReport;
  keys: KeySpend[];
  /** The consumers the operator suspended, and when (suspensions.ts). */
  suspensions?: SuspensionWindow[];
  /** Every recorded plan period with its terms (decision 044); checked when given. */
  periodTerms?: PeriodTerms[];
}): Violation[] {
  const violations: Violation[] = [];
  const flag = (kind: string, example: string) => violations.push({ kind, example });
  const byId = new Map(input.invocations.map((row) => [row.id, row]));
  const appOf = new Map(input.apps.map((app) => [app.id, app]));
  const calls = input.journal.calls();

  for (const call of calls) {
    const app = appOf.get(call.appId);
    if (!app) continue;
    if (delivered(call) && !call.replayed)
      judgeCharge(call, app, byId.get(call.invocationId ?? ""), input.nodes, flag);
    judgeStatus(call, app, input.nodes, flag);
  }
  for (const event of input.journal.entries)
    if (event.kind !== "call" && event.kind !== "agent_call" && (event.status ?? 0) >= 500)
      flag(`${event.status} on ${event.kind}`, `#${event.seq} ${JSON.stringify(event.detail).slice(0, 300)}`);
  judgeBatches(calls, appOf, byId, input.nodes, flag);
  judgeUnanswered(calls, input.invocations, input.nodes, flag);
  judgeIdempotency(calls, flag);
  judgePlans(input.periods, input.invocations, calls, input.nodes, flag);
  judgeKeys(input.keys, calls, input.nodes, flag);
  judgeSuspensions(input.suspensions ?? [], calls, input.invocations, delivered, flag);
  judgePeriodTerms(input.periodTerms ?? [], flag);
  for (const [name, rows] of Object.entries(reconcileLists(input.reconcile)))
    for (const row of rows) flag(`reconcile: ${name}`, typeof row === "string" ? row : JSON.stringify(row));
  return violations;
}

/** The client got the answer: a 2xx blocking body, or at least one content chunk of a stream. */
export function delivered(call: CallEntry): boolean {
  if (call.status < 200 || call.status >= 300) return false;
  return call.plan.streaming ? call.chunks > 0 : call.completed;
}

type Flag = (kind: string, example: string) => void;

/** A delivered answer: exactly one successful invocation, paid by a hold or a plan, or free. */
function judgeCharge(
  call: CallEntry,
  app: AttackApp,
  row: InvocationRow | undefined,
  nodes: Node[],
  flag: Flag,
) {
  const what = call.plan.streaming ? "stream" : "answer";
  const killed = duringKill(call, nodes, RECORD_GRACE_MS) ? " (its server was killed)" : "";
  if (!call.invocationId) return flag(`${what} delivered without an invocation id`, line(call));
  // A stream our own process cut off by dying before its end is not charged (decision 025: like an
  // upstream failing mid-stream, the caller did not get a whole answer, and did not hang up).
  if (!row && call.plan.streaming && killed && !call.completed) return;
  if (!row) return flag(`${what} delivered, no invocation recorded${killed}`, line(call));
  judgeReportedCost(call, row, flag);
  if (call.owner) {
    if (row.charged_cents !== 0 || row.hold_id || row.subscription_id)
      flag("owner's own call charged", line(call));
    return;
  }
  if (row.status !== "success")
    return flag(
      call.aborted ? "abandoned stream not charged" : `${what} delivered, recorded as failed`,
      line(call),
    );
  if (row.hold_id && row.subscription_id) return flag(`${what} paid by both a hold and a plan`, line(call));
  if (row.subscription_id) return;
  // Paid by its creator (judgeSponsored checks the hold is the creator's): nothing charged to the caller.
  if (row.sponsored) {
    if (!row.hold_id || row.charged_cents !== 0) flag(`sponsored ${what} charged its caller`, line(call));
    return;
  }
  if (!row.hold_id || row.charged_cents <= 0)
    return flag(call.aborted ? "abandoned stream not charged" : `${what} delivered, not charged`, line(call));
  const charged = row.charged_cents;
  // An abandoned stream is recorded after its caller left: a decrease made meanwhile is what it
  // pays (the lower price, decision 025), so prices set shortly after its end count too.
  if (!pricesUntil(app, call.endedAt + RECORD_GRACE_MS).includes(charged))
    flag("charged a price the app never had", `${charged}¢ ${line(call)}`);
  if (charged > highestVisiblePrice(app, call.startedAt))
    flag(
      "charged above the price the caller could see",
      `${charged}¢ > ${highestVisiblePrice(app, call.startedAt)}¢ ${line(call)}`,
    );
  if (call.plan.maxPriceCents !== undefined && charged > call.plan.maxPriceCents)
    flag(
      "charged above the caller's maximum price",
      `${charged}¢ > ${call.plan.maxPriceCents}¢ ${line(call)}`,
    );
}

/**
 * What the answer said it cost (decision 029: usage's `charged_cents` of a blocking answer or a
 * stream's last event, an MCP result's charge) is what the wallet paid: the invocation's charge
 * when a hold paid it, 0 when a plan covered it or it was free. A stream left early says nothing.
 */
function judgeReportedCost(call: CallEntry, row: InvocationRow, flag: Flag) {
  const spent = row.hold_id && !row.sponsored ? row.charged_cents : 0;
  const header = call.priceHeaders["promptmint-charged"];
  const headerCents = header ? Math.round(Number.parseFloat(header) * 100) : undefined;
  if (headerCents !== undefined && headerCents !== spent)
    flag(
      "Promptmint-Charged header other than what was charged",
      `${header}, charged ${spent}¢ ${line(call)}`,
    );
  if (call.reportedCents !== undefined && call.reportedCents !== spent)
    flag(
      "answer reported a cost other than what was charged",
      `reported ${call.reportedCents}¢ (${call.paidBy}), charged ${spent}¢ ${line(call)}`,
    );
  const payer =
    (row.hold_id && row.sponsored) ||
    (row.hold_id ? "wallet" : row.subscription_id ? "plan" : call.owner ? "owner" : "free");
  if (call.paidBy !== undefined && call.paidBy !== payer)
    flag(
      "answer named another payer than the one charged",
      `paid_by ${call.paidBy}, ${payer} paid ${line(call)}`,
    );
}

/** No 5xx or broken stream the attack did not inject, no dropped connection outside a kill, no unfair 402. */
function judgeStatus(call: CallEntry, app: AttackApp, nodes: Node[], flag: Flag) {
  const injected = call.plan.upstream.fail !== undefined;
  if (call.status >= 500 && !injected) flag(`${call.status} without an injected failure`, line(call));
  if (call.streamError && !injected) flag("stream error without an injected failure", line(call));
  if (call.status === 0 && !call.aborted && !duringKill(call, nodes))
    flag("connection failed while its server was up", `${call.transportError} ${line(call)}`);
  const stopNodeDown = duringKill({ ...call, node: call.stopNode ?? call.node }, nodes);
  if (call.stop && (call.stop.status >= 500 || (call.stop.status === 0 && !stopNodeDown)))
    flag(`stop answered ${call.stop.status}`, line(call));
  // Stops live in the process holding the stream (running-tasks.ts): the other one stops nothing.
  if (call.stop && call.plan.stopOnOtherNode && call.completed && call.chunks < contentChunks(call))
    flag("a stop sent to the other process cut the stream", line(call));
  // A key's limit refused a call it had room for: judged only for a call alone on its key, on the
  // counter as it stood. (The counter may hold more than the key's calls were charged: reservations
  // of calls a killed process never recorded stay in it until swept, decision 035; such refusals
  // are counted in the report, not flagged.)
  const keyRefusal = call.keyRefusal;
  if (keyRefusal?.lone && keyRefusal.spentMicros !== undefined) {
    const after = keyRefusal.spentMicros + keyRefusal.priceCents * MICROS_PER_CENT;
    if (after <= keyRefusal.limitCents * MICROS_PER_CENT)
      flag(
        "key_limit_reached with room under the limit",
        `spend ${keyRefusal.spentMicros} µ$ + price ≤ ${keyRefusal.priceCents}¢ ≤ limit ${keyRefusal.limitCents}¢ ${line(call)}`,
      );
  }
  // The owner's own call has no price: it holds its worst-case model cost from the owner's wallet
  // (decision 062), so its 402 is judged against a bound of that hold (held money is not usable:
  // it is the owner's other calls' holds).
  if (call.status === 402 && call.refusal && !call.refusal.topUpOverlapped && call.owner) {
    const bound = ownerCallHoldBoundCents(call);
    if (call.refusal.walletCents >= bound)
      flag(
        "402 with the owner's model cost in the wallet",
        `wallet ${call.refusal.walletCents}¢, the call's worst case ≤ ${bound}¢ ${line(call)}`,
      );
  } else if (call.status === 402 && call.refusal && !call.refusal.topUpOverlapped) {
    const price = highestVisiblePrice(app, call.startedAt);
    const { walletCents, heldCents } = call.refusal;
    // Money in holds already recalled but still open is not the caller's to use: the process
    // holding it closes them once its calls in flight end, and a killed process never does (the
    // sweeper closes them when they expire: the crash window of decisions 018 and 025).
    const recalled = call.refusal.recalledHeldCents ?? 0;
    if (walletCents + heldCents - recalled >= price)
      flag(
        walletCents >= price ? "402 with the price in the wallet" : "402 with the price held in leases",
        `wallet ${walletCents}¢ + unspent held ${heldCents}¢, price ≤ ${price}¢ ${line(call)}`,
      );
  }
}

/**
 * At least what an owner's call holds (decision 062): the dearest model an attack app's version can
 * serve (gpt-4: 30 µ$ an input token, 60 an output token, up to 1000 tokens out: the experiments'
 * dear version), the input counted as the input bound counts it (a token per byte of what the
 * caller sends) for the oversized filler, plus 20,000 tokens for the prompt, the message and a
 * tools array's framing.
 */
function ownerCallHoldBoundCents(call: CallEntry): number {
  const inputTokens = (call.plan.oversize?.bytes ?? 0) + 20_000;
  return Math.ceil((inputTokens * 30 + 1_000 * 60) / MICROS_PER_CENT);
}

/**
 * Whether the call's server died while it ran, or, with `afterMs`, that long after the caller saw
 * its end (an abandoned stream is recorded after its caller hung up: a kill in between loses the
 * record, the crash window decision 025 accepts).
 */
function duringKill(call: CallEntry, nodes: Node[], afterMs = 0): boolean {
  const node = nodes.find((candidate) => candidate.name === call.node);
  return (node?.downtimes ?? []).some(
    (down) =>
      down.from <= call.endedAt + afterMs && (down.to ?? Number.POSITIVE_INFINITY) >= call.startedAt - 1000,
  );
}

/**
 * Charges no client saw an answer for: failed calls charged, and, per (payer, app), more charged
 * invocations without a delivered answer than calls whose outcome the client never learned (a
 * connection cut by a kill may lose the answer of a charged call, a stream left before its first
 * chunk may be charged once; nothing else may).
 */
function judgeUnanswered(calls: CallEntry[], invocations: InvocationRow[], nodes: Node[], flag: Flag) {
  const seen = new Set(calls.filter(delivered).map((call) => call.invocationId));
  // A batch's answered members are delivered answers too (judgeBatches checks each one's charge).
  for (const call of calls)
    for (const member of call.batch?.answered ?? []) if (member.invocationId) seen.add(member.invocationId);
  // Calls that learned their invocation's id and still got no answer: a stream that ended before
  // any content (stopped, failed: a workflow run or a Responses stream names its id first), a
  // refusal. Nothing may be charged for them, unless a kill left their end unknown.
  const undelivered = new Map<string, CallEntry>();
  for (const call of calls)
    if (call.invocationId && !delivered(call) && !seen.has(call.invocationId))
      undelivered.set(call.invocationId, call);
  const unknownOutcomes = new Map<string, number>();
  for (const call of calls)
    if (!call.invocationId && (call.status === 0 || (call.plan.streaming && call.chunks === 0)))
      unknownOutcomes.set(
        pair(call.payerId, call.appId),
        // A batch whose answer was lost may have run each of its requests.
        (unknownOutcomes.get(pair(call.payerId, call.appId)) ?? 0) + (call.plan.batch?.members ?? 1),
      );
  const unmatched = new Map<string, string[]>();
  for (const row of invocations) {
    const paid = row.hold_id !== null || row.subscription_id !== null || row.charged_cents > 0;
    if (!paid) continue;
    if (row.status !== "success") flag("failed call charged", row.id);
    else if (seen.has(row.id)) continue;
    else if (undelivered.has(row.id)) {
      const call = undelivered.get(row.id) as CallEntry;
      const unknown =
        call.aborted || call.transportError !== undefined || duringKill(call, nodes, RECORD_GRACE_MS);
      if (!unknown) flag("charged, its client got no content", line(call));
    } else {
      const key = pair(row.caller_user_id ?? "", row.application_id);
      unmatched.set(key, [...(unmatched.get(key) ?? []), row.id]);
    }
  }
  for (const [key, ids] of unmatched) {
    const allowed = unknownOutcomes.get(key) ?? 0;
    for (const id of ids.slice(allowed)) flag("charged without a delivered answer", `invocation ${id}`);
  }
}

/**
 * MCP batches (decision 043): a batch with a repeated id must be refused whole, so it answers
 * nothing; whatever any batch answered is judged like a single call's answer (one successful
 * invocation, charged once, the cost it reported), each by its own invocation; no two answers
 * name one invocation, and a batch answers no more members than the requests it held. What it
 * refused, notifications included, must cost nothing: judgeUnanswered flags any charge that no
 * delivered answer names.
 */
function judgeBatches(
  calls: CallEntry[],
  appOf: Map<string, AttackApp>,
  byId: Map<string, InvocationRow>,
  nodes: Node[],
  flag: Flag,
) {
  for (const call of calls) {
    const shape = call.plan.batch;
    if (!shape) continue;
    const answered = call.batch?.answered ?? [];
    if (shape.repeatedIds && answered.length > 0)
      flag("batch with a repeated id answered", `${answered.length} answers ${line(call)}`);
    if (answered.length > shape.members)
      flag("batch answered more members than its requests", `${answered.length} answers ${line(call)}`);
    const ids = answered.flatMap((member) => (member.invocationId ? [member.invocationId] : []));
    if (new Set(ids).size < ids.length) flag("one invocation answered twice in a batch", line(call));
    const app = appOf.get(call.appId);
    if (!app) continue;
    for (const member of answered) {
      if (member.toolError || !member.invocationId) continue;
      const single: CallEntry = {
        ...call,
        status: 200,
        completed: true,
        invocationId: member.invocationId,
        reportedCents: member.reportedCents,
        paidBy: member.paidBy,
        batch: undefined,
      };
      judgeCharge(single, app, byId.get(member.invocationId), nodes, flag);
    }
  }
}

/** How long after its caller saw its end a call may still be recorded (an abandoned stream's record). */
const RECORD_GRACE_MS = 5_000;

const pair = (payerId: string, appId: string) => `${payerId}/${appId}`;

/** One idempotency key, one answer: every delivered answer for a key names the same invocation. */
function judgeIdempotency(calls: CallEntry[], flag: Flag) {
  const answers = new Map<string, Set<string>>();
  for (const call of calls) {
    const key = call.plan.idempotencyKey;
    if (!key || !delivered(call) || !call.invocationId) continue;
    answers.set(key, (answers.get(key) ?? new Set()).add(call.invocationId));
  }
  for (const [key, ids] of answers)
    if (ids.size > 1)
      flag("one idempotency key answered by several invocations", `${key}: ${[...ids].join(", ")}`);
}

/** While a plan period had included calls left, no call of that pair started paid from the wallet. */
/**
 * While a plan period had included calls left, no call of that pair was paid from the wallet. A
 * period can end with calls left although it had none free when a wallet call was recorded: calls
 * in flight held them and then gave them back (they failed, were left before any content, or died
 * with their server). Each such call gives back at most one, so a period whose calls left are no
 * more than the pair's undelivered calls in it is explained; any larger shortfall is flagged.
 */
function judgePlans(
  periods: PlanPeriod[],
  invocations: InvocationRow[],
  calls: CallEntry[],
  nodes: Node[],
  flag: Flag,
) {
  for (const period of periods) {
    if (period.callsUsed >= period.callsIncluded) continue;
    const from = Math.max(period.start, period.subscribedAt);
    const givenBack = calls.filter(
      (call) =>
        call.payerId === period.subscriberId &&
        call.appId === period.appId &&
        call.startedAt <= period.end &&
        call.endedAt >= from &&
        (!delivered(call) ||
          (!call.completed && !call.aborted) ||
          (call.plan.streaming && !call.completed && duringKill(call, nodes, RECORD_GRACE_MS))),
    ).length;
    if (period.callsIncluded - period.callsUsed <= givenBack) continue;
    const walletPaid = invocations.filter(
      (row) =>
        row.hold_id !== null &&
        row.status === "success" &&
        row.caller_user_id === period.subscriberId &&
        row.application_id === period.appId &&
        row.started_ms >= from &&
        row.recorded_ms < period.end,
    );
    for (const row of walletPaid)
      flag(
        "wallet charged while the plan had included calls",
        `invocation ${row.id}; subscription ${period.subscriptionId} used ${period.callsUsed}/${period.callsIncluded}`,
      );
  }
}

/**
 * Each plan period by its own terms, never the plan's current ones: it allows what its terms
 * allow, counted no more, was charged their price, and its terms were in force when it started (a
 * cut or a raise never reaches a period before its notice ran).
 */
function judgePeriodTerms(periods: PeriodTerms[], flag: Flag) {
  for (const period of periods) {
    const what = `subscription ${period.subscriptionId} period ${period.periodStart} (terms v${period.termsVersion}: ${period.termsCalls} calls, ${period.termsPriceCents}¢)`;
    if (period.callsIncluded !== period.termsCalls)
      flag("plan period allows other than its terms", `${what} allows ${period.callsIncluded}`);
    if (period.counted > period.callsIncluded)
      flag("plan period counted more calls than its terms allow", `${what} counted ${period.counted}`);
    if (period.chargedCents !== null && period.chargedCents !== period.termsPriceCents)
      flag("plan period charged other than its terms' price", `${what} charged ${period.chargedCents}¢`);
    if (!period.inForceAtStart) flag("plan period started under terms not yet in force", what);
  }
}

/**
 * The key reservation counters (decision 035), once no call is in flight and every reservation was
 * swept: a key limited since its creation reserved every wallet-paid call it made, so its counters
 * hold exactly what its calls were charged from holds (a refused or uncharged call gave its
 * reservation back; the sweep gives back a killed process's). Summed over periods, so that a call
 * reserved just before a period boundary and recorded after it counts once either way. No period
 * may hold more than the highest limit the key ever had.
 */
function judgeKeys(keys: KeySpend[], calls: CallEntry[], nodes: Node[], flag: Flag) {
  for (const key of keys) {
    if (key.spentMicros !== key.chargedMicros)
      flag(
        "key spend differs from what its calls were charged",
        `${key.payer}'s key ${key.id}: spend ${key.spentMicros} µ$, ${key.chargedCalls} calls charged ${key.chargedMicros} µ$`,
      );
    if (key.highestPeriodMicros > key.highestLimitCents * MICROS_PER_CENT)
      flag(
        "key spent above its limit",
        `${key.payer}'s key ${key.id}: ${key.highestPeriodMicros} µ$ in a period, highest limit ${key.highestLimitCents}¢`,
      );
    // A call that ends unpaid gives its reservation back before it answers (or, abandoned, before
    // its server stops): only the calls a kill cut off may leave one for the sweeper.
    const cutByKills = calls.filter(
      (call) => call.plan.limitedKey && call.payer === key.payer && duringKill(call, nodes, RECORD_GRACE_MS),
    ).length;
    if (key.unchargedReservations > cutByKills)
      flag(
        "key reservations of uncharged calls not given back",
        `${key.payer}'s key ${key.id}: ${key.unchargedReservations} left, ${cutByKills} of its calls ran during a kill`,
      );
  }
}

/** A whole stream's content chunks: one per word the model sends, a workflow run's one answer. */
export const contentChunks = (call: CallEntry) =>
  call.plan.style === "workflow" ? 1 : call.plan.upstream.words;

/** A call's journal line: enough to find it in the JSONL log and to replay its story. */
export function line(call: CallEntry): string {
  const how = `${call.plan.style} ${call.plan.mode} ${call.plan.streaming ? "stream" : "blocking"}${call.plan.limitedKey ? " limited key" : ""}`;
  const abort =
    (call.plan.abortAfterChunks !== undefined ? ` abort@${call.plan.abortAfterChunks}` : "") +
    (call.stop
      ? ` stop@${call.stop.afterChunks}${call.plan.stopOnOtherNode ? " on the other node" : ""} → ${call.stop.status}`
      : "") +
    (call.errorCode ? ` ${call.errorCode}` : "");
  const fail = call.plan.upstream.fail ? ` upstream ${call.plan.upstream.fail}` : "";
  const batch = call.plan.batch
    ? ` batch of ${call.plan.batch.members}${call.plan.batch.repeatedIds ? " with a repeated id" : ""}${call.plan.batch.notifications ? ` + ${call.plan.batch.notifications} notifications` : ""}`
    : "";
  return `#${call.seq} actor ${call.actor} ${call.action} on ${call.node}: ${call.payer} → ${call.app} (${how}${batch}${abort}${fail}) → ${call.status}${call.plan.streaming ? `, ${call.chunks} chunks` : ""}${call.invocationId ? ` id ${call.invocationId}` : ""}`;
}
