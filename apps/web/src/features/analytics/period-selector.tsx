import { ANALYTICS_WINDOWS } from "@promptmint/contracts";
import { cn } from "../../lib/cn";
import type { AnalyticsWindow } from "./analytics-window";

/** The 7d / 30d / 90d toggle; the active window is highlighted and pressed. */
export function PeriodSelector({
  value,
  onChange,
}: {
  value: AnalyticsWindow;
  onChange: (days: AnalyticsWindow) => void;
}) {
  return (
    <fieldset className="inline-flex rounded-lg border border-slate-300 bg-white p-0.5 shadow-sm">
      <legend className="sr-only">Time period</legend>
      {ANALYTICS_WINDOWS.map((days) => {
        const active = days === value;
        return (
          <button
            key={days}
            type="button"
            aria-pressed={active}
            title={`Last ${days} days`}
            onClick={() => onChange(days)}
            className={cn(
              "h-8 min-w-12 rounded-md px-3 text-sm font-medium transition-colors",
              "focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600",
              active
                ? "bg-brand-600 text-white shadow-sm"
                : "text-slate-600 hover:bg-slate-100 hover:text-slate-900",
            )}
          >
            {days}d
          </button>
        );
      })}
    </fieldset>
  );
}
