import type { EventSink, UsageExportDay, UsageExportReconcile } from "@promptmint/contracts";
import { useState } from "react";
import { Alert } from "../../components/ui/alert";
import { type AnalyticsWindow, PeriodSelector } from "../../components/ui/analytics-header";
import { Badge } from "../../components/ui/badge";
import { Money } from "../../components/ui/money";
import { QueryStates } from "../../components/ui/query-states";
import { formatDateTime, formatNumber } from "../../lib/format";
import { AdminTable } from "./admin-table";
import { useUsageExport } from "./api/get-usage-export";

/** The sinks in the order the operator reads them; one the console does not know keeps its name. */
const SINK_LABELS: Record<string, string> = {
  webhooks: "Webhook fan-out",
  cloudevents: "CloudEvents (OpenMeter)",
  stripe_meter: "Stripe meter events",
};
const sinkLabel = (sink: string) => SINK_LABELS[sink] ?? sink;

/**
 * Where charged calls leave the platform for billing and metering (decision 068): each sink's
 * progress, and per creator and UTC day the ledger's charged calls against the log's and each
 * sink's export, every difference named by the API.
 */
export function UsageExportSection() {
  const [days, setDays] = useState<AnalyticsWindow>(7);
  const usage = useUsageExport(days);
  return (
    <section aria-label="Usage export">
      <div className="mb-2 flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <h2 className="text-lg font-semibold">Usage export</h2>
          <p className="text-sm text-slate-600">
            Charged calls sent to metering and billing. Warehouse loaders pull the event log as NDJSON from{" "}
            <code className="break-all">GET /api/admin/usage-events?cursor=&amp;limit=&amp;types=</code>.
          </p>
        </div>
        {/* Outside the loaded content: a switch keeps the keyboard's focus on the toggle. */}
        <PeriodSelector value={days} onChange={setDays} />
      </div>
      <QueryStates query={usage} loading="Loading the usage export...">
        {(data) => <UsageExport data={data} days={days} />}
      </QueryStates>
    </section>
  );
}

function UsageExport({ data, days }: { data: UsageExportReconcile; days: number }) {
  return (
    <div className="space-y-6">
      <div>
        <h3 className="mb-2 font-medium text-slate-800">Sinks</h3>
        <SinksTable sinks={inOrder(data.sinks)} />
      </div>
      <div>
        <h3 className="mb-2 font-medium text-slate-800">Per creator and day, last {days} days (UTC)</h3>
        <CreatorDaysTable rows={data.days} sinks={sinkNames(data)} days={days} />
      </div>
    </div>
  );
}

/** Known sinks first in their order, then any other by name: the sinks table and the day columns agree. */
const sinkOrder = (sink: string) => {
  const known = Object.keys(SINK_LABELS).indexOf(sink);
  return known === -1 ? Number.MAX_SAFE_INTEGER : known;
};
const bySinkOrder = (a: string, b: string) => sinkOrder(a) - sinkOrder(b) || a.localeCompare(b);
const inOrder = (sinks: EventSink[]) => [...sinks].sort((a, b) => bySinkOrder(a.sink, b.sink));

/**
 * Every export sink that ran or exported in the period. The webhook fan-out is not an export (its
 * deliveries are per endpoint, and it keeps no per-day counts): it has no column.
 */
function sinkNames(data: UsageExportReconcile): string[] {
  const names = new Set([
    ...data.sinks.map((s) => s.sink),
    ...data.days.flatMap((d) => Object.keys(d.exported)),
  ]);
  names.delete("webhooks");
  return [...names].sort(bySinkOrder);
}

function SinksTable({ sinks }: { sinks: EventSink[] }) {
  return (
    <AdminTable
      label="Sinks"
      head={["Sink", "Events exported", "Money exported", "Behind", "Last error", "Last update"]}
      rows={sinks.map((sink) => [
        <span key="n" className="font-medium whitespace-nowrap">
          {sinkLabel(sink.sink)}
        </span>,
        formatNumber(sink.exported),
        <Money key="m" micros={sink.exported_micros} />,
        sink.behind > 0 ? (
          <Badge key="b" tone="yellow" className="whitespace-nowrap">
            {formatNumber(sink.behind)} behind
          </Badge>
        ) : (
          <span key="b" className="text-slate-500">
            Caught up
          </span>
        ),
        sink.last_error ? (
          <span key="e" className="block min-w-56 text-red-700">
            {sink.last_error}
            <span className="block text-xs">{formatDateTime(sink.last_error_at)}</span>
          </span>
        ) : (
          <span key="e" className="text-slate-500">
            None
          </span>
        ),
        <span key="u" className="whitespace-nowrap">
          {formatDateTime(sink.updated_at)}
        </span>,
      ])}
      empty="No export has run yet: set USAGE_EXPORT_CLOUDEVENTS_URL or USAGE_EXPORT_STRIPE_METER, or pull /api/admin/usage-events."
    />
  );
}

function CreatorDaysTable({ rows, sinks, days }: { rows: UsageExportDay[]; sinks: string[]; days: number }) {
  if (rows.length === 0)
    return <p className="text-sm text-slate-500">No charged calls in the last {days} days.</p>;
  const differing = rows.filter((row) => row.differences.length > 0).length;
  return (
    <div className="space-y-3">
      {differing === 0 ? (
        <Alert tone="success" role="status">
          Ledger = log = exports for every creator and day
        </Alert>
      ) : (
        <Alert tone="error" role="status">
          {differing} creator-day{differing === 1 ? "" : "s"} differ{differing === 1 ? "s" : ""}
        </Alert>
      )}
      <AdminTable
        label="Per creator and day"
        head={[
          "Day",
          "Creator",
          "Calls charged (ledger)",
          "Call events (log)",
          ...sinks.map((sink) => `${sinkLabel(sink)} exported`),
          "Differences",
        ]}
        rows={rows.map((row) => [
          <span key="d" className="whitespace-nowrap">
            {row.day}
          </span>,
          row.creator_email ?? row.creator_id,
          <CallsCell key="c" calls={row.charged_calls} micros={row.charged_micros} />,
          <CallsCell key="l" calls={row.logged_calls} micros={row.logged_micros} />,
          ...sinks.map((sink) => (
            <CallsCell
              key={sink}
              calls={row.exported[sink]?.events ?? 0}
              micros={row.exported[sink]?.micros ?? 0}
            />
          )),
          row.differences.length > 0 ? (
            <ul key="x" className="min-w-64 list-disc space-y-1 pl-4 text-red-700">
              {row.differences.map((difference) => (
                <li key={difference}>{difference}</li>
              ))}
            </ul>
          ) : (
            <span key="x" className="text-slate-500">
              None
            </span>
          ),
        ])}
        rowClassName={(index) => (rows[index]?.differences.length ? "bg-red-50" : undefined)}
        empty=""
      />
    </div>
  );
}

/** A count of calls with the money they carry beneath it. */
function CallsCell({ calls, micros }: { calls: number; micros: number }) {
  return (
    <span className="whitespace-nowrap tabular-nums">
      {formatNumber(calls)}
      <span className="block text-xs text-slate-500">
        <Money micros={micros} />
      </span>
    </span>
  );
}
