import { ApiKeyListSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/**
 * `GET /keys/`: the caller's keys, for the usage export's key filter. The same cache key as the
 * API keys screen's list, so both read one copy.
 */
const exportKeys = defineQuery({
  key: () => ["api-keys"] as const,
  fetch: (signal) => apiRequest("/keys/", { schema: ApiKeyListSchema, signal }),
});

export const useExportKeys = exportKeys.useQuery;
