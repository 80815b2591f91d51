import type { CallEntry, Journal } from "./journal.ts";
import type { InvocationRow, KeySpend, Violation } from "./judge.ts";
import { contentChunks, delivered } from "./judge.ts";
import type { World } from "./world.ts";

/** What happened, in numbers: the summary table's first half. */
export interface Figures {
  calls: number;
  delivered: number;
  byStatus: Record<string, number>;
  streams: number;
  streamsAborted: number;
  chargedFromHold: number;
  coveredByPlan: number;
  free: number;
  refused402: number;
  serverErrors: number;
  injectedFailures: number;
  kills: number;
  /** Per endpoint style: calls / delivered (and how many of them streamed). */
  byStyle: Record<string, { calls: number; delivered: number; streamed: number }>;
  /** Delivered answers whose reported cost (usage, MCP charge) was compared with the charge. */
  costsReported: number;
  /** MCP tool results with `isError` (refusals and failures, costing nothing). */
  mcpToolErrors: number;
  /** MCP batches sent / refused whole / with a repeated id / members answered (decision 043). */
  mcpBatches: string;
  /** Streams their caller stopped; of them, stopped on the other process; cut short by their stop. */
  stops: number;
  stopsOnOtherNode: number;
  stopsCutShort: number;
  limitedKeyCalls: number;
  keyLimitRefusals: number;
  /** Of them, refused only because reservations of calls never charged were still in the counter. */
  keyRefusalsByUnswept: number;
  /** Limited keys' spend at the end against what their calls were charged (micro-dollars). */
  keys: string;
  events: Record<string, string>;
  harnessErrors: string[];
  /** Agents paying with x402 or MPP (agent-calls.ts): calls by rail and status, payments, transfers, captures, refusals, refunds. */
  agents?: [string, string | number][];
  /** Experiments started / ended (by outcome, by rules), and the calls they chose (decision 058). */
  experiments?: string;
  /** Oversized calls refused and price cuts tried under a dear arm (decision 063, oversized.ts). */
  oversized?: string;
  /** Sampled calls by how they were judged, and what the judges cost creators (decision 076, online-evals.ts). */
  onlineEvals?: string;
  /** Free trials and promotion codes (decision 080). */
  sponsored?: string;
  /** Issue 43: the organization's calls, charges and refusals. */
  organizations?: string;
  organizationCalls?: number;
  memberBudgetRefusals?: number;
  /** What left the product: webhook events and attempts, usage events exported (decision 068, events.ts). */
  outgoing?: string;
  outgoingCounts?: { events: number; webhookAttempts: number; exported: number };
}

export function summarize(
  journal: Journal,
  invocations: InvocationRow[],
  world: World,
  harnessErrors: string[],
  keys: KeySpend[] = [],
): Figures {
  const calls = journal.calls();
  const byStatus: Record<string, number> = {};
  for (const call of calls) byStatus[String(call.status)] = (byStatus[String(call.status)] ?? 0) + 1;
  const successes = invocations.filter((row) => row.status === "success");
  const stops = calls.filter((call) => call.stop !== undefined);
  const events: Record<string, string> = {};
  for (const kind of [
    "top_up",
    "subscribe",
    "cancel",
    "renew",
    "price",
    "revoke_key",
    "key_limit",
    "edit_plan",
    "remove_app",
    "suspend",
    "unsuspend",
    "refund",
    "dispute",
    "payout",
    "experiment",
    "label_move",
    "test_prompt",
    "eval_run",
    "online_evals",
  ] as const) {
    const statuses: Record<string, number> = {};
    for (const event of journal.events(kind))
      statuses[String(event.status)] = (statuses[String(event.status)] ?? 0) + 1;
    events[kind] = Object.entries(statuses)
      .map(([status, n]) => `${n}×${status}`)
      .join(" ");
  }
  return {
    calls: calls.length,
    delivered: calls.filter(delivered).length,
    byStatus,
    streams: calls.filter((call) => call.plan.streaming).length,
    streamsAborted: calls.filter((call) => call.aborted).length,
    chargedFromHold: successes.filter((row) => row.hold_id !== null).length,
    coveredByPlan: successes.filter((row) => row.subscription_id !== null).length,
    free: successes.filter((row) => row.caller_user_id === world.creator.id).length,
    refused402: byStatus["402"] ?? 0,
    serverErrors: calls.filter((call) => call.status >= 500).length,
    injectedFailures: calls.filter((call) => call.plan.upstream.fail !== undefined).length,
    kills: journal.events("kill").length,
    byStyle: byStyleOf(calls),
    costsReported: calls.filter((call) => delivered(call) && call.reportedCents !== undefined).length,
    mcpToolErrors: calls.filter((call) => call.toolError).length,
    mcpBatches: mcpBatchesOf(calls),
    stops: stops.length,
    stopsOnOtherNode: stops.filter((call) => call.plan.stopOnOtherNode).length,
    stopsCutShort: stops.filter(
      (call) => !call.plan.stopOnOtherNode && call.completed && call.chunks < contentChunks(call),
    ).length,
    limitedKeyCalls: calls.filter((call) => call.plan.limitedKey).length,
    keyLimitRefusals: calls.filter((call) => call.status === 402 && call.errorCode === "key_limit_reached")
      .length,
    keyRefusalsByUnswept: calls.filter((call) => {
      const refusal = call.keyRefusal;
      if (!refusal?.lone || refusal.spentMicros === undefined) return false;
      const charged = refusal.spentMicros - (refusal.unchargedReservedMicros ?? 0);
      return charged + refusal.priceCents * 10_000 <= refusal.limitCents * 10_000;
    }).length,
    keys: keys
      .map(
        (key) =>
          `${key.payer} ${key.spentMicros}/${key.chargedMicros} (${key.chargedCalls} calls, ${key.unchargedReservations} left to sweep)`,
      )
      .join(", "),
    events,
    harnessErrors,
  };
}

