import { type WebhookDelivery, WebhookDeliverySchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { webhooksQueryKey } from "./list-webhook-endpoints";

/** `POST /webhooks/deliveries/{id}/redeliver/`: sends the delivery again now, with the same webhook-id. */
export function redeliverDelivery(deliveryId: string): Promise<WebhookDelivery> {
  return apiRequest(`/webhooks/deliveries/${encodeURIComponent(deliveryId)}/redeliver/`, {
    method: "POST",
    schema: WebhookDeliverySchema,
  });
}

export function useRedeliverDelivery() {
  return useInvalidatingMutation(redeliverDelivery, webhooksQueryKey);
}
