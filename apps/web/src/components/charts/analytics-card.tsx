import { type ReactNode, useId } from "react";
import { cn } from "../../lib/cn";
import { Card, CardBody, CardHeader } from "../ui/card";
import { HorizontalScroll } from "../ui/scroll-area";
import { Table, type TableColumn } from "../ui/table";
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

/** A table in its titled card, scrolling sideways on a phone; `empty` stands in for it when there are no rows. */
export function TableCard({
  title,
  description,
  label,
  columns,
  empty,
  children,
}: {
  title: string;
  description?: ReactNode;
  /** The table's accessible name. */
  label: string;
  columns: readonly TableColumn[];
  /** Shown instead of the table when there are no rows. */
  empty: string | null;
  children: ReactNode;
}) {
  return (
    <AnalyticsCard title={title} description={description} flush>
      {empty !== null ? (
        <p className="px-5 py-10 text-center text-sm text-slate-500">{empty}</p>
      ) : (
        <HorizontalScroll label={label}>
          <Table headerCellClassName={tableHeaderCell} columns={columns}>
            {children}
          </Table>
        </HorizontalScroll>
      )}
    </AnalyticsCard>
  );
}
