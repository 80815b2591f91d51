import { Clock, PiggyBank, Wallet } from "lucide-react";
import { ErrorBox } from "../../components/ui/error-box";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { LoadingState } from "../../components/ui/spinner";
import { StatCard } from "../../components/ui/stat-card";
import { formatMicros } from "../../lib/format";
import { useProfile } from "../../lib/profile-query";
import { useWallet } from "../../lib/wallet-query";
import { TopUpCard } from "./top-up-card";
import { TransactionTable } from "./transaction-table";

/** /wallet: the prepaid balance paid calls draw from, top-ups, and creators' earnings. */
export function WalletPage() {
  const wallet = useWallet();
  const profile = useProfile();
  const data = wallet.data;
  const showEarnings = Boolean(profile.data?.creator) || (data?.earnings_micros ?? 0) !== 0;

  return (
    <PageContainer className="max-w-6xl">
      <PageHeader
        title="Wallet"
        description="Your prepaid balance pays for API calls beyond your plans' included calls."
      />
      {wallet.isPending ? (
        <LoadingState label="Loading wallet..." />
      ) : wallet.isError || !data ? (
        <ErrorBox message="Failed to load wallet" />
      ) : (
        <div className="space-y-8">
          <section aria-label="Balances" className="grid gap-4 sm:grid-cols-3">
            <StatCard icon={Wallet} label="Balance" value={formatMicros(data.balance_micros)} />
            {data.held_micros > 0 && (
              <StatCard
                icon={Clock}
                label="On hold"
                value={formatMicros(data.held_micros)}
                hint="Set aside for calls in progress; what they do not use returns within seconds."
              />
            )}
            {showEarnings && (
              <StatCard icon={PiggyBank} label="Earnings" value={formatMicros(data.earnings_micros)} />
            )}
          </section>
          <div className="grid items-start gap-6 lg:grid-cols-5">
            <div className="lg:col-span-2">
              <TopUpCard />
            </div>
            <div className="min-w-0 lg:col-span-3">
              <TransactionTable transactions={data.transactions} />
            </div>
          </div>
        </div>
      )}
    </PageContainer>
  );
}
