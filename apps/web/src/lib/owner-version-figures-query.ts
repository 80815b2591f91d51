import { OwnerVersionFiguresSchema } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { analyticsQueryKey } from "./analytics-keys";
import { apiRequest } from "./api-client";
import { defineQuery } from "./define-query";

/**
 * `GET /analytics/figures/versions/?days=`: the creator's figures by app and prompt version, whose
 * totals are exactly `GET /analytics/figures/` (issue 31).
 */
const ownerVersionFigures = defineQuery({
  key: (days: number) => [...analyticsQueryKey, "figures", "versions", days] as const,
  fetch: (days, signal) =>
    apiRequest(`/analytics/figures/versions/?days=${days}`, { schema: OwnerVersionFiguresSchema, signal }),
});

export function useOwnerVersionFigures(days: number) {
  return useQuery(ownerVersionFigures.options(days));
}
