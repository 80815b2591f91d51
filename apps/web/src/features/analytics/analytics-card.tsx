import { type ReactNode, useId } from "react";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { cn } from "../../lib/cn";
import { TimeSeriesChart, type TimeSeriesChartProps } from "./time-series-chart";

/**
 * A titled card holding one chart or table, exposed as a region named by its title. `flush`
 * drops the body padding so a table can reach the card's edges (and scroll inside it).
 */
export function AnalyticsCard({
  title,
  description,
  flush = false,
  className,
  children,
}: {
  title: string;
  description?: ReactNode;
  flush?: boolean;
  className?: string;
  children: ReactNode;
}) {
  const titleId = useId();
  return (
    <Card className={cn("min-w-0 overflow-hidden", className)}>
      <section aria-labelledby={titleId}>
        <CardHeader title={<span id={titleId}>{title}</span>} description={description} />
        {flush ? children : <CardBody className="px-2 py-4 sm:px-4">{children}</CardBody>}
      </section>
    </Card>
  );
}

export const tableHeaderCell =
  "px-4 py-3 text-left text-xs font-semibold uppercase tracking-wide whitespace-nowrap text-slate-500";
export const tableCell = "px-4 py-3 text-sm whitespace-nowrap";

/** A count, a rate or a time: right-aligned, figures of one width. */
export function FigureCell({ children }: { children: ReactNode }) {
  return <td className={`${tableCell} text-right text-slate-700 tabular-nums`}>{children}</td>;
}

export type ChartCardProps<Row extends { date: string }> = {
  title: string;
  description: ReactNode;
} & TimeSeriesChartProps<Row>;

/** A trend chart in its titled card: what both analytics screens draw, four to a grid. */
export function ChartCard<Row extends { date: string }>({
  title,
  description,
  ...chart
}: ChartCardProps<Row>) {
  return (
    <AnalyticsCard title={title} description={description}>
      <TimeSeriesChart {...chart} />
    </AnalyticsCard>
  );
}
