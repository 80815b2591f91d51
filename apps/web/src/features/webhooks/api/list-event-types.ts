import { EventTypeListSchema } from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { defineQuery } from "../../../lib/define-query";

/** `GET /webhooks/event-types/`: what an endpoint can subscribe to; fixed for the server's life. */
const eventTypes = defineQuery({
  key: () => ["webhook-event-types"] as const,
  fetch: (signal) => apiRequest("/webhooks/event-types/", { schema: EventTypeListSchema, signal }),
  staleTime: Number.POSITIVE_INFINITY,
});

export const useWebhookEventTypes = eventTypes.useQuery;
