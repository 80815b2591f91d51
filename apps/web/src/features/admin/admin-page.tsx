import type { AdminOverview } from "@promptmint/contracts";
import { AlertTriangle, Banknote, Cpu, Landmark, Receipt, ShieldAlert } from "lucide-react";
import { type FormEvent, type ReactNode, useState } from "react";
import { AccessDeniedState } from "../../components/ui/access-denied-state";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card } from "../../components/ui/card";
import { EmailVerificationNotice } from "../../components/ui/email-verification-notice";
import { ErrorBox } from "../../components/ui/error-box";
import { Money } from "../../components/ui/money";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { LoadingState } from "../../components/ui/spinner";
import { StatCard } from "../../components/ui/stat-card";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatCents, formatDateTime, formatMicros } from "../../lib/format";
import { useAdminAccess } from "../../lib/operator-query";
import { ExposureSection } from "./admin-exposure";
import { AdminTable } from "./admin-table";
import { UsageExportSection } from "./admin-usage-export";
import { useAdminOverview } from "./api/get-admin-overview";
import { useAuditEntries } from "./api/list-audit-entries";
import { useSetSuspended } from "./api/set-suspended";

const DAY_MS = 86_400_000;
const isoDay = (date: Date) => date.toISOString().slice(0, 10);
/** The day after an ISO day: "To" is inclusive on screen, the API's `to` is exclusive. */
const dayAfter = (day: string) => isoDay(new Date(Date.parse(`${day}T00:00:00Z`) + DAY_MS));

type Target = { kind: "apps" | "users"; id: string; label: string; suspended: boolean };

/**
 * /admin: the operator's figures, disputes and debts, top apps and creators, suspensions, audit
 * log; anyone else sees one access-denied screen (with the verification notice when that is why).
 */
export function AdminPage() {
  const access = useAdminAccess();
  const header = (
    <PageHeader
      title="Operator"
      description="The platform's money, disputes and debts, and the apps and people it serves."
    />
  );
  if (access.isPending)
    return (
      <PageContainer className="max-w-7xl">
        {header}
        <LoadingState label="Checking access..." />
      </PageContainer>
    );
  if (access.isError)
    return (
      <PageContainer className="max-w-7xl">
        {header}
        {/* Only when verifying would make them an operator: the server says so (issue 42). */}
        {access.error instanceof ApiClientError && access.error.code === "email_unverified" && (
          <EmailVerificationNotice className="mb-6" reason="Operator access needs a verified address." />
        )}
        <AccessDeniedState
          title="This page is for the platform's operators"
          reason={getErrorMessage(access.error)}
        />
      </PageContainer>
    );
  return <OperatorScreen header={header} />;
}

function OperatorScreen({ header }: { header: ReactNode }) {
  const [from, setFrom] = useState(() => isoDay(new Date(Date.now() - 30 * DAY_MS)));
  const [to, setTo] = useState(() => isoDay(new Date()));
  const [target, setTarget] = useState<Target | null>(null);
  const overview = useAdminOverview(from, to ? dayAfter(to) : "");
  const audit = useAuditEntries();

  return (
    <PageContainer className="max-w-7xl">
      {header}
      <form
        className="mb-6 flex flex-wrap items-end gap-3"
        aria-label="Period"
        onSubmit={(e) => e.preventDefault()}
      >
        {[
          { label: "From", value: from, setValue: setFrom },
          { label: "To", value: to, setValue: setTo },
        ].map(({ label, value, setValue }) => (
          <label key={label} className="text-sm text-slate-600">
            {label}{" "}
            <input
              type="date"
              className="rounded-md border border-slate-300 px-2 py-1"
              value={value}
              onChange={(e) => setValue(e.target.value)}
            />
          </label>
        ))}
      </form>
      {overview.isPending ? (
        <LoadingState label="Loading figures..." />
      ) : overview.isError || !overview.data ? (
        <ErrorBox message={getErrorMessage(overview.error)} />
      ) : (
        <Overview data={overview.data} onAct={setTarget} />
      )}
      {target && <SuspendForm target={target} onDone={() => setTarget(null)} />}
      <div className="mt-8">
        <ExposureSection />
        <UsageExportSection />
      </div>
      <section aria-label="Audit log" className="mt-8">
        <h2 className="mb-2 text-lg font-semibold">Audit log</h2>
        {audit.isPending ? (
          <LoadingState label="Loading the audit log..." />
        ) : audit.isError ? (
          <ErrorBox message={getErrorMessage(audit.error)} />
        ) : (
          <AdminTable
            head={["When", "Who", "Action", "Target", "Reason"]}
            rows={(audit.data?.entries ?? []).map((entry) => [
              formatDateTime(entry.created_at),
              entry.actor_email,
              entry.action,
              `${entry.target_kind} ${entry.target_id}`,
              entry.reason,
            ])}
            empty="No operator action yet."
          />
        )}
      </section>
    </PageContainer>
  );
}

