import type { WalletTransaction } from "@promptmint/contracts";
import { Receipt } from "lucide-react";
import { useState } from "react";
import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { SignedMicrosCell, Table } from "../../components/ui/table";
import { formatDateTime } from "../../lib/format";

const ACCOUNT_LABELS: Record<WalletTransaction["account"], string> = {
  wallet: "Wallet",
  earnings: "Earnings",
};

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
        <EmptyState
          framed={false}
          icon={Receipt}
          title="No transactions yet"
          description="Top-ups, paid calls and earnings will appear here."
        />
      ) : (
        <div className="overflow-x-auto">
          <Table
            caption="Transaction history"
            columns={[
              { label: "Date", className: "hidden sm:table-cell" },
              { label: "Description" },
              { label: "Amount", className: "text-right" },
              { label: "Account", className: "hidden sm:table-cell" },
            ]}
          >
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
                <SignedMicrosCell micros={transaction.amount_micros} />
                <td className="hidden px-4 py-3 text-sm whitespace-nowrap text-slate-600 sm:table-cell">
                  {ACCOUNT_LABELS[transaction.account]}
                </td>
              </tr>
            ))}
          </Table>
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
