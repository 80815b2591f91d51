import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { QueryStates } from "../../components/ui/query-states";
import { formatDate } from "../../lib/format";
import { useEarningsHistory } from "./api/get-earnings-history";
import { LedgerTable } from "./ledger-table";

/**
 * A creator's Earnings History (issue 32): one line per UTC day and kind, "Earned from 37 paid
 * calls (12 paid by x402)" with the day's total (exact on hover), older days on request.
 */
export function EarningsTable() {
  const history = useEarningsHistory();
  const lines = history.data?.pages.flatMap((page) => page.lines) ?? [];
  return (
    <Card className="overflow-hidden">
      <CardHeader title="Earnings History" description="What your apps earned, one line per day." />
      <QueryStates query={history} loading="Loading earnings..." error="Failed to load your earnings">
        {() => (
          <LedgerTable
            caption="Earnings history"
            lines={lines.map((line) => ({
              id: line.id,
              when: `${formatDate(`${line.day}T12:00:00Z`)} (UTC day)`,
              description: line.description,
              micros: line.amount_micros,
            }))}
            empty={{
              title: "No earnings yet",
              description: "What your apps earn from paid calls will appear here, one line per day.",
            }}
            footer={
              history.hasNextPage ? (
                <div className="flex items-center justify-end border-t border-slate-100 px-4 py-3">
                  <Button
                    variant="secondary"
                    size="sm"
                    disabled={history.isFetchingNextPage}
                    onClick={() => void history.fetchNextPage()}
                  >
                    {history.isFetchingNextPage ? "Loading..." : "Show older days"}
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
