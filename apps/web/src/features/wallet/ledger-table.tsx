import { Receipt } from "lucide-react";
import type { ReactNode } from "react";
import { EmptyState } from "../../components/ui/empty-state";
import { SignedMicrosCell, Table } from "../../components/ui/table";

/** One movement of money as the wallet lists it. */
export interface LedgerLine {
  id: string;
  when: string;
  description: string;
  micros: number;
  /** Which balance it moved, where the table shows more than one. */
  account?: string;
}

/**
 * The wallet's lists of money moved (its statement, transaction histories): date, description,
 * signed amount and, with `withAccount`, the balance moved. On phones the date (and account)
 * fold under the description. With no lines, `empty` says why.
 */
export function LedgerTable({
  caption,
  lines,
  withAccount = false,
  empty,
  footer,
}: {
  caption: string;
  lines: readonly LedgerLine[];
  withAccount?: boolean;
  empty: { title: string; description: string };
  /** Under the table: the way to more lines. */
  footer?: ReactNode;
}) {
  if (lines.length === 0) return <EmptyState framed={false} icon={Receipt} {...empty} />;
  const columns = [
    { label: "Date", className: "hidden sm:table-cell" },
    { label: "Description" },
    { label: "Amount", className: "text-right" },
  ];
  if (withAccount) columns.push({ label: "Account", className: "hidden sm:table-cell" });
  return (
    <div className="overflow-x-auto">
      <Table caption={caption} columns={columns}>
        {lines.map((line) => (
          <tr key={line.id}>
            <td className="hidden px-4 py-3 text-sm whitespace-nowrap text-slate-500 sm:table-cell">
              {line.when}
            </td>
            <td className="px-4 py-3 text-sm text-slate-900">
              {line.description}
              <span className="block text-xs text-slate-500 sm:hidden">
                {withAccount ? `${line.when} · ${line.account}` : line.when}
              </span>
            </td>
            <SignedMicrosCell micros={line.micros} />
            {withAccount && (
              <td className="hidden px-4 py-3 text-sm whitespace-nowrap text-slate-600 sm:table-cell">
                {line.account}
              </td>
            )}
          </tr>
        ))}
      </Table>
      {footer}
    </div>
  );
}
