import {
  ApiErrorSchema,
  CreatedWebhookEndpointSchema,
  CreateWebhookEndpointSchema,
  EventSinkListSchema,
  EventTypeListSchema,
  RotateWebhookSecretSchema,
  UpdateWebhookEndpointSchema,
  UsageExportReconcileSchema,
  UuidSchema,
  WebhookDeliveryListSchema,
  WebhookDeliverySchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookSecretSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { invalidFields, notFound } from "../../lib/errors.ts";
import { type AuthGuards, currentUser, operatorGuard } from "../auth/authenticate.ts";
import { creatorDays } from "./event-checks.ts";
import {
  cursorAfter,
  decodeCursor,
  EVENT_TYPES,
  encodeCursor,
  publicEvent,
  readEvents,
} from "./event-log.ts";
import type { EventServices } from "./index.ts";
import {
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  revealSecret,
  rotateSecret,
  sendTestEvent,
  updateEndpoint,
} from "./webhooks.ts";

const errors = {
  400: ApiErrorSchema,
  401: ApiErrorSchema,
  403: ApiErrorSchema,
  404: ApiErrorSchema,
  409: ApiErrorSchema,
};
const security = [{ bearerAuth: [] }];
const tags = ["webhooks"];
const params = z.object({ id: UuidSchema });

/**
 * Webhooks for every signed-in user (creators and consumers alike: an endpoint hears the events
 * that concern its owner, as payer, creator or both), and the operator's pull export of the log
 * (NDJSON after a cursor) with each sink's state (decision 068).
 */
export const eventsRoutes: FastifyPluginAsyncZod<{ guards: AuthGuards; events: EventServices }> = async (
  app,
  { guards, events },
) => {
  const deps = events.webhooks;
  const { db } = deps;
  const requireUser = guards.requireUser;

  app.get(
    "/webhooks/event-types/",
    {
      schema: {
        tags,
        summary: "Every event type an endpoint can subscribe to",
        response: { 200: EventTypeListSchema },
      },
    },
    async () => Object.entries(EVENT_TYPES).map(([type, description]) => ({ type, description })),
  );
  app.get(
    "/webhooks/endpoints/",
    {
      schema: {
        tags,
        summary: "Your webhook endpoints",
        security,
        response: { 200: WebhookEndpointListSchema, ...errors },
      },
      onRequest: requireUser,
    },
    async (request) => listEndpoints(db, currentUser(request).id),
  );
  app.post(
    "/webhooks/endpoints/",
    {
      schema: {
        tags,
        summary: "Add a webhook endpoint (its signing secret is in this answer)",
        security,
        body: CreateWebhookEndpointSchema,
        response: { 201: CreatedWebhookEndpointSchema, ...errors },
      },
      onRequest: requireUser,
    },
    async (request, reply) =>
      reply.status(201).send(await createEndpoint(deps, currentUser(request).id, request.body)),
  );
  app.patch(
    "/webhooks/endpoints/:id/",
    {
      schema: {
        tags,
        summary: "Change an endpoint's URL, description, event types, or enable/disable it",
        security,
        params,
        body: UpdateWebhookEndpointSchema,
        response: { 200: WebhookEndpointSchema, ...errors },
      },
      onRequest: requireUser,
    },
    async (request) => updateEndpoint(db, currentUser(request).id, request.params.id, request.body),
  );
  app.delete(
    "/webhooks/endpoints/:id/",
    {
      schema: {
        tags,
        summary: "Delete an endpoint and its delivery log",
        security,
        params,
        response: { 204: z.null(), ...errors },
      },
      onRequest: requireUser,
    },
    async (request, reply) => {
      await deleteEndpoint(db, currentUser(request).id, request.params.id);
      return reply.status(204).send(null);
    },
  );
  app.get(
    "/webhooks/endpoints/:id/secret/",
    {
      schema: {
        tags,
        summary: "The endpoint's signing secret",
        security,
        params,
        response: { 200: WebhookSecretSchema, ...errors },
      },
      onRequest: requireUser,
    },
    async (request) => revealSecret(deps, currentUser(request).id, request.params.id),
  );
  app.post(
    "/webhooks/endpoints/:id/rotate-secret/",
    {
      schema: {
        tags,
        summary: "A new signing secret; the old one keeps signing beside it for grace_hours (default 24)",
        security,
        params,
        body: RotateWebhookSecretSchema,
        response: { 200: WebhookSecretSchema, ...errors },
      },
      onRequest: requireUser,
    },
    async (request) =>
      rotateSecret(deps, currentUser(request).id, request.params.id, request.body.grace_hours),
  );
  app.post(
    "/webhooks/endpoints/:id/test/",
    {
      schema: {
        tags,
        summary: "Send a webhook.test event to the endpoint now; answers the delivery with its attempt",
        security,
        params,
        response: { 200: WebhookDeliverySchema, ...errors },
      },
      onRequest: requireUser,
    },
    async (request) => sendTestEvent(deps, currentUser(request).id, request.params.id),
  );
  app.get(
    "/webhooks/endpoints/:id/deliveries/",
    {
      schema: {
        tags,
        summary: "The endpoint's delivery log, newest first, each with its attempts",
        security,
        params,
        querystring: z.object({ limit: z.coerce.number().int().min(1).max(200).optional() }).strict(),
        response: { 200: WebhookDeliveryListSchema, ...errors },
      },
      onRequest: requireUser,
    },
    async (request) => {
      const ownerId = currentUser(request).id;
      const own = (await listEndpoints(db, ownerId)).some((endpoint) => endpoint.id === request.params.id);
      if (!own) throw notFound("Webhook endpoint");
      return listDeliveries(db, ownerId, { endpointId: request.params.id, limit: request.query.limit });
    },
  );
  app.post(
    "/webhooks/deliveries/:id/redeliver/",
    {
      schema: {
        tags,
        summary: "Send a delivery again now, with the same webhook-id",
        security,
        params,
        response: { 200: WebhookDeliverySchema, ...errors },
      },
      onRequest: requireUser,
    },
    async (request) => redeliver(deps, currentUser(request).id, request.params.id),
  );

  const requireOperator = operatorGuard(db, guards);
  const sinkViews = async () =>
    (await events.states()).map((state) => ({
      sink: state.sink,
      exported: state.exported,
      exported_micros: state.exportedMicros,
      behind: state.behind,
      last_error: state.lastError,
      last_error_at: state.lastErrorAt?.toISOString() ?? null,
      updated_at: state.updatedAt.toISOString(),
    }));
  app.get(
    "/admin/usage-events",
    {
      schema: {
        tags: ["admin"],
        summary:
          'The event log after a cursor, as NDJSON (one event per line, then a line {"next_cursor": …}); for warehouse loaders',
        security,
        querystring: z
          .object({
            cursor: z.string().max(200).optional(),
            limit: z.coerce.number().int().min(1).max(10_000).optional(),
            types: z.string().max(2_000).optional().describe("Comma-separated event types (all when absent)"),
          })
          .strict(),
        response: { 200: z.string(), ...errors },
      },
      onRequest: requireOperator,
    },
    async (request, reply) => {
      const cursor = decodeCursor(request.query.cursor);
      const types = request.query.types
        ?.split(",")
        .map((type) => type.trim())
        .filter(Boolean);
      const unknown = types?.filter((type) => !(type in EVENT_TYPES)) ?? [];
      if (unknown.length > 0) throw invalidFields({ types: `has unknown types: ${unknown.join(", ")}` });
      const found = await readEvents(db, cursor, { limit: request.query.limit ?? 1_000, types });
      const next = encodeCursor(cursorAfter(cursor, found));
      const lines = [
        ...found.map((event) => JSON.stringify(publicEvent(event))),
        JSON.stringify({ next_cursor: next }),
      ];
      reply.header("content-type", "application/x-ndjson; charset=utf-8");
      reply.header("x-next-cursor", next);
      return reply.send(lines.map((line) => `${line}\n`).join(""));
    },
  );
  app.get(
    "/admin/usage-export/sinks",
    {
      schema: {
        tags: ["admin"],
        summary: "Each export sink's progress: exported events and money, how far behind, its last error",
        security,
        response: { 200: EventSinkListSchema, ...errors },
      },
      onRequest: requireOperator,
    },
    async () => sinkViews(),
  );
  app.get(
    "/admin/usage-export/reconcile",
    {
      schema: {
        tags: ["admin"],
        summary:
          "Per creator and day: calls charged (ledger) = call.charged events (log) = each caught-up sink's export, with every difference named",
        security,
        querystring: z.object({ days: z.coerce.number().int().min(1).max(90).optional() }).strict(),
        response: { 200: UsageExportReconcileSchema, ...errors },
      },
      onRequest: requireOperator,
    },
    async (request) => {
      const days = request.query.days ?? 7;
      const since = new Date(
        Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) -
          (days - 1) * 86_400_000,
      );
      const rows = await creatorDays(db, { since });
      return {
        sinks: await sinkViews(),
        days: rows.map((row) => ({
          day: row.day,
          creator_id: row.creatorId,
          creator_email: row.creatorEmail,
          charged_calls: row.chargedCalls,
          charged_micros: row.chargedMicros,
          logged_calls: row.loggedCalls,
          logged_micros: row.loggedMicros,
          exported: row.exported,
          differences: row.differences,
        })),
      };
    },
  );
};
