import type { AnalyticsWindow } from "./analytics-window";

/** Every analytics query starts with this key; invalidating it refreshes every figure. */
export const analyticsQueryKey = ["analytics"] as const;

export function applicationAnalyticsQueryKey(slug: string) {
  return [...analyticsQueryKey, "application", slug] as const;
}

export function globalDashboardQueryKey(days: AnalyticsWindow) {
  return [...analyticsQueryKey, "dashboard", days] as const;
}
