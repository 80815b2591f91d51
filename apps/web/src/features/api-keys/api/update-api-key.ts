import { type ApiKey, ApiKeySchema, type UpdateApiKey } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { apiKeysQueryKey } from "../../../lib/api-keys/list-api-keys";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";

/** `PATCH /keys/{id}/`: changes the fields given (null clears an option); applies to the next call. */
export function updateApiKey({ id, changes }: { id: string; changes: UpdateApiKey }): Promise<ApiKey> {
  return apiRequest(`/keys/${encodeURIComponent(id)}/`, {
    method: "PATCH",
    body: changes,
    schema: ApiKeySchema,
  });
}

export function useUpdateApiKey() {
  return useInvalidatingMutation(updateApiKey, apiKeysQueryKey);
}
