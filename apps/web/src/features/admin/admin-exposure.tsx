import type { AdminExposure } from "@promptmint/contracts";
import { Clock, Gavel, HandCoins, ShieldAlert, TrendingDown } from "lucide-react";
import { ErrorBox } from "../../components/ui/error-box";
import { Money } from "../../components/ui/money";
import { LoadingState } from "../../components/ui/spinner";
import { StatCard } from "../../components/ui/stat-card";
import { getErrorMessage } from "../../lib/api-client";
import { formatMicros } from "../../lib/format";
import { useAdminExposure } from "./api/get-admin-exposure";

/**
 * What refunds and disputes of card top-ups could still cost the platform (decision 045): card
 * money in creators' earnings still inside the payout hold, what creators and payers owe after
 * chargebacks, the platform's own loss, and the disputes open now.
 */
export function ExposureSection() {
  const exposure = useAdminExposure();
  return (
    <section aria-label="Chargeback exposure" className="mb-8">
      <h2 className="mb-2 text-lg font-semibold">Chargeback exposure</h2>
      {exposure.isPending ? (
        <LoadingState label="Loading the exposure..." />
      ) : exposure.isError || !exposure.data ? (
        <ErrorBox message={getErrorMessage(exposure.error)} />
      ) : (
        <ExposureFigures data={exposure.data} />
      )}
    </section>
  );
}

function ExposureFigures({ data }: { data: AdminExposure }) {
  const nothing =
    data.card_earnings_pending_micros === 0 &&
    data.creator_debts.owed_micros === 0 &&
    data.payer_debts.owed_micros === 0 &&
    data.platform_loss_micros === 0 &&
    data.open_disputes.count === 0;
  if (nothing)
    return (
      <p className="text-sm text-slate-600">
        Nothing at risk: no card earnings inside the {data.hold_days}-day payout hold, no debts, no open
        disputes.
      </p>
    );
  return (
    <div className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
      <StatCard
        icon={Clock}
        label="Card earnings in the payout hold"
        value={<Money micros={data.card_earnings_pending_micros} />}
        hint={`Not payable for ${data.hold_days} days: a chargeback takes them back from the creator`}
      />
      <StatCard
        icon={HandCoins}
        label="Creators' chargeback debts"
        value={<Money micros={data.creator_debts.owed_micros} />}
        hint={`${data.creator_debts.count} creator${data.creator_debts.count === 1 ? "" : "s"}, paid from their next earnings`}
      />
      <StatCard
        icon={ShieldAlert}
        label="Payers' debts"
        value={<Money micros={data.payer_debts.owed_micros} />}
        hint={`${data.payer_debts.count} payer${data.payer_debts.count === 1 ? "" : "s"}`}
      />
      <StatCard
        icon={TrendingDown}
        label="Platform's loss"
        value={<Money micros={data.platform_loss_micros} />}
      />
      <StatCard
        icon={Gavel}
        label="Open disputes"
        value={<Money micros={data.open_disputes.amount_micros} />}
        hint={`${data.open_disputes.count} open · ${formatMicros(data.unrecovered_micros)} not yet recovered of ${formatMicros(data.reversed_micros)} taken back`}
      />
    </div>
  );
}
