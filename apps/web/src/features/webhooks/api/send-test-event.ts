import { type WebhookDelivery, WebhookDeliverySchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { webhooksQueryKey } from "./list-webhook-endpoints";

/** `POST /webhooks/endpoints/{id}/test/`: sends a `webhook.test` event now; answers its delivery. */
export function sendTestEvent(endpointId: string): Promise<WebhookDelivery> {
  return apiRequest(`/webhooks/endpoints/${encodeURIComponent(endpointId)}/test/`, {
    method: "POST",
    schema: WebhookDeliverySchema,
  });
}

export function useSendTestEvent() {
  return useInvalidatingMutation(sendTestEvent, webhooksQueryKey);
}