function mcpBatchesOf(calls: CallEntry[]): string {
  const batches = calls.filter((call) => call.plan.batch);
  const refused = batches.filter((call) => (call.batch?.answered.length ?? 0) === 0).length;
  const repeated = batches.filter((call) => call.plan.batch?.repeatedIds).length;
  const answered = batches.reduce((n, call) => n + (call.batch?.answered.length ?? 0), 0);
  return `${batches.length} / ${refused} / ${repeated} / ${answered}`;
}

function byStyleOf(calls: CallEntry[]): Figures["byStyle"] {
  const styles: Figures["byStyle"] = {};
  for (const style of [...new Set(calls.map((call) => call.plan.style))].sort()) {
    const of = calls.filter((call) => call.plan.style === style);
    styles[style] = {
      calls: of.length,
      delivered: of.filter(delivered).length,
      streamed: of.filter((call) => call.plan.streaming).length,
    };
  }
  return styles;
}

/** The summary table: figures, then violations by kind with a few examples each. */
export function formatReport(result: {
  seed: number;
  figures: Figures;
  violations: Violation[];
  journalFile: string;
}): string {
  const { figures: f, violations } = result;
  const rows: [string, string | number][] = [
    ["seed", result.seed],
    ["calls", f.calls],
    ["answers delivered (2xx, or ≥1 stream chunk)", f.delivered],
    [
      "statuses",
      Object.entries(f.byStatus)
        .map(([s, n]) => `${s}: ${n}`)
        .join(", "),
    ],
    ["charged from a hold", f.chargedFromHold],
    ["covered by a plan", f.coveredByPlan],
    ["free (owner)", f.free],
    ["streams / aborted by the client", `${f.streams} / ${f.streamsAborted}`],
    ["402s", f.refused402],
    ["5xx answers / upstream failures injected", `${f.serverErrors} / ${f.injectedFailures}`],
    ["kills (SIGKILL + restart)", f.kills],
    ...Object.entries(f.byStyle).map(([style, n]): [string, string] => [
      `${style}: calls / delivered`,
      `${n.calls} / ${n.delivered}${n.streamed > 0 ? ` (${n.streamed} streamed)` : ""}`,
    ]),
    ["delivered answers whose reported cost was checked", f.costsReported],
    ["MCP tool errors (cost nothing)", f.mcpToolErrors],
    ["MCP batches / refused whole / with a repeated id / members answered", f.mcpBatches],
    [
      "stops / on the other process / cut the stream short",
      `${f.stops} / ${f.stopsOnOtherNode} / ${f.stopsCutShort}`,
    ],
    [
      "limited-key calls / 402 key_limit_reached / by reservations not yet swept",
      `${f.limitedKeyCalls} / ${f.keyLimitRefusals} / ${f.keyRefusalsByUnswept}`,
    ],
    ["limited keys: spend / charged µ$", f.keys || "-"],
    ...(f.experiments ? [["experiments", f.experiments] as [string, string]] : []),
    ...(f.oversized ? [["oversized", f.oversized] as [string, string]] : []),
    ...(f.onlineEvals ? [["online evals", f.onlineEvals] as [string, string]] : []),
    ...(f.sponsored ? [["trials and codes", f.sponsored] as [string, string]] : []),
    ...(f.organizations ? [["organizations", f.organizations] as [string, string]] : []),
    ...(f.outgoing ? [["outgoing", f.outgoing] as [string, string]] : []),
    ...(f.agents ?? []),
    ...Object.entries(f.events).map(([kind, statuses]): [string, string] => [kind, statuses || "-"]),
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  const lines = ["", "Money attack", ...rows.map(([name, value]) => `  ${name.padEnd(width)}  ${value}`)];
  const byKind = new Map<string, string[]>();
  for (const v of violations) byKind.set(v.kind, [...(byKind.get(v.kind) ?? []), v.example]);
  lines.push("", violations.length === 0 ? "No violations." : `VIOLATIONS: ${violations.length}`);
  for (const [kind, examples] of [...byKind].sort((a, b) => b[1].length - a[1].length)) {
    lines.push(`  ${String(examples.length).padStart(5)}  ${kind}`);
    for (const example of examples.slice(0, 3)) lines.push(`         e.g. ${example}`);
  }
  if (f.harnessErrors.length > 0) {
    lines.push("", `Harness errors (actions that could not run): ${f.harnessErrors.length}`);
    for (const error of f.harnessErrors.slice(0, 5)) lines.push(`  ${error}`);
  }
  lines.push(
    "",
    `Journal of every answer: ${result.journalFile} (servers' output beside it, *-a.log, *-b.log)`,
  );
  return lines.join("\n");
}
