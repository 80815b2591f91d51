import { WebhookEndpointListSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/** Every webhook query sits under this key: a change to an endpoint or a send refetches them all. */
export const webhooksQueryKey = ["webhooks"] as const;

/** `GET /webhooks/endpoints/`: the caller's endpoints, without their secrets. */
const webhookEndpoints = defineQuery({
  key: () => [...webhooksQueryKey, "endpoints"] as const,
  fetch: (signal) => apiRequest("/webhooks/endpoints/", { schema: WebhookEndpointListSchema, signal }),
});

export const useWebhookEndpoints = webhookEndpoints.useQuery;
