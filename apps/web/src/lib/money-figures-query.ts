import { MoneyFiguresSchema } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { analyticsQueryKey } from "./analytics-keys";
import { apiRequest } from "./api-client";
import { defineQuery } from "./define-query";

/**
 * `GET /analytics/figures/?days=`: gross, platform fee, model cost and net across the creator's
 * apps, from the same rollups as each app's figures (docs/decisions/029).
 */
const moneyFigures = defineQuery({
  key: (days: number) => [...analyticsQueryKey, "figures", days] as const,
  fetch: (days, signal) =>
    apiRequest(`/analytics/figures/?days=${days}`, { schema: MoneyFiguresSchema, signal }),
});

export function useMoneyFigures(days: number, options: { enabled?: boolean } = {}) {
  return useQuery({ ...moneyFigures.options(days), enabled: options.enabled ?? true });
}
