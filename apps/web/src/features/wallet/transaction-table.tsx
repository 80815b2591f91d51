import type { WalletTransaction } from "@promptmint/contracts";
import { useState } from "react";
import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { formatDateTime } from "../../lib/format";
import { LedgerTable } from "./ledger-table";

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
      <LedgerTable
        caption="Transaction history"
        withAccount
        lines={shown.map((transaction) => ({
          id: transaction.id,
          when: formatDateTime(transaction.created_at),
          description: transaction.description,
          micros: transaction.amount_micros,
          account: ACCOUNT_LABELS[transaction.account],
        }))}
        empty={{
          title: "No transactions yet",
          description: "Top-ups, paid calls and earnings will appear here.",
        }}
        footer={
          transactions.length > visible ? (
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
          ) : null
        }
      />
    </Card>
  );
}
