import type { ApiKey } from "@promptmint/contracts";
import { formatMicros, MICROS_PER_CENT } from "../../lib/format";

const PERIOD: Record<ApiKey["limit_reset"], string> = {
  daily: "today",
  weekly: "this week",
  monthly: "this month",
  never: "in total",
};

/** When the period ends, in UTC as the limit counts it: "00:00 UTC", or "Mon 2 Dec, 00:00 UTC". */
function resetsAt(key: ApiKey): string | null {
  if (!key.period_resets_at) return null;
  if (key.limit_reset === "daily") return "resets 00:00 UTC";
  const day = new Date(key.period_resets_at).toLocaleDateString("en-GB", {
    weekday: "short",
    day: "numeric",
    month: "short",
    timeZone: "UTC",
  });
  return `resets ${day}, 00:00 UTC`;
}

/** A key's spend this period against its limit: a bar, and "$1.20 of $5.00 today, resets 00:00 UTC". */
export function KeySpendMeter({ apiKey }: { apiKey: ApiKey }) {
  if (apiKey.spend_limit_cents === null) return <span className="text-slate-500">No limit</span>;
  const limitMicros = apiKey.spend_limit_cents * MICROS_PER_CENT;
  const percent = Math.min(100, Math.round((apiKey.spent_micros / limitMicros) * 100));
  const resets = resetsAt(apiKey);
  const text = `${formatMicros(apiKey.spent_micros)} of ${formatMicros(limitMicros)} ${PERIOD[apiKey.limit_reset]}`;
  return (
    <div className="min-w-44 space-y-1">
      <div
        role="progressbar"
        aria-label={`Spend of ${apiKey.name}`}
        aria-valuemin={0}
        aria-valuemax={limitMicros}
        aria-valuenow={Math.min(apiKey.spent_micros, limitMicros)}
        aria-valuetext={text}
        className="h-2 overflow-hidden rounded-full bg-slate-100"
      >
        <div
          className={percent >= 100 ? "h-full bg-amber-500" : "h-full bg-brand-600"}
          style={{ width: `${percent}%` }}
        />
      </div>
      <p className="text-xs text-slate-600">
        {text}
        {resets ? `, ${resets}` : ""}
      </p>
    </div>
  );
}
