import {
  type UpdateWebhookEndpoint,
  type WebhookEndpoint,
  WebhookEndpointSchema,
} from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { webhooksQueryKey } from "./list-webhook-endpoints";

/** `PATCH /webhooks/endpoints/{id}/`: changes the fields given; enabling again clears its failures. */
export function updateWebhookEndpoint({
  id,
  changes,
}: {
  id: string;
  changes: UpdateWebhookEndpoint;
}): Promise<WebhookEndpoint> {
  return apiRequest(`/webhooks/endpoints/${encodeURIComponent(id)}/`, {
    method: "PATCH",
    body: changes,
    schema: WebhookEndpointSchema,
  });
}

export function useUpdateWebhookEndpoint() {
  return useInvalidatingMutation(updateWebhookEndpoint, webhooksQueryKey);
}
