import type { GlobalDashboard } from "@promptmint/contracts";
import { Cell, Pie, PieChart, type PieLabelRenderProps, ResponsiveContainer, Tooltip } from "recharts";
import { formatNumber } from "../../lib/format";
import { AnalyticsCard } from "./analytics-card";
import { formatErrorType } from "./analytics-format";
import { chartColors, PIE_CHART_HEIGHT, PIE_PALETTE, tooltipStyle } from "./chart-theme";

function colourAt(index: number): string {
  return PIE_PALETTE[index % PIE_PALETTE.length] ?? chartColors.primary;
}

const LABEL_NAME_LENGTH = 12;

/** Name over rounded percent; long names are cut so labels stay inside a phone-wide chart. */
function SliceLabel({ x, y, textAnchor, name, percent }: PieLabelRenderProps) {
  const label = String(name ?? "");
  const shortName = label.length > LABEL_NAME_LENGTH ? `${label.slice(0, LABEL_NAME_LENGTH - 1)}…` : label;
  return (
    <text x={x} y={y} textAnchor={textAnchor} fontSize={11} fill={chartColors.axis}>
      <tspan x={x} dy="-0.2em">
        {shortName}
      </tspan>
      <tspan x={x} dy="1.2em" fontWeight={600}>
        {`${Math.round((percent ?? 0) * 100)}%`}
      </tspan>
    </text>
  );
}

/** One slice per shown name (a missing and an empty type both read 'Unknown Error'), largest first. */
export function sliceErrors(errors: GlobalDashboard["errors"]): { name: string; value: number }[] {
  const counts = new Map<string, number>();
  for (const error of errors) {
    const name = formatErrorType(error.error_type);
    counts.set(name, (counts.get(name) ?? 0) + error.count);
  }
  return [...counts].map(([name, value]) => ({ name, value })).sort((a, b) => b.value - a.value);
}

/** The most frequent failures of the window, as a pie and a legend with counts. */
export function TopErrorsCard({ errors }: { errors: GlobalDashboard["errors"] }) {
  const slices = sliceErrors(errors);

  return (
    <AnalyticsCard title="Top Errors" description="What failed most often in this period.">
      <div className="grid items-center gap-6 md:grid-cols-2">
        <ResponsiveContainer width="100%" height={PIE_CHART_HEIGHT}>
          <PieChart>
            <Pie
              data={slices}
              dataKey="value"
              nameKey="name"
              outerRadius={56}
              label={SliceLabel}
              labelLine={false}
              // Labels only show once an animation ends, and every resize restarts it.
              isAnimationActive={false}
            >
              {slices.map((slice, index) => (
                <Cell key={slice.name} fill={colourAt(index)} />
              ))}
            </Pie>
            <Tooltip
              formatter={(value) => (typeof value === "number" ? formatNumber(value) : value)}
              contentStyle={tooltipStyle}
            />
          </PieChart>
        </ResponsiveContainer>
        <ul aria-label="Error types" className="space-y-2 px-3">
          {slices.map((slice, index) => (
            <li key={slice.name} className="flex items-center justify-between gap-4 text-sm">
              <span className="flex min-w-0 items-center gap-2">
                <span
                  aria-hidden="true"
                  className="size-3 shrink-0 rounded-full"
                  style={{ backgroundColor: colourAt(index) }}
                />
                <span className="truncate text-slate-700">{slice.name}</span>
              </span>
              <span className="font-medium text-slate-900 tabular-nums">{formatNumber(slice.value)}</span>
            </li>
          ))}
        </ul>
      </div>
    </AnalyticsCard>
  );
}
