import { type ModelCatalog, ModelCatalogSchema } from "@promptmint/contracts";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";

/** `GET /models/`: every model an app may use, and whether this server holds its key. */
export function fetchModelCatalog(signal?: AbortSignal): Promise<ModelCatalog> {
  return apiRequest("/models/", { schema: ModelCatalogSchema, signal });
}

export function modelCatalogQueryOptions() {
  return queryOptions({
    queryKey: ["models"] as const,
    queryFn: ({ signal }) => fetchModelCatalog(signal),
    staleTime: 10 * 60_000,
  });
}

/** The catalog only adds options to SPEC's lists, so a failure leaves those lists as they are. */
export function useModelCatalog() {
  return useQuery(modelCatalogQueryOptions());
}
