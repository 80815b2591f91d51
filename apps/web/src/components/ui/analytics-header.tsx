import { ANALYTICS_WINDOWS } from "@promptmint/contracts";
import type { ReactNode } from "react";
import { cn } from "../../lib/cn";
import { PageHeader } from "./page-header";

/** SPEC §9: the day windows an analytics screen offers. */
export type AnalyticsWindow = (typeof ANALYTICS_WINDOWS)[number];

/**
 * The top of both analytics pages (global and one app's): title, description and the period
 * they cover, chosen with the 7d / 30d / 90d toggle and said in words beside it.
 */
export function AnalyticsHeader({
  title,
  description,
  days,
  onDaysChange,
}: {
  title: ReactNode;
  description: ReactNode;
  days: AnalyticsWindow;
  onDaysChange: (days: AnalyticsWindow) => void;
}) {
  return (
    <PageHeader
      title={title}
      description={description}
      actions={
        <div className="flex flex-col items-start gap-1 sm:items-end">
          <PeriodSelector value={days} onChange={onDaysChange} />
          <p className="text-xs text-slate-500">Last {days} days, today included (UTC)</p>
        </div>
      }
    />
  );
}

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
