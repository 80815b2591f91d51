import { Clock, PiggyBank, Wallet } from "lucide-react";
import { Alert } from "../../components/ui/alert";
import { Money } from "../../components/ui/money";
import { MoneyFiguresCard, noMoneyFigures } from "../../components/ui/money-figures";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { QueryStates } from "../../components/ui/query-states";
import { StatCard } from "../../components/ui/stat-card";
import { useSellsApps } from "../../lib/applications-query";
import { formatMicros } from "../../lib/format";
import { useMoneyFigures } from "../../lib/money-figures-query";
import { useProfile } from "../../lib/profile-query";
import { useWallet } from "../../lib/wallet-query";
import { CreditsCard } from "./credits-card";
import { EarningsTable } from "./earnings-table";
import { ReceiptsCard } from "./receipts-card";
import { StatementTable } from "./statement-table";
import { TopUpCard } from "./top-up-card";
import { UsageExportCard } from "./usage-export-card";

/** The period of the earnings figures on the wallet page, as on the dashboard. */
const EARNINGS_DAYS = 30;

/** /wallet: the prepaid balance paid calls draw from, its statement, and creators' earnings. */
export function WalletPage() {
  const wallet = useWallet();
  const profile = useProfile();
  const sells = useSellsApps(Boolean(profile.data?.creator));
  const showEarnings = sells || (wallet.data?.earnings_micros ?? 0) !== 0;
  // A seller's money over the last 30 days, the same figures as the dashboard's (decision 029).
  const figures = useMoneyFigures(EARNINGS_DAYS, { enabled: sells });

  return (
    <PageContainer className="max-w-6xl">
      <PageHeader
        title="Wallet"
        description="Your prepaid balance pays for API calls beyond your plans' included calls."
      />
      <QueryStates query={wallet} loading="Loading wallet..." error="Failed to load wallet">
        {(data) => (
          <div className="space-y-8">
            {(data.debt_micros ?? 0) > 0 && (
              <Alert tone="error" title={`You owe ${formatMicros(data.debt_micros ?? 0)}`}>
                A card payment was refunded or disputed after its money was spent. Paid calls are refused
                until it is settled: a top-up below pays it first, and the rest goes to your balance.
              </Alert>
            )}
            <section aria-label="Balances" className="grid gap-4 sm:grid-cols-3">
              <StatCard icon={Wallet} label="Balance" value={<Money micros={data.balance_micros} />} />
              {data.held_micros > 0 && (
                <StatCard
                  icon={Clock}
                  label="On hold"
                  value={<Money micros={data.held_micros} />}
                  hint="Set aside for calls in progress; what they do not use returns within seconds."
                />
              )}
              {showEarnings && (
                <StatCard icon={PiggyBank} label="Earnings" value={<Money micros={data.earnings_micros} />} />
              )}
            </section>
            <div className="grid items-start gap-6 lg:grid-cols-5">
              <div className="lg:col-span-2">
                <TopUpCard />
              </div>
              <div className="min-w-0 lg:col-span-3">
                <StatementTable />
              </div>
            </div>
            <CreditsCard />
            <div className="grid items-start gap-6 lg:grid-cols-5">
              <div className="lg:col-span-2">
                <UsageExportCard />
              </div>
              <div className="min-w-0 lg:col-span-3">
                <ReceiptsCard />
              </div>
            </div>
            {sells && !figures.isError && (
              <MoneyFiguresCard
                figures={figures.data ?? noMoneyFigures(EARNINGS_DAYS)}
                pending={figures.isPending}
              />
            )}
            {showEarnings && <EarningsTable />}
          </div>
        )}
      </QueryStates>
    </PageContainer>
  );
}
