import { type AppHealth, HEALTH_MIN_CALLS } from "@promptmint/contracts";
import { Activity } from "lucide-react";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { cn } from "../../lib/cn";
import { formatDuration, formatNumber, formatRate } from "../../lib/format";

const NOT_ENOUGH = "Not enough calls yet";

/** On an Explore card: uptime and median latency in one line, or why there are none. */
export function HealthLine({ health, className }: { health: AppHealth; className?: string }) {
  return (
    // A span (shown as a block), so it may sit inside a page header's paragraph.
    <span className={cn("flex items-center gap-1.5 text-xs text-slate-500", className)}>
      <Activity className="size-3.5 shrink-0" aria-hidden="true" />
      {health.enough_calls ? (
        <span className="tabular-nums">
          {formatRate(health.uptime)} uptime · {formatDuration(health.median_latency_ms)} median
        </span>
      ) : (
        <span>{NOT_ENOUGH}</span>
      )}
    </span>
  );
}

/** On an app's page: its measured uptime, median latency, error rate and calls over 30 days. */
export function HealthCard({ health }: { health: AppHealth }) {
  const figures = [
    { label: "Uptime", value: formatRate(health.uptime) },
    { label: "Median latency", value: formatDuration(health.median_latency_ms) },
    { label: "Error rate", value: formatRate(health.error_rate) },
    { label: "Calls", value: formatNumber(health.calls_30d) },
  ];
  return (
    <Card>
      <CardHeader title="Health" description="Measured from real calls over the last 30 days." />
      <CardBody>
        {health.enough_calls ? (
          <dl className="grid grid-cols-2 gap-4">
            {figures.map((figure) => (
              <div key={figure.label}>
                <dt className="text-sm text-slate-500">{figure.label}</dt>
                <dd className="text-lg font-semibold text-slate-900 tabular-nums">{figure.value}</dd>
              </div>
            ))}
          </dl>
        ) : (
          <p className="text-sm text-slate-600">
            {`${NOT_ENOUGH}: figures appear after ${formatNumber(HEALTH_MIN_CALLS)} calls in 30 days (${formatNumber(health.calls_30d)} so far).`}
          </p>
        )}
      </CardBody>
    </Card>
  );
}
