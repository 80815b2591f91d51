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
import { formatNumber } from "../../lib/format";
import { formatChartDay, formatChartDayLong, formatCompactNumber } from "./analytics-format";
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
  /** The value in the tooltip; thousands-separated counts by default. */
  formatValue?: (value: number) => string;
  /** The value on the Y axis; compact counts by default. */
  formatTick?: (value: number) => string;
}

const tick = { fontSize: 12, fill: chartColors.axis };

/** One day-by-day Recharts chart filling its card's width, with short date ticks and a tooltip. */
export function TimeSeriesChart<Row extends { date: string }>({
  kind,
  data,
  series,
  stacked = false,
  formatValue = formatNumber,
  formatTick = formatCompactNumber,
}: TimeSeriesChartProps<Row>) {
  const margin = { top: 8, right: 12, bottom: 0, left: 0 };
  const stackId = stacked ? "total" : undefined;

  // The parts every kind of chart shares.
  const frame = [
    <CartesianGrid key="grid" strokeDasharray="3 3" stroke={chartColors.grid} vertical={false} />,
    <XAxis
      key="x"
      dataKey="date"
      tickFormatter={formatChartDay}
      tick={tick}
      tickLine={false}
      axisLine={{ stroke: chartColors.grid }}
      minTickGap={24}
      tickMargin={8}
    />,
    <YAxis key="y" tickFormatter={formatTick} tick={tick} tickLine={false} axisLine={false} width={52} />,
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
            />
          ))}
        </AreaChart>
      ) : kind === "bar" ? (
        <BarChart data={data} margin={margin}>
          {frame}
          {series.map((bar) => (
            <Bar key={bar.dataKey} dataKey={bar.dataKey} name={bar.name} stackId={stackId} fill={bar.color} />
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
            />
          ))}
        </LineChart>
      )}
    </ResponsiveContainer>
  );
}
