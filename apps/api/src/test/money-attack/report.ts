import type { Journal } from "./journal.ts";
import type { InvocationRow, Violation } from "./judge.ts";
import { delivered } from "./judge.ts";
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
  events: Record<string, string>;
  harnessErrors: string[];
}

export function summarize(
  journal: Journal,
  invocations: InvocationRow[],
  world: World,
  harnessErrors: string[],
): Figures {
  const calls = journal.calls();
  const byStatus: Record<string, number> = {};
  for (const call of calls) byStatus[String(call.status)] = (byStatus[String(call.status)] ?? 0) + 1;
  const successes = invocations.filter((row) => row.status === "success");
  const events: Record<string, string> = {};
  for (const kind of [
    "top_up",
    "subscribe",
    "cancel",
    "renew",
    "price",
    "revoke_key",
    "remove_app",
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
    events,
    harnessErrors,
  };
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
