import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { currentUser } from "../auth/authenticate.ts";
import { responseExample } from "./examples.ts";
import type { GatewayDeps } from "./gateway-call.ts";
import { OpenAiErrorSchema } from "./openai-errors.ts";
import { deleteStoredResponse, findStoredResponse, pageOfInputItems } from "./response-store.ts";

/**
 * A caller's stored Responses (`store`, docs/decisions/054): `client.responses.retrieve`, `delete`
 * and `inputItems.list`. Registered inside the OpenAI plugin (openai.routes.ts), so errors answer in
 * OpenAI's shape; another caller's response, or one expired or deleted, is a 404.
 */
export const storedResponsesRoutes: FastifyPluginAsyncZod<Pick<GatewayDeps, "db" | "guards">> = async (
  app,
  { db, guards },
) => {
  const responseId = z.object({ response_id: z.string().min(1).max(200) });

  app.get(
    "/responses/:response_id",
    {
      schema: {
        tags: ["openai"],
        summary: "One of your stored responses (store: true, kept 30 days); 404 for any other",
        security: [{ bearerAuth: [] }],
        params: responseId,
        querystring: z.strictObject({
          stream: z.literal("false", "must be false: a stored response is answered in one piece").optional(),
        }),
        response: {
          200: z.unknown().meta({ examples: [responseExample] }),
          401: OpenAiErrorSchema,
          404: OpenAiErrorSchema,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const stored = await findStoredResponse(db, currentUser(request).id, request.params.response_id);
      return stored.response;
    },
  );

  app.delete(
    "/responses/:response_id",
    {
      schema: {
        tags: ["openai"],
        summary: "Deletes one of your stored responses (the responses it was continued by keep theirs)",
        security: [{ bearerAuth: [] }],
        params: responseId,
        response: {
          200: z.object({ id: z.string(), object: z.literal("response"), deleted: z.literal(true) }),
          401: OpenAiErrorSchema,
          404: OpenAiErrorSchema,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const id = request.params.response_id;
      await deleteStoredResponse(db, currentUser(request).id, id);
      return { id, object: "response" as const, deleted: true as const };
    },
  );

  app.get(
    "/responses/:response_id/input_items",
    {
      schema: {
        tags: ["openai"],
        summary: "The input items of one of your stored responses, earlier turns of its chain included",
        security: [{ bearerAuth: [] }],
        params: responseId,
        querystring: z.strictObject({
          limit: z.coerce.number().int().min(1).max(100).default(20),
          order: z.enum(["asc", "desc"]).default("desc"),
          after: z.string().max(300).optional(),
        }),
        response: {
          200: z.unknown(),
          401: OpenAiErrorSchema,
          404: OpenAiErrorSchema,
        },
      },
      onRequest: guards.requireCaller,
    },
    async (request) => {
      const stored = await findStoredResponse(db, currentUser(request).id, request.params.response_id);
      return pageOfInputItems(stored.inputItems, request.query);
    },
  );
};
