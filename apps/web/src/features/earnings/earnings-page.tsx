import type { EarningsSummary, Payout } from "@promptmint/contracts";
import { ArrowDownToLine, Banknote, CalendarClock, Clock, Download, PiggyBank, Send } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import { useSearchParams } from "react-router";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Badge, type BadgeTone } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { EmailVerificationNotice } from "../../components/ui/email-verification-notice";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { Money } from "../../components/ui/money";
import { MoneyFiguresCard, noMoneyFigures } from "../../components/ui/money-figures";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { ReceiptLinks } from "../../components/ui/receipt-links";
import { LoadingState } from "../../components/ui/spinner";
import { StatCard } from "../../components/ui/stat-card";
import { getErrorMessage } from "../../lib/api-client";
import { saveBlob } from "../../lib/download-app";
import { formatCents, formatDate, formatDateTime, formatMicros } from "../../lib/format";
import { useMoneyFigures } from "../../lib/money-figures-query";
import { useReceipts } from "../../lib/receipts";
import { useAdvanceSandboxClock } from "./api/advance-sandbox-clock";
import { useDownloadEarningsStatement } from "./api/download-earnings-statement";
import { useEarnings } from "./api/get-earnings";
import { useStartPayoutOnboarding } from "./api/start-payout-onboarding";
import { useWithdrawEarnings } from "./api/withdraw-earnings";
import { StatementByVersion } from "./statement-by-version";

/** Micro-dollars for people (only display rounds). */
/** The period of the "From paid calls" figures, as on the dashboard. */
const FIGURES_DAYS = 30;

const STATUS_LABELS: Record<Payout["status"], { label: string; tone: BadgeTone }> = {
  pending: { label: "Pending", tone: "yellow" },
  in_transit: { label: "In transit", tone: "blue" },
  paid: { label: "Paid", tone: "green" },
  failed: { label: "Failed", tone: "red" },
  reversed: { label: "Reversed", tone: "red" },
};

const ACCOUNT_TEXT: Record<EarningsSummary["account"]["state"], { title: string; action: string | null }> = {
  not_started: { title: "Set up payouts to withdraw your earnings.", action: "Set up payouts" },
  incomplete: { title: "Payout setup is not finished yet.", action: "Continue setup" },
  restricted: { title: "Stripe needs more details before it can pay you.", action: "Update details" },
  enabled: { title: "Payouts are enabled.", action: null },
};

