import { type CreateApiKey, type CreatedApiKey, CreatedApiKeySchema } from "@promptmint/contracts";
import { apiRequest } from "../api-client";
import { useInvalidatingMutation } from "../invalidating-mutation";
import { apiKeysQueryKey } from "./list-api-keys";

/** `POST /keys/`: answers 201 with the full key, the only time it is ever shown. */
export function createApiKey(input: CreateApiKey): Promise<CreatedApiKey> {
  return apiRequest("/keys/", { method: "POST", body: input, schema: CreatedApiKeySchema });
}

export function useCreateApiKey() {
  return useInvalidatingMutation(createApiKey, apiKeysQueryKey);
}
