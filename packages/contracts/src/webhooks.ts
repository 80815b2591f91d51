import { z } from "zod";

/** Webhook endpoints and their deliveries (issue 39, docs/decisions/068). */

const eventTypes = z
  .array(z.string().min(1).max(64))
  .min(1, "must name at least one event type (or *)")
  .max(40)
  .describe("Event types sent to this endpoint (`*`: every type); see GET /webhooks/event-types/");

export const WebhookEndpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string(),
  event_types: z.array(z.string()),
  enabled: z.boolean(),
  disabled_reason: z
    .string()
    .nullable()
    .describe("Why it is disabled: by its owner, or after failing for days"),
  failing_since: z
    .string()
    .nullable()
    .describe("Since when every delivery failed; null when the last one succeeded"),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;
export const WebhookEndpointListSchema = z.array(WebhookEndpointSchema);

export const CreatedWebhookEndpointSchema = WebhookEndpointSchema.extend({
  secret: z.string().describe("The signing secret (whsec_…), to verify the webhook-signature header"),
});
export type CreatedWebhookEndpoint = z.infer<typeof CreatedWebhookEndpointSchema>;

export const CreateWebhookEndpointSchema = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2_000)
      .describe("Where events are POSTed (http or https; no private addresses)"),
    description: z.string().max(200).optional(),
    event_types: eventTypes,
    enabled: z.boolean().optional(),
  })
  .strict();
export type CreateWebhookEndpoint = z.infer<typeof CreateWebhookEndpointSchema>;

export const UpdateWebhookEndpointSchema = z
  .object({
    url: z.string().min(1).max(2_000).optional(),
    description: z.string().max(200).optional(),
    event_types: eventTypes.optional(),
    enabled: z.boolean().optional(),
  })
  .strict();
export type UpdateWebhookEndpoint = z.infer<typeof UpdateWebhookEndpointSchema>;

export const WebhookSecretSchema = z.object({ secret: z.string() });

export const RotateWebhookSecretSchema = z
  .object({
    grace_hours: z
      .number()
      .min(0)
      .max(168)
      .optional()
      .describe("How long the old secret keeps signing beside the new one (default 24)"),
  })
  .strict();

export const WebhookAttemptSchema = z.object({
  attempt: z.number().int(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  response_body: z.string(),
  duration_ms: z.number().int(),
  created_at: z.string(),
});
export type WebhookAttempt = z.infer<typeof WebhookAttemptSchema>;

export const WebhookDeliverySchema = z.object({
  id: z.string(),
  endpoint_id: z.string(),
  event_id: z.string().describe("The webhook-id header: the same on every attempt"),
  event_type: z.string(),
  status: z.enum(["pending", "delivered", "failed"]),
  attempts: z.number().int(),
  next_attempt_at: z.string().nullable(),
  delivered_at: z.string().nullable(),
  created_at: z.string(),
  payload: z.record(z.string(), z.unknown()),
  attempt_log: z.array(WebhookAttemptSchema),
});
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;
export const WebhookDeliveryListSchema = z.array(WebhookDeliverySchema);

export const EventTypeListSchema = z.array(z.object({ type: z.string(), description: z.string() }));
export type EventType = z.infer<typeof EventTypeListSchema>[number];

/** An operator's view of a usage-export sink (operator console). */
export const EventSinkSchema = z.object({
  sink: z.string(),
  exported: z.number().int(),
  exported_micros: z.number().int(),
  behind: z.number().int().describe("Events of its types not yet exported"),
  last_error: z.string().nullable(),
  last_error_at: z.string().nullable(),
  updated_at: z.string(),
});
export type EventSink = z.infer<typeof EventSinkSchema>;
export const EventSinkListSchema = z.array(EventSinkSchema);

/** Per creator and UTC day: the ledger's charged calls, the log's, and each sink's export (decision 068). */
export const UsageExportDaySchema = z.object({
  day: z.string(),
  creator_id: z.string(),
  creator_email: z.string().nullable(),
  charged_calls: z.number().int(),
  charged_micros: z.number().int(),
  logged_calls: z.number().int(),
  logged_micros: z.number().int(),
  exported: z.record(z.string(), z.object({ events: z.number().int(), micros: z.number().int() })),
  differences: z
    .array(z.string())
    .describe("Each difference named; empty when ledger = log = every caught-up sink"),
});
export type UsageExportDay = z.infer<typeof UsageExportDaySchema>;
export const UsageExportReconcileSchema = z.object({
  sinks: EventSinkListSchema,
  days: z.array(UsageExportDaySchema),
});
export type UsageExportReconcile = z.infer<typeof UsageExportReconcileSchema>;
