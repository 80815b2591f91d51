import type { StatementLine } from "@promptmint/contracts";
import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { QueryStates } from "../../components/ui/query-states";
import { formatDate, formatDateTime } from "../../lib/format";
import { useWalletStatement } from "./api/get-wallet-statement";
import { LedgerTable } from "./ledger-table";

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
      <QueryStates query={statement} loading="Loading statement..." error="Failed to load the statement">
        {() => (
          <LedgerTable
            caption="Statement"
            lines={lines.map((line) => ({
              id: line.id,
              when: whenOf(line),
              description: line.description,
              micros: line.amount_micros,
            }))}
            empty={{ title: "Nothing yet", description: "Top-ups and paid calls will appear here." }}
            footer={
              statement.hasNextPage ? (
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
              ) : null
            }
          />
        )}
      </QueryStates>
    </Card>
  );
}
