import { apiRequest } from "../../../lib/api-client";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { webhooksQueryKey } from "./list-webhook-endpoints";

/** `DELETE /webhooks/endpoints/{id}/`: answers 204; the endpoint and its delivery log are gone. */
export async function deleteWebhookEndpoint(id: string): Promise<void> {
  await apiRequest(`/webhooks/endpoints/${encodeURIComponent(id)}/`, { method: "DELETE" });
}

export function useDeleteWebhookEndpoint() {
  return useInvalidatingMutation(deleteWebhookEndpoint, webhooksQueryKey);
}
