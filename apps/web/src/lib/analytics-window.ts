import { ANALYTICS_WINDOWS } from "@promptmint/contracts";
import { useCallback } from "react";
import { useSearchParams } from "react-router";

/** SPEC §9: the day windows an analytics screen offers. */
export type AnalyticsWindow = (typeof ANALYTICS_WINDOWS)[number];

export const DEFAULT_ANALYTICS_WINDOW: AnalyticsWindow = 30;

export function parseAnalyticsWindow(value: string | null): AnalyticsWindow {
  return ANALYTICS_WINDOWS.find((days) => String(days) === value) ?? DEFAULT_ANALYTICS_WINDOW;
}

/**
 * The chosen window lives in the URL (`?days=7`) so a reload or a shared link keeps it; the
 * default 30 days leaves the URL clean, and an unknown value falls back to it.
 */
export function useAnalyticsWindow(): [AnalyticsWindow, (days: AnalyticsWindow) => void] {
  const [searchParams, setSearchParams] = useSearchParams();
  const days = parseAnalyticsWindow(searchParams.get("days"));
  const setDays = useCallback(
    (next: AnalyticsWindow) =>
      setSearchParams(
        (current) => {
          const params = new URLSearchParams(current);
          if (next === DEFAULT_ANALYTICS_WINDOW) params.delete("days");
          else params.set("days", String(next));
          return params;
        },
        { replace: true, preventScrollReset: true },
      ),
    [setSearchParams],
  );
  return [days, setDays];
}
