import type { ArmStats, ExperimentDetail } from "@promptmint/contracts";
import type { ReactNode } from "react";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Money } from "../../components/ui/money";
import { formatDuration, formatNumber, formatRate } from "../../lib/format";
import { ARM_COLORS, Charts } from "./experiment-charts";
import { Significance } from "./experiment-significance";

/**
 * Rows an other part adds to the arms' table, below the built-in ones: a metric's name and each
 * arm's cell. The slot for the online-eval score (H3: features/releases/online-evals-*.tsx).
 */
export type ArmRow = [string, (arm: ArmStats) => ReactNode];

export function Figures({
  detail,
  live,
  onPromote,
  armRows = [],
}: {
  detail: ExperimentDetail;
  live: boolean;
  onPromote: (version: number) => void;
  /** More rows per arm (the online-eval score), shown after the built-in figures. */
  armRows?: ArmRow[];
}) {
  // A workflow's calls have no model cost from us (the note says so): no row for it. Their tokens
  // are what the provider reported, when it does.
  const metered = detail.model_cost_note === null;
  const rows: [string, (arm: ArmStats) => ReactNode][] = [
    ["Share", (arm) => `${arm.percent}%`],
    ["Calls", (arm) => formatNumber(arm.calls)],
    ["Success rate", (arm) => formatRate(arm.success_rate)],
    [
      "Latency p50 / p95",
      (arm) => `${formatDuration(arm.latency_p50_ms)} / ${formatDuration(arm.latency_p95_ms)}`,
    ],
    ["Tokens in / out", (arm) => `${formatNumber(arm.input_tokens)} / ${formatNumber(arm.output_tokens)}`],
    ...(metered
      ? ([["Model cost", (arm) => <Money micros={arm.model_cost_micros} />]] satisfies [
          string,
          (arm: ArmStats) => ReactNode,
        ][])
      : []),
    ["Revenue", (arm) => <Money micros={arm.revenue_micros} />],
    ["Platform fee", (arm) => <Money micros={arm.fee_micros} />],
    ["Margin", (arm) => <Money micros={arm.margin_micros} />],
    [
      "Margin per call",
      (arm) =>
        arm.margin_per_call_micros === null ? "–" : <Money micros={Math.round(arm.margin_per_call_micros)} />,
    ],
    ["Refunded (failed) calls", (arm) => formatNumber(arm.refunded_calls)],
    ...armRows,
  ];
  const { experiment } = detail;
  return (
    <>
      {detail.model_cost_note && <Alert tone="info">{detail.model_cost_note}</Alert>}
      <div className="overflow-x-auto">
        <table className="w-full min-w-[28rem] text-sm">
          <caption className="sr-only">Each arm's figures</caption>
          <thead>
            <tr className="border-b border-slate-200 text-left">
              <th scope="col" className="py-2 pr-4 font-medium text-slate-500">
                Metric
              </th>
              {detail.arms.map((arm, i) => (
                <th key={arm.version} scope="col" className="py-2 pr-4 font-semibold text-slate-900">
                  <span className="flex items-center gap-2">
                    <span
                      className="size-2.5 rounded-full"
                      style={{ background: ARM_COLORS[i] }}
                      aria-hidden="true"
                    />
                    v{arm.version}
                    {arm.version === experiment.control_version && <Badge>control</Badge>}
                  </span>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(([label, cell]) => (
              <tr key={label} className="border-b border-slate-100">
                <th scope="row" className="py-2 pr-4 text-left font-normal text-slate-500">
                  {label}
                </th>
                {detail.arms.map((arm) => (
                  <td key={arm.version} className="py-2 pr-4 tabular-nums text-slate-900">
                    {cell(arm)}
                  </td>
                ))}
              </tr>
            ))}
            {live && (
              <tr>
                <td />
                {detail.arms.map((arm) => (
                  <td key={arm.version} className="py-3 pr-4">
                    <Button size="sm" variant="secondary" onClick={() => onPromote(arm.version)}>
                      Promote v{arm.version}
                    </Button>
                  </td>
                ))}
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <Significance comparisons={detail.comparisons} minCalls={experiment.rules.min_calls} />
      <Charts detail={detail} />
    </>
  );
}