/** /earnings: what a creator earned, when it can be paid out, Withdraw, payout history and statements. */
export function EarningsPage() {
  const [params, setParams] = useSearchParams();
  const summary = useEarnings();
  const returned = params.get("onboarding");
  useEffect(() => {
    if (returned === "return") toast.success("Back from payout setup.");
    if (returned) setParams({}, { replace: true });
  }, [returned, setParams]);

  const onboarding = useStartPayoutOnboarding();
  const startOnboarding = () =>
    onboarding.mutate(undefined, {
      onSuccess: ({ url }) => window.location.assign(url),
      onError: (error) => toast.error(getErrorMessage(error)),
    });
  // One key per Withdraw the creator means: a retried request (double click, lost answer) pays once.
  const withdrawKey = useRef<string | null>(null);
  const withdraw = useWithdrawEarnings();
  const startWithdraw = () => {
    withdrawKey.current ??= crypto.randomUUID();
    withdraw.mutate(withdrawKey.current, {
      onSuccess: (payout) => {
        withdrawKey.current = null;
        if (payout.status === "failed")
          toast.error(
            `Payout of ${formatCents(payout.amount_cents)} failed: ${payout.failure_reason ?? "unknown reason"}`,
          );
        else toast.success(`Payout of ${formatCents(payout.amount_cents)} is on its way.`);
      },
      onError: (error) => {
        withdrawKey.current = null;
        toast.error(getErrorMessage(error));
      },
    });
  };
  const statement = useDownloadEarningsStatement();
  const downloadStatement = () =>
    statement.mutate(undefined, {
      onSuccess: ({ blob, fileName }) => saveBlob(blob, fileName ?? "promptmint-earnings.csv"),
      onError: (error) => toast.error(getErrorMessage(error)),
    });

  const data = summary.data;
  // Each paid payout's receipt (docs/decisions/069), by the payout's id.
  const receipts = useReceipts({ enabled: (data?.payouts ?? []).some((payout) => payout.status === "paid") });
  const receiptOf = new Map(
    (receipts.data?.receipts ?? []).filter((r) => r.kind === "payout").map((r) => [r.source_id, r.number]),
  );
  // What the calls earned over the last 30 days: the dashboard's figures (docs/decisions/029).
  const figures = useMoneyFigures(FIGURES_DAYS);
  return (
    <PageContainer className="max-w-6xl">
      <PageHeader
        title="Earnings"
        description="What your apps earned, when it can be paid out, and your payouts."
      />
      <EmailVerificationNotice
        className="mb-6"
        reason="Payouts go to whoever owns your address, so they wait until it is verified."
      />
      {summary.isPending ? (
        <LoadingState label="Loading earnings..." />
      ) : summary.isError || !data ? (
        <ErrorBox message={`Failed to load earnings: ${getErrorMessage(summary.error)}`} />
      ) : (
        <div className="space-y-6">
          {data.gateway === "sandbox" && (
            <Alert tone="info" role="note" title="Sandbox payouts — no real money moves">
              <p className="text-xs">
                Payouts go to a test bank account; the test clock below moves time ahead.
              </p>
            </Alert>
          )}
          <section aria-label="Earnings figures" className="grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
            <StatCard
              icon={PiggyBank}
              label="Available"
              value={<Money micros={data.available_micros} />}
              hint={
                data.reserved_micros > 0
                  ? `Earned more than ${data.hold_days} days ago; ${formatMicros(data.reserved_micros)} kept for your plans' unused included calls`
                  : `Earned more than ${data.hold_days} days ago`
              }
            />
            <StatCard
              icon={Clock}
              label="Pending"
              value={<Money micros={data.pending.reduce((sum, part) => sum + part.amount_micros, 0)} />}
              hint={
                data.pending.length > 0
                  ? `Next on ${formatDate(data.pending[0]?.available_at)}`
                  : "Nothing waiting"
              }
            />
            <StatCard icon={Send} label="In transit" value={formatCents(data.in_transit_cents)} />
            <StatCard icon={Banknote} label="Paid out" value={formatCents(data.paid_out_cents)} />
          </section>
          {!figures.isError && (
            <MoneyFiguresCard
              title="From paid calls"
              figures={figures.data ?? noMoneyFigures(FIGURES_DAYS)}
              pending={figures.isPending}
            />
          )}
          <StatementByVersion days={FIGURES_DAYS} />

          <div className="grid items-start gap-6 lg:grid-cols-5">
            <div className="space-y-6 lg:col-span-2">
              <Card>
                <CardHeader title="Payouts" description={ACCOUNT_TEXT[data.account.state].title} />
                <CardBody className="space-y-4">
                  {data.account.state === "restricted" && data.account.disabled_reason && (
                    <p className="text-sm text-slate-600">Reason: {data.account.disabled_reason}</p>
                  )}
                  {ACCOUNT_TEXT[data.account.state].action && (
                    <Button onClick={startOnboarding} disabled={onboarding.isPending}>
                      {onboarding.isPending ? "Opening..." : ACCOUNT_TEXT[data.account.state].action}
                    </Button>
                  )}
                  {data.account.state === "enabled" && (
                    <div className="space-y-2">
                      <Button
                        onClick={startWithdraw}
                        disabled={withdraw.isPending || data.withdrawable_cents < data.minimum_cents}
                      >
                        <ArrowDownToLine className="size-4" aria-hidden="true" />
                        {withdraw.isPending
                          ? "Withdrawing..."
                          : `Withdraw ${formatCents(data.withdrawable_cents)}`}
                      </Button>
                      <p className="text-xs text-slate-500">
                        Minimum payout {formatCents(data.minimum_cents)}.{" "}
                        {data.schedule === "manual"
                          ? "Payouts are made when you withdraw."
                          : `Available earnings are also paid out automatically ${data.schedule === "weekly" ? "each week" : "each day"}.`}
                      </p>
                    </div>
                  )}
                </CardBody>
              </Card>
              {data.pending.length > 0 && (
                <Card>
                  <CardHeader
                    title="Pending earnings"
                    description="Each part becomes available on its date."
                  />
                  <CardBody>
                    <ul aria-label="Pending earnings" className="divide-y divide-slate-100 text-sm">
                      {data.pending.map((part) => (
                        <li key={part.available_at} className="flex justify-between py-2">
                          <span>{formatDateTime(part.available_at)}</span>
                          <span className="font-medium tabular-nums">
                            <Money micros={part.amount_micros} />
                          </span>
                        </li>
                      ))}
                    </ul>
                  </CardBody>
                </Card>
              )}
              {data.gateway === "sandbox" && <TestClock now={data.now} />}
            </div>
            <div className="min-w-0 lg:col-span-3">
              <Card>
                <CardHeader
                  title="Payout history"
                  actions={
                    <Button
                      variant="secondary"
                      size="sm"
                      onClick={downloadStatement}
                      disabled={statement.isPending}
                    >
                      <Download className="size-4" aria-hidden="true" />
                      Export CSV
                    </Button>
                  }
                />
                <CardBody>
                  {data.payouts.length === 0 ? (
                    <EmptyState
                      icon={Banknote}
                      title="No payouts yet"
                      description="Your payouts appear here once you withdraw or the schedule pays you."
                    />
                  ) : (
                    <div
                      // biome-ignore lint/a11y/noNoninteractiveTabindex: on a phone the table scrolls sideways; the keyboard must reach it
                      tabIndex={0}
                      className="overflow-x-auto"
                    >
                      <table aria-label="Payout history" className="w-full text-left text-sm">
                        <thead className="text-xs text-slate-500 uppercase">
                          <tr>
                            <th className="py-2 pr-3 font-medium">Date</th>
                            <th className="py-2 pr-3 font-medium">Amount</th>
                            <th className="py-2 pr-3 font-medium">Status</th>
                            <th className="py-2 font-medium">Details</th>
                            <th className="py-2 pl-3 font-medium">
                              <span className="sr-only">Receipt</span>
                            </th>
                          </tr>
                        </thead>
                        <tbody className="divide-y divide-slate-100">
                          {data.payouts.map((payout) => (
                            <tr key={payout.id}>
                              <td className="py-2 pr-3 whitespace-nowrap">
                                {/* The date fits a phone's width; the time is on hover and in the CSV. */}
                                <time dateTime={payout.created_at} title={formatDateTime(payout.created_at)}>
                                  {formatDate(payout.created_at)}
                                </time>
                              </td>
                              <td className="py-2 pr-3 font-medium tabular-nums">
                                {formatCents(payout.amount_cents)}
                              </td>
                              <td className="py-2 pr-3">
                                <Badge tone={STATUS_LABELS[payout.status].tone}>
                                  {STATUS_LABELS[payout.status].label}
                                </Badge>
                              </td>
                              <td className="py-2 text-slate-600">
                                {payout.failure_reason ??
                                  (payout.automatic ? "Automatic payout" : "Withdrawal")}
                              </td>
                              <td className="py-2 pl-3">
                                {payout.status === "paid" && receiptOf.has(payout.id) && (
                                  <ReceiptLinks number={receiptOf.get(payout.id) as string} />
                                )}
                              </td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </div>
                  )}
                </CardBody>
              </Card>
            </div>
          </div>
        </div>
      )}
    </PageContainer>
  );
}

/** Your own sandbox test clock: moves your payout time ahead, 1 to 30 days a step, at most 90 days in all. */
function TestClock({ now }: { now: string }) {
  const [days, setDays] = useState("8");
  const advance = useAdvanceSandboxClock();
  return (
    <Card>
      <CardHeader
        title="Test clock"
        description={`Your sandbox time: ${formatDateTime(now)}. It moves only your payouts, 1 to 30 days a step, at most 90 days ahead.`}
      />
      <CardBody>
        <form
          className="flex flex-wrap items-end gap-3"
          onSubmit={(event) => {
            event.preventDefault();
            advance.mutate(Number(days), {
              onSuccess: (clock) => toast.success(`Test clock now at ${formatDateTime(clock.now)}.`),
              onError: (error) => toast.error(getErrorMessage(error)),
            });
          }}
        >
          <label className="text-sm text-slate-700">
            <span className="mb-1 block font-medium">Days to advance</span>
            <input
              type="number"
              min="1"
              max="30"
              step="1"
              value={days}
              onChange={(event) => setDays(event.target.value)}
              className="w-24 rounded-md border border-slate-300 px-3 py-2"
            />
          </label>
          <Button type="submit" variant="secondary" disabled={advance.isPending}>
            <CalendarClock className="size-4" aria-hidden="true" />
            Advance clock
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}
