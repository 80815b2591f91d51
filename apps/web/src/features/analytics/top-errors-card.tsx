import type { GlobalDashboard } from "@promptmint/contracts";
import { Cell, Pie, PieChart, type PieLabelRenderProps, ResponsiveContainer, Tooltip } from "recharts";
import { AnalyticsCard } from "../../components/charts/analytics-card";
import {
  chartColors,
  PIE_CHART_HEIGHT,
  PIE_PALETTE,
  tooltipStyle,
} from "../../components/charts/chart-theme";
import { formatErrorType } from "../../lib/analytics-format";
import { formatNumber } from "../../lib/format";

function colourAt(index: number): string {
  return PIE_PALETTE[index % PIE_PALETTE.length] ?? chartColors.primary;
}

/** The labels' font size and the average width of one of its characters, in px. */
const LABEL_FONT_PX = 11;
const LABEL_CHAR_PX = 6.5;
const LABEL_NAME_LINES = 2;

/** Where a word may break: after spaces, underscores, hyphens and dots (error types are snake_case). */
const BREAK_AFTER = /(?<=[\s_.-])/;

/**
 * The name in at most `maxLines` lines of `maxChars`: broken after spaces, underscores, hyphens
 * and dots, a word longer than a line split, and what does not fit cut with '…'.
 */
export function labelLines(name: string, maxChars: number, maxLines = LABEL_NAME_LINES): string[] {
  const width = Math.max(4, Math.floor(maxChars));
  const pieces = name
    .split(BREAK_AFTER)
    .flatMap((word) => word.match(new RegExp(`.{1,${width}}`, "gs")) ?? []);
  const lines: string[] = [];
  for (const piece of pieces) {
    const last = lines.length - 1;
    if (last >= 0 && `${lines[last]}${piece}`.trimEnd().length <= width) lines[last] += piece;
    else lines.push(piece);
  }
  const shown = lines.map((line) => line.trimEnd());
  if (shown.length <= maxLines) return shown;
  const kept = shown.slice(0, maxLines);
  kept[maxLines - 1] = `${(kept[maxLines - 1] ?? "").slice(0, width - 1)}…`;
  return kept;
}

/** The room beside the pie on the label's side, in characters of the label font. */
function labelRoomChars({ x, cx, textAnchor }: PieLabelRenderProps): number {
  const width = 2 * Number(cx ?? 0);
  const room = textAnchor === "end" ? Number(x) : textAnchor === "start" ? width - Number(x) : width;
  return (room - 4) / LABEL_CHAR_PX;
}

/**
 * Name (wrapped to the room beside the pie) over rounded percent; the full name and percent are
 * the label's tooltip, and the legend beside the chart always shows the full name.
 */
function SliceLabel(props: PieLabelRenderProps) {
  const { x, y, textAnchor, name, percent } = props;
  const label = String(name ?? "");
  const rounded = `${Math.round((percent ?? 0) * 100)}%`;
  const lines = labelLines(label, labelRoomChars(props));
  return (
    <text x={x} y={y} textAnchor={textAnchor} fontSize={LABEL_FONT_PX} fill={chartColors.axis}>
      <title>{`${label}: ${rounded}`}</title>
      {lines.map((line, index) => (
        <tspan key={line} x={x} dy={index === 0 ? `${-0.2 - 1.2 * (lines.length - 1)}em` : "1.2em"}>
          {line}
        </tspan>
      ))}
      <tspan x={x} dy="1.2em" fontWeight={600}>
        {rounded}
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
                <span className="break-words text-slate-700">{slice.name}</span>
              </span>
              <span className="font-medium text-slate-900 tabular-nums">{formatNumber(slice.value)}</span>
            </li>
          ))}
        </ul>
      </div>
    </AnalyticsCard>
  );
}
