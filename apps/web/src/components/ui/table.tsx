import type { ReactNode } from "react";
import { cn } from "../../lib/cn";
import { formatSignedMicros } from "../../lib/format";
import { exactMoneyTitle } from "./money";

export const tableHeaderCell =
  "px-4 py-3 text-left text-xs font-semibold uppercase tracking-wide text-slate-500";

export interface TableColumn {
  label: string;
  /** Classes added to the header cell: alignment, hiding on small screens. */
  className?: string;
  /** Named for screen readers only (an actions column). */
  srOnly?: boolean;
}

/**
 * A list's table: an optional screen-reader caption, one header row on the slate band, and the
 * rows given as children. The classes extend each part (a table that turns into cards on phones).
 */
export function Table({
  columns,
  caption,
  className,
  headClassName,
  headerCellClassName = tableHeaderCell,
  bodyClassName,
  children,
}: {
  columns: readonly TableColumn[];
  caption?: string;
  className?: string;
  headClassName?: string;
  headerCellClassName?: string;
  bodyClassName?: string;
  children: ReactNode;
}) {
  return (
    <table className={cn("divide-y divide-slate-200", className ?? "min-w-full")}>
      {caption && <caption className="sr-only">{caption}</caption>}
      <thead className={cn("bg-slate-50", headClassName)}>
        <tr>
          {columns.map((column) => (
            <th key={column.label} scope="col" className={cn(headerCellClassName, column.className)}>
              {column.srOnly ? <span className="sr-only">{column.label}</span> : column.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody className={cn("divide-y divide-slate-100 bg-white", bodyClassName)}>{children}</tbody>
    </table>
  );
}

/** A signed amount of money: green when it came in, red when it went out. */
export function SignedMicrosCell({ micros }: { micros: number }) {
  return (
    <td
      title={exactMoneyTitle(micros, "signed")}
      className={cn(
        "px-4 py-3 text-right text-sm font-medium whitespace-nowrap tabular-nums",
        micros > 0 && "text-green-700",
        micros < 0 && "text-red-700",
        micros === 0 && "text-slate-500",
      )}
    >
      {formatSignedMicros(micros)}
    </td>
  );
}
