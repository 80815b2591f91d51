import {
  Area,
  AreaChart,
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { formatChartDay, formatChartDayLong } from "../../lib/analytics-format";
import { type ChartUnit, dayTicks, tickFormatter, valueFormatter, valueTicks } from "./chart-axis";
import { CHART_HEIGHT, chartColors, tooltipStyle } from "./chart-theme";

type NumericKey<Row> = { [Key in keyof Row]: Row[Key] extends number ? Key : never }[keyof Row] & string;

export interface ChartSeries<Row> {
  dataKey: NumericKey<Row>;
  name: string;
  color: string;
}

export interface TimeSeriesChartProps<Row extends { date: string }> {
  kind: "area" | "line" | "bar";
  data: readonly Row[];
  series: readonly ChartSeries<Row>[];
  /** Stacks the series on one another (token totals, success plus errors). */
  stacked?: boolean;
  /** What the values measure (chart-axis.ts): how the y axis steps and its ticks and tooltip read. */
  unit?: ChartUnit;
}

const tick = { fontSize: 12, fill: chartColors.axis };

/** The largest value the chart draws: a day's sum when the series are stacked. */
function largestValue<Row>(
  data: readonly Row[],
  series: readonly ChartSeries<Row>[],
  stacked: boolean,
): number {
  let largest = 0;
  for (const row of data) {
    const values = series.map((line) => Number(row[line.dataKey]) || 0);
    const top = stacked ? values.reduce((sum, value) => sum + value, 0) : Math.max(0, ...values);
    largest = Math.max(largest, top);
  }
  return largest;
}

/**
 * One day-by-day Recharts chart filling its card's width, with the page's shared day ticks, round
 * value ticks and a tooltip. Drawn at once: an entry animation only delayed reading it.
 */
export function TimeSeriesChart<Row extends { date: string }>({
  kind,
  data,
  series,
  stacked = false,
  unit = "count",
}: TimeSeriesChartProps<Row>) {
  // Room on the right for half of the last day's label: today is always labelled, at the edge.
  const margin = { top: 8, right: 24, bottom: 0, left: 0 };
  const stackId = stacked ? "total" : undefined;
  const yTicks = valueTicks(largestValue(data, series, stacked), unit);
  const formatValue = valueFormatter(unit);

  // The parts every kind of chart shares.
  const frame = [
    <CartesianGrid key="grid" strokeDasharray="3 3" stroke={chartColors.grid} vertical={false} />,
    <XAxis
      key="x"
      dataKey="date"
      ticks={dayTicks(data.map((row) => row.date))}
      interval={0}
      tickFormatter={formatChartDay}
      tick={tick}
      tickLine={false}
      axisLine={{ stroke: chartColors.grid }}
      tickMargin={8}
    />,
    <YAxis
      key="y"
      ticks={yTicks}
      domain={[0, yTicks.at(-1) ?? 1]}
      interval={0}
      tickFormatter={tickFormatter(unit, yTicks)}
      tick={tick}
      tickLine={false}
      axisLine={false}
      width={56}
    />,
    <Tooltip
      key="tooltip"
      labelFormatter={(label) => formatChartDayLong(String(label))}
      formatter={(value) => (typeof value === "number" ? formatValue(value) : value)}
      contentStyle={tooltipStyle}
      itemSorter={(item) => series.findIndex((entry) => entry.dataKey === item.dataKey)}
      cursor={kind === "bar" ? { fill: "#f1f5f9" } : { stroke: chartColors.grid }}
    />,
    series.length > 1 ? (
      <Legend key="legend" iconType="circle" itemSorter={null} wrapperStyle={{ fontSize: 13 }} />
    ) : null,
  ];

  return (
    <ResponsiveContainer width="100%" height={CHART_HEIGHT}>
      {kind === "area" ? (
        <AreaChart data={data} margin={margin}>
          {frame}
          {series.map((line) => (
            <Area
              key={line.dataKey}
              type="monotone"
              dataKey={line.dataKey}
              name={line.name}
              stackId={stackId}
              stroke={line.color}
              strokeWidth={2}
              fill={line.color}
              fillOpacity={0.15}
              isAnimationActive={false}
            />
          ))}
        </AreaChart>
      ) : kind === "bar" ? (
        <BarChart data={data} margin={margin}>
          {frame}
          {series.map((bar) => (
            <Bar
              key={bar.dataKey}
              dataKey={bar.dataKey}
              name={bar.name}
              stackId={stackId}
              fill={bar.color}
              isAnimationActive={false}
            />
          ))}
        </BarChart>
      ) : (
        <LineChart data={data} margin={margin}>
          {frame}
          {series.map((line) => (
            <Line
              key={line.dataKey}
              type="monotone"
              dataKey={line.dataKey}
              name={line.name}
              stroke={line.color}
              strokeWidth={2}
              dot={data.length <= 14}
              activeDot={{ r: 4 }}
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      )}
    </ResponsiveContainer>
  );
}
