import {
  type CreatedWebhookEndpoint,
  CreatedWebhookEndpointSchema,
  type CreateWebhookEndpoint,
} from "@promptmint/contracts";
import { apiRequest } from "../../../lib/api-client";
import { useInvalidatingMutation } from "../../../lib/invalidating-mutation";
import { webhooksQueryKey } from "./list-webhook-endpoints";

/** `POST /webhooks/endpoints/`: answers 201 with the endpoint and its signing secret. */
export function createWebhookEndpoint(input: CreateWebhookEndpoint): Promise<CreatedWebhookEndpoint> {
  return apiRequest("/webhooks/endpoints/", {
    method: "POST",
    body: input,
    schema: CreatedWebhookEndpointSchema,
  });
}

export function useCreateWebhookEndpoint() {
  return useInvalidatingMutation(createWebhookEndpoint, webhooksQueryKey);
}
