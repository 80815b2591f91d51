import { type MoneyFigures, MoneyFiguresSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";
import { analyticsQueryKey } from "./analytics-keys";

/**
 * `GET /analytics/figures/?days=`: gross, platform fee, model cost and net across the creator's
 * apps, from the same rollups as each app's figures (docs/decisions/029).
 */
export function fetchMoneyFigures(days: number, signal?: AbortSignal): Promise<MoneyFigures> {
  return apiRequest(`/analytics/figures/?days=${days}`, { schema: MoneyFiguresSchema, signal });
}

export function moneyFiguresQueryOptions(days: number) {
  return queryOptions({
    queryKey: [...analyticsQueryKey, "figures", days] as const,
    queryFn: ({ signal }) => fetchMoneyFigures(days, signal),
  });
}

export function useMoneyFigures(days: number, options: { enabled?: boolean } = {}) {
  return useQuery({ ...moneyFiguresQueryOptions(days), enabled: options.enabled ?? true });
}
