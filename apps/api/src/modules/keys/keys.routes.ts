import {
  ApiErrorSchema,
  ApiKeyListSchema,
  ApiKeySchema,
  CreateApiKeySchema,
  CreatedApiKeySchema,
  UpdateApiKeySchema,
  UuidSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { createApiKey, listApiKeys, revokeApiKey, updateApiKey } from "./keys.service.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 409: ApiErrorSchema };
const security = [{ bearerAuth: [] }];

/**
 * API keys for calling apps: shown once, stored as SHA-256, prefix pm_; each with an optional
 * spend limit per period, expiry date and allow-list of apps (docs/decisions/035).
 */
export const keysRoutes: FastifyPluginAsyncZod<{ db: Database; guards: AuthGuards }> = async (
  app,
  { db, guards },
) => {
  app.get(
    "/keys/",
    {
      schema: {
        tags: ["keys"],
        summary: "Your active API keys",
        security,
        response: { 200: ApiKeyListSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => listApiKeys(db, currentUser(request)),
  );
  app.post(
    "/keys/",
    {
      schema: {
        tags: ["keys"],
        summary: "Create an API key (the key is shown only in this response)",
        security,
        body: CreateApiKeySchema,
        response: { 201: CreatedApiKeySchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) =>
      reply.status(201).send(await createApiKey(db, currentUser(request), request.body, request.member)),
  );
  app.patch(
    "/keys/:id/",
    {
      schema: {
        tags: ["keys"],
        summary: "Change an API key's name, spend limit, expiry or allowed apps (null clears one)",
        security,
        params: z.object({ id: UuidSchema }),
        body: UpdateApiKeySchema,
        response: { 200: ApiKeySchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => updateApiKey(db, currentUser(request), request.params.id, request.body),
  );
  app.delete(
    "/keys/:id/",
    {
      schema: {
        tags: ["keys"],
        summary: "Revoke an API key",
        security,
        params: z.object({ id: UuidSchema }),
        response: { 204: z.null(), ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      await revokeApiKey(db, currentUser(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
};
