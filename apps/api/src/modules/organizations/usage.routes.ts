import { ApiErrorSchema, OrganizationUsageSchema, UsageQuerySchema, UuidSchema } from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { organizationUsage } from "./usage.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 403: ApiErrorSchema, 404: ApiErrorSchema };

/** An organization's usage by member, key and app, for the members who see its money (issue 43). */
export const organizationUsageRoutes: FastifyPluginAsyncZod<{ db: Database; guards: AuthGuards }> = async (
  app,
  { db, guards },
) => {
  app.get(
    "/organizations/:id/usage/",
    {
      schema: {
        tags: ["organizations"],
        summary:
          "One UTC month's calls and charges of an organization, by member, key and app (owners, admins and billing)",
        security: [{ bearerAuth: [] }],
        params: z.object({ id: UuidSchema }),
        querystring: UsageQuerySchema,
        response: { 200: OrganizationUsageSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) =>
      organizationUsage(db, currentUser(request), {
        organizationId: request.params.id,
        month: request.query.month,
      }),
  );
};
