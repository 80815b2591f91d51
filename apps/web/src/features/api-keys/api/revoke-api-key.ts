import { apiRequest } from "../../../lib/api-client";
import { apiKeysQueryKey } from "../../../lib/api-keys/list-api-keys";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";

/** `DELETE /keys/{id}/`: answers 204; calls with the key fail from then on. */
export async function revokeApiKey(id: string): Promise<void> {
  await apiRequest(`/keys/${encodeURIComponent(id)}/`, { method: "DELETE" });
}

export function useRevokeApiKey() {
  return useInvalidatingMutation(revokeApiKey, apiKeysQueryKey);
}
