import { ApiKeyListSchema } from "@promptmint/contracts";
import { apiRequest } from "../api-client";
import { defineQuery } from "../define-query";

export const apiKeysQueryKey = ["api-keys"] as const;

/** `GET /keys/`: the caller's keys, without their secret part. */
const apiKeys = defineQuery({
  key: () => apiKeysQueryKey,
  fetch: (signal) => apiRequest("/keys/", { schema: ApiKeyListSchema, signal }),
});

export const useApiKeys = apiKeys.useQuery;
