import { ModelCatalogSchema } from "@promptmint/contracts";
import { apiRequest } from "./api-client";
import { defineQuery } from "./define-query";

/**
 * `GET /models/`: every model an app may use, and whether this server holds its key. The catalog
 * only adds options to SPEC's lists, so a failure leaves those lists as they are.
 */
const modelCatalog = defineQuery({
  key: () => ["models"] as const,
  fetch: (signal) => apiRequest("/models/", { schema: ModelCatalogSchema, signal }),
  staleTime: 10 * 60_000,
});

export const useModelCatalog = modelCatalog.useQuery;
