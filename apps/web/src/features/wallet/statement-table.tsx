import type { StatementLine } from "@promptmint/contracts";
import { Receipt } from "lucide-react";
import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { ErrorBox } from "../../components/ui/error-box";
import { LoadingState } from "../../components/ui/spinner";
import { cn } from "../../lib/cn";
import { formatDate, formatDateTime, formatSignedMicros } from "../../lib/format";
import { useWalletStatement } from "./api/get-wallet-statement";

const headerCell = "px-4 py-3 text-left text-xs font-semibold uppercase tracking-wide text-slate-500";

/** When a line happened: a calls line is a whole UTC day; any other line, its moment. */
function whenOf(line: StatementLine): string {
  return line.day ? `${formatDate(`${line.day}T12:00:00Z`)} (UTC day)` : formatDateTime(line.created_at);
}

/**
 * The wallet's statement (docs/decisions/029): one line per app and day for the calls paid
 * ("Haiku Writer — 12 calls"), top-ups, plan payments and refunds; never the money set aside
 * for calls in flight. Its lines add up to the balance.
 */
export function StatementTable() {
  const statement = useWalletStatement();
  const lines = statement.data?.pages.flatMap((page) => page.lines) ?? [];
  return (
    <Card className="overflow-hidden">
      <CardHeader
        title="Statement"
        description="What moved your balance: paid calls per app and day, top-ups, plans and refunds."
      />
      {statement.isPending ? (
        <LoadingState label="Loading statement..." />
      ) : statement.isError ? (
        <ErrorBox message="Failed to load the statement" />
      ) : lines.length === 0 ? (
        <div className="flex flex-col items-center px-6 py-12 text-center">
          <div className="flex size-12 items-center justify-center rounded-full bg-brand-50 text-brand-600">
            <Receipt className="size-6" aria-hidden="true" />
          </div>
          <h3 className="mt-4 text-base font-semibold text-slate-900">Nothing yet</h3>
          <p className="mt-1 max-w-sm text-sm text-slate-500">Top-ups and paid calls will appear here.</p>
        </div>
      ) : (
        <div className="overflow-x-auto">
          <table className="min-w-full divide-y divide-slate-200">
            <caption className="sr-only">Statement</caption>
            <thead className="bg-slate-50">
              <tr>
                <th scope="col" className={`${headerCell} hidden sm:table-cell`}>
                  Date
                </th>
                <th scope="col" className={headerCell}>
                  Description
                </th>
                <th scope="col" className={`${headerCell} text-right`}>
                  Amount
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100 bg-white">
              {lines.map((line) => (
                <tr key={line.id}>
                  <td className="hidden px-4 py-3 text-sm whitespace-nowrap text-slate-500 sm:table-cell">
                    {whenOf(line)}
                  </td>
                  <td className="px-4 py-3 text-sm text-slate-900">
                    {line.description}
                    <span className="block text-xs text-slate-500 sm:hidden">{whenOf(line)}</span>
                  </td>
                  <td
                    className={cn(
                      "px-4 py-3 text-right text-sm font-medium whitespace-nowrap tabular-nums",
                      line.amount_micros > 0 && "text-green-700",
                      line.amount_micros < 0 && "text-red-700",
                      line.amount_micros === 0 && "text-slate-500",
                    )}
                  >
                    {formatSignedMicros(line.amount_micros)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {statement.hasNextPage ? (
            <div className="flex items-center justify-end border-t border-slate-100 px-4 py-3">
              <Button
                variant="secondary"
                size="sm"
                disabled={statement.isFetchingNextPage}
                onClick={() => void statement.fetchNextPage()}
              >
                {statement.isFetchingNextPage ? "Loading..." : "Show older"}
              </Button>
            </div>
          ) : null}
        </div>
      )}
    </Card>
  );
}
