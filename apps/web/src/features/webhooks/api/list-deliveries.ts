import { WebhookDeliveryListSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";
import { webhooksQueryKey } from "./list-webhook-endpoints";

const DELIVERIES_SHOWN = 50;

/** `GET /webhooks/endpoints/{id}/deliveries/`: the endpoint's delivery log, newest first. */
const deliveries = defineQuery({
  key: (endpointId: string) => [...webhooksQueryKey, "deliveries", endpointId] as const,
  fetch: (endpointId, signal) =>
    apiRequest(
      `/webhooks/endpoints/${encodeURIComponent(endpointId)}/deliveries/?limit=${DELIVERIES_SHOWN}`,
      {
        schema: WebhookDeliveryListSchema,
        signal,
      },
    ),
  // A delivery waiting for its next retry changes on the server's schedule: watch it while it waits.
  refetchInterval: (query) =>
    query.state.data?.some((delivery) => delivery.status === "pending") ? 5_000 : false,
});

export const useWebhookDeliveries = deliveries.useQuery;
