import type { Receipt } from "@promptmint/contracts";
import { ReceiptText } from "lucide-react";
import { Badge, type BadgeTone } from "../../components/ui/badge";
import { Card, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { QueryStates } from "../../components/ui/query-states";
import { ReceiptLinks } from "../../components/ui/receipt-links";
import { Table } from "../../components/ui/table";
import { formatCents, formatDateTime } from "../../lib/format";
import { useReceipts } from "../../lib/receipts";

const KIND_LABELS: Record<Receipt["kind"], string> = {
  top_up: "Top-up",
  plan_payment: "Plan payment",
  payout: "Payout",
};

const STATUS_LABELS: Record<Receipt["status"], { label: string; tone: BadgeTone }> = {
  paid: { label: "Paid", tone: "green" },
  partially_refunded: { label: "Partly refunded", tone: "yellow" },
  refunded: { label: "Refunded", tone: "gray" },
  disputed: { label: "Disputed", tone: "red" },
  reversed: { label: "Returned", tone: "red" },
};

const columns = [
  { label: "Receipt" },
  { label: "Date", className: "hidden sm:table-cell" },
  { label: "Description" },
  { label: "Amount", className: "text-right" },
  { label: "Status" },
  { label: "Actions", srOnly: true },
] as const;

/** Every top-up, plan payment and payout with its numbered receipt: open it or download its PDF. */
export function ReceiptsCard() {
  const receipts = useReceipts();
  return (
    <Card className="overflow-hidden">
      <CardHeader
        title="Receipts"
        description="A numbered receipt for every top-up, plan payment and payout, to open or save as PDF."
      />
      <QueryStates query={receipts} loading="Loading receipts..." error="Failed to load receipts">
        {(data) =>
          data.receipts.length === 0 ? (
            <div className="p-5">
              <EmptyState
                icon={ReceiptText}
                title="No receipts yet"
                description="Your first top-up or plan payment gets one."
              />
            </div>
          ) : (
            <div
              // biome-ignore lint/a11y/noNoninteractiveTabindex: on a phone the table scrolls sideways; the keyboard must reach it
              tabIndex={0}
              className="overflow-x-auto"
            >
              <Table columns={columns} caption="Receipts">
                {data.receipts.map((receipt) => (
                  <tr key={receipt.number}>
                    <td className="px-4 py-3 font-mono text-sm whitespace-nowrap text-slate-900">
                      {receipt.number}
                    </td>
                    <td className="hidden px-4 py-3 text-sm whitespace-nowrap text-slate-600 sm:table-cell">
                      {formatDateTime(receipt.occurred_at)}
                    </td>
                    <td className="px-4 py-3 text-sm text-slate-700">
                      <span className="block text-xs text-slate-500">{KIND_LABELS[receipt.kind]}</span>
                      {receipt.description}
                    </td>
                    <td className="px-4 py-3 text-right text-sm font-medium whitespace-nowrap tabular-nums">
                      {formatCents(receipt.amount_cents)}
                    </td>
                    <td className="px-4 py-3">
                      <Badge tone={STATUS_LABELS[receipt.status].tone}>
                        {STATUS_LABELS[receipt.status].label}
                      </Badge>
                    </td>
                    <td className="px-4 py-3">
                      <ReceiptLinks number={receipt.number} />
                    </td>
                  </tr>
                ))}
              </Table>
            </div>
          )
        }
      </QueryStates>
    </Card>
  );
}
