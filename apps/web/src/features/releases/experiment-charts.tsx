import type { ArmSeriesPoint, ExperimentDetail } from "@promptmint/contracts";
import { chartColors } from "../../components/charts/chart-theme";
import { type ChartSeries, TimeSeriesChart } from "../../components/charts/time-series-chart";

/** One colour per arm, in arm order (at most five arms). */
export const ARM_COLORS = [
  chartColors.primary,
  chartColors.secondary,
  "#f59e0b",
  chartColors.success,
  "#db2777",
];

export type SeriesRow = { date: string } & Record<`v${number}`, number>;

export const METRICS: {
  title: string;
  unit: "count" | "dollars" | "seconds";
  value: (p: ArmSeriesPoint) => number | null;
}[] = [
  { title: "Calls", unit: "count", value: (p) => p.calls },
  {
    title: "Success rate (%)",
    unit: "count",
    value: (p) => (p.success_rate === null ? null : p.success_rate * 100),
  },
  { title: "Revenue", unit: "dollars", value: (p) => p.revenue_micros / 1_000_000 },
  { title: "Margin", unit: "dollars", value: (p) => p.margin_micros / 1_000_000 },
  { title: "Model cost", unit: "dollars", value: (p) => p.model_cost_micros / 1_000_000 },
  {
    title: "Latency p50",
    unit: "seconds",
    value: (p) => (p.latency_p50_ms === null ? null : p.latency_p50_ms / 1000),
  },
];

export const bucketLabel = new Intl.DateTimeFormat("en-US", {
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hour12: false,
});

/** The series pivoted to one row per time bucket, one column per arm (`v2`, `v3`). */
export function pivotSeries(
  points: ArmSeriesPoint[],
  value: (p: ArmSeriesPoint) => number | null,
): SeriesRow[] {
  const rows = new Map<string, SeriesRow>();
  for (const point of points) {
    const date = bucketLabel.format(new Date(point.at));
    const row = rows.get(point.at) ?? ({ date } as SeriesRow);
    const v = value(point);
    if (v !== null) row[`v${point.version}`] = v;
    rows.set(point.at, row);
  }
  return [...rows.values()];
}

export function Charts({ detail }: { detail: ExperimentDetail }) {
  const metrics = METRICS.filter(
    (metric) => detail.model_cost_note === null || metric.title !== "Model cost",
  );
  if (detail.series.length === 0)
    return <p className="text-sm text-slate-500">No calls yet: the charts fill in as callers arrive.</p>;
  const series = detail.arms.map(
    (arm, i): ChartSeries<SeriesRow> => ({
      dataKey: `v${arm.version}`,
      name: `v${arm.version}`,
      color: ARM_COLORS[i] ?? chartColors.primary,
    }),
  );
  return (
    <section aria-label="Charts per arm over time" className="grid gap-4 lg:grid-cols-2">
      {metrics.map((metric) => (
        <div key={metric.title} className="rounded-lg border border-slate-200 p-3">
          <h3 className="mb-2 text-sm font-semibold text-slate-900">{metric.title}</h3>
          <TimeSeriesChart
            kind="line"
            data={pivotSeries(detail.series, metric.value)}
            series={series}
            unit={metric.unit}
          />
        </div>
      ))}
    </section>
  );
}
