import { WebhookSecretSchema } from "@promptmint/contracts";
import { useMutation } from "@tanstack/react-query";
import { apiRequest } from "../../../lib/api-client";

/** `GET /webhooks/endpoints/{id}/secret/`: asked for on demand, never cached. */
export async function revealWebhookSecret(id: string): Promise<string> {
  const { secret } = await apiRequest(`/webhooks/endpoints/${encodeURIComponent(id)}/secret/`, {
    schema: WebhookSecretSchema,
  });
  return secret;
}

/** `POST /webhooks/endpoints/{id}/rotate-secret/`: the new secret; the old one signs beside it for `grace_hours`. */
export async function rotateWebhookSecret({
  id,
  graceHours,
}: {
  id: string;
  graceHours: number;
}): Promise<string> {
  const { secret } = await apiRequest(`/webhooks/endpoints/${encodeURIComponent(id)}/rotate-secret/`, {
    method: "POST",
    body: { grace_hours: graceHours },
    schema: WebhookSecretSchema,
  });
  return secret;
}

export function useRevealWebhookSecret() {
  return useMutation({ mutationFn: revealWebhookSecret });
}

export function useRotateWebhookSecret() {
  return useMutation({ mutationFn: rotateWebhookSecret });
}
