import type { WalletTransaction } from "@promptmint/contracts";
import { Receipt } from "lucide-react";
import { useState } from "react";
import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { cn } from "../../lib/cn";
import { formatDateTime, formatSignedMicros } from "../../lib/format";

const ACCOUNT_LABELS: Record<WalletTransaction["account"], string> = {
  wallet: "Wallet",
  earnings: "Earnings",
};

const headerCell = "px-4 py-3 text-left text-xs font-semibold uppercase tracking-wide text-slate-500";

/** Rows shown at first and added by each 'Show more': a busy creator earns on every call. */
export const TRANSACTION_PAGE_SIZE = 15;

export function TransactionTable({
  transactions,
  title = "Transaction History",
  description = "Your latest wallet and earnings movements.",
}: {
  transactions: readonly WalletTransaction[];
  title?: string;
  description?: string;
}) {
  const [visible, setVisible] = useState(TRANSACTION_PAGE_SIZE);
  const shown = transactions.slice(0, visible);
  return (
    <Card className="overflow-hidden">
      <CardHeader title={title} description={description} />
      {transactions.length === 0 ? (
        <div className="flex flex-col items-center px-6 py-12 text-center">
          <div className="flex size-12 items-center justify-center rounded-full bg-brand-50 text-brand-600">
            <Receipt className="size-6" aria-hidden="true" />
          </div>
          <h3 className="mt-4 text-base font-semibold text-slate-900">No transactions yet</h3>
          <p className="mt-1 max-w-sm text-sm text-slate-500">
            Top-ups, paid calls and earnings will appear here.
          </p>
        </div>
      ) : (
        <div className="overflow-x-auto">
          <table className="min-w-full divide-y divide-slate-200">
            <caption className="sr-only">Transaction history</caption>
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
                <th scope="col" className={`${headerCell} hidden sm:table-cell`}>
                  Account
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100 bg-white">
              {shown.map((transaction) => (
                <tr key={transaction.id}>
                  <td className="hidden px-4 py-3 text-sm whitespace-nowrap text-slate-500 sm:table-cell">
                    {formatDateTime(transaction.created_at)}
                  </td>
                  <td className="px-4 py-3 text-sm text-slate-900">
                    {transaction.description}
                    {/* Phones: the date and account columns fold under the description. */}
                    <span className="block text-xs text-slate-500 sm:hidden">
                      {formatDateTime(transaction.created_at)} · {ACCOUNT_LABELS[transaction.account]}
                    </span>
                  </td>
                  <td
                    className={cn(
                      "px-4 py-3 text-right text-sm font-medium whitespace-nowrap tabular-nums",
                      transaction.amount_micros > 0 && "text-green-700",
                      transaction.amount_micros < 0 && "text-red-700",
                      transaction.amount_micros === 0 && "text-slate-500",
                    )}
                  >
                    {formatSignedMicros(transaction.amount_micros)}
                  </td>
                  <td className="hidden px-4 py-3 text-sm whitespace-nowrap text-slate-600 sm:table-cell">
                    {ACCOUNT_LABELS[transaction.account]}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {transactions.length > visible ? (
            <div className="flex items-center justify-between border-t border-slate-100 px-4 py-3 text-sm text-slate-500">
              <span>
                Showing {shown.length} of {transactions.length}
              </span>
              <Button
                variant="secondary"
                size="sm"
                onClick={() => setVisible((n) => n + TRANSACTION_PAGE_SIZE)}
              >
                Show more
              </Button>
            </div>
          ) : null}
        </div>
      )}
    </Card>
  );
}
