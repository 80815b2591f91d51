import type { ReactNode } from "react";

/**
 * The operator console's tables: a header row, positional rows, a line in place of an empty
 * table. On a phone the table scrolls sideways inside its region instead of widening the page.
 */
export function AdminTable({
  head,
  rows,
  empty,
  label,
  rowClassName,
}: {
  head: ReactNode[];
  rows: ReactNode[][];
  empty: string;
  /** Names the scrolling region for screen readers. */
  label?: string;
  /** Classes of one row (a highlighted one). */
  rowClassName?: (index: number) => string | undefined;
}) {
  if (rows.length === 0) return <p className="text-sm text-slate-500">{empty}</p>;
  // A named table is a region of its own (a section); an unnamed one is named by its section.
  const Box = label ? "section" : "div";
  return (
    // On a phone the table scrolls sideways: the region takes focus so the keyboard can scroll it.
    <Box
      tabIndex={0}
      aria-label={label}
      className="overflow-x-auto rounded-lg border border-slate-200 focus-visible:outline-2 focus-visible:outline-brand-500"
    >
      <table className="min-w-full divide-y divide-slate-200 text-sm">
        <thead className="bg-slate-50">
          <tr>
            {head.map((cell, index) => (
              <th
                // biome-ignore lint/suspicious/noArrayIndexKey: headings are positional (some are empty)
                key={index}
                scope="col"
                className="px-3 py-2 text-left font-medium text-slate-600"
              >
                {cell}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map((row, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: rows are positional and never reordered
            <tr key={index} className={rowClassName?.(index)}>
              {row.map((cell, column) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: columns are positional
                <td key={column} className="px-3 py-2 break-words text-slate-800">
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </Box>
  );
}
