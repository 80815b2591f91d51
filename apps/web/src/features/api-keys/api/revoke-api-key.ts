import { apiRequest } from "../../../lib/api-client";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { apiKeysQueryKey } from "./list-api-keys";

/** `DELETE /keys/{id}/`: answers 204; calls with the key fail from then on. */
export async function revokeApiKey(id: string): Promise<void> {
  await apiRequest(`/keys/${encodeURIComponent(id)}/`, { method: "DELETE" });
}

export function useRevokeApiKey() {
  return useInvalidatingMutation(revokeApiKey, apiKeysQueryKey);
}