function Overview({ data, onAct }: { data: AdminOverview; onAct: (target: Target) => void }) {
  const owed = data.debts.reduce((sum, debt) => sum + debt.owed_micros, 0);
  return (
    <div className="space-y-8">
      <section aria-label="Figures" className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
        <StatCard icon={Receipt} label="Gross volume" value={<Money micros={data.gross_micros} />} />
        <StatCard
          icon={Landmark}
          label="Platform fee income"
          value={<Money micros={data.fee_income_micros} />}
        />
        <StatCard
          icon={Cpu}
          label="Model cost paid / recovered"
          value={`${formatMicros(data.model_cost_paid_micros)} / ${formatMicros(data.model_cost_recovered_micros)}`}
        />
        <StatCard
          icon={Banknote}
          label="Payouts queued / in transit"
          value={`${formatMicros(data.payouts.queued_micros)} / ${formatMicros(data.payouts.in_transit_micros)}`}
          hint={`Paid ${formatMicros(data.payouts.paid_micros)} · failed ${formatMicros(data.payouts.failed_micros)}`}
        />
        <StatCard
          icon={AlertTriangle}
          label="Refunded / disputed"
          value={`${formatCents(data.refunded_cents)} / ${formatCents(data.disputed_cents)}`}
        />
        <StatCard icon={ShieldAlert} label="Debts owed" value={<Money micros={owed} />} />
      </section>
      <section aria-label="Disputes">
        <h2 className="mb-2 text-lg font-semibold">Disputes</h2>
        <AdminTable
          head={["Payment", "Payer", "Amount", "Status", "Reason"]}
          rows={data.disputes.map((d) => [
            d.payment_intent,
            d.payer_email,
            formatCents(d.amount_cents),
            d.status,
            d.reason,
          ])}
          empty="No disputes."
        />
      </section>
      <section aria-label="Debts">
        <h2 className="mb-2 text-lg font-semibold">Debts</h2>
        <AdminTable
          head={["Who", "Owes"]}
          rows={data.debts.map((d) => [d.email, formatMicros(d.owed_micros)])}
          empty="Nobody owes anything."
        />
      </section>
      <section aria-label="Top apps">
        <h2 className="mb-2 text-lg font-semibold">Top apps</h2>
        <AdminTable
          head={["App", "Creator", "Calls", "Gross", ""]}
          rows={data.top_apps.map((app) => [
            <span key="n">
              {app.name} {app.suspended && <Badge tone="red">Suspended</Badge>}
            </span>,
            app.owner_email,
            String(app.calls),
            formatMicros(app.gross_micros),
            <Button
              key="a"
              size="sm"
              variant={app.suspended ? "secondary" : "danger"}
              onClick={() => onAct({ kind: "apps", id: app.id, label: app.slug, suspended: app.suspended })}
            >
              {app.suspended ? "Unsuspend" : "Suspend"}
            </Button>,
          ])}
          empty="No paid calls in this period."
        />
      </section>
      <section aria-label="Top creators">
        <h2 className="mb-2 text-lg font-semibold">Top creators</h2>
        <AdminTable
          head={["Creator", "Gross", ""]}
          rows={data.top_creators.map((creator) => [
            <span key="n">
              {creator.email} {creator.suspended && <Badge tone="red">Suspended</Badge>}
            </span>,
            formatMicros(creator.gross_micros),
            <Button
              key="a"
              size="sm"
              variant={creator.suspended ? "secondary" : "danger"}
              onClick={() =>
                onAct({ kind: "users", id: creator.id, label: creator.email, suspended: creator.suspended })
              }
            >
              {creator.suspended ? "Unsuspend" : "Suspend"}
            </Button>,
          ])}
          empty="No paid calls in this period."
        />
      </section>
      <section aria-label="Suspensions">
        <h2 className="mb-2 text-lg font-semibold">Suspensions</h2>
        <AdminTable
          head={["What", "Reason", "Since", ""]}
          rows={data.suspensions.map((s) => [
            `${s.target_kind === "user" ? "User" : "App"} ${s.label}`,
            s.reason,
            formatDateTime(s.created_at),
            <Button
              key="a"
              size="sm"
              variant="secondary"
              onClick={() =>
                onAct({
                  kind: s.target_kind === "user" ? "users" : "apps",
                  id: s.target_id,
                  label: s.label,
                  suspended: true,
                })
              }
            >
              Unsuspend
            </Button>,
          ])}
          empty="Nothing is suspended."
        />
      </section>
    </div>
  );
}

function SuspendForm({ target, onDone }: { target: Target; onDone: () => void }) {
  const [reason, setReason] = useState("");
  const verb = target.suspended ? "unsuspend" : "suspend";
  const act = useSetSuspended(target);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    act.mutate(reason, { onSuccess: onDone });
  };
  return (
    <Card className="mt-6 p-4">
      <form aria-label={`${verb} ${target.label}`} onSubmit={submit} className="space-y-3">
        <label className="block text-sm font-medium text-slate-700">
          Why {verb} {target.label}?
          <input
            // The form opens below the tables: focus brings it into view and keeps keyboard users on it.
            // biome-ignore lint/a11y/noAutofocus: the operator just asked for this form
            autoFocus
            className="mt-1 block w-full rounded-md border border-slate-300 px-2 py-1"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            required
            minLength={3}
            maxLength={500}
          />
        </label>
        {act.isError && <ErrorBox message={getErrorMessage(act.error)} />}
        <div className="flex gap-2">
          <Button type="submit" variant={target.suspended ? "primary" : "danger"} disabled={act.isPending}>
            {target.suspended ? "Unsuspend" : "Suspend"}
          </Button>
          <Button type="button" variant="ghost" onClick={onDone}>
            Cancel
          </Button>
        </div>
      </form>
    </Card>
  );
}
