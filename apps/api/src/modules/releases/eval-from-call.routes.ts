import { ApiErrorSchema, EvalCaseSchema, SaveCallAsCaseSchema, UuidSchema } from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { saveCallAsCase } from "./eval-from-call.ts";

const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 409: ApiErrorSchema };

/** A live call saved as an eval case (docs/decisions/078), beside the other eval case routes. */
export const evalFromCallRoutes: FastifyPluginAsyncZod<{ db: Database; guards: AuthGuards }> = async (
  app,
  { db, guards },
) => {
  // The same route for a prompt app and a workflow app (docs/decisions/059, "Workflow apps").
  for (const { kind, prefix, tag } of [
    { kind: "prompt", prefix: "/prompts", tag: "prompts" },
    { kind: "workflow", prefix: "/workflows", tag: "workflows" },
  ] as const)
    app.post(
      `${prefix}/:id/evals/cases/from-call`,
      {
        schema: {
          tags: [tag],
          summary:
            "Save a customer call of the app as an eval case: its inputs and query, a rubric with its answer as the reference, its date and model cost in the name (409 when saved already or when its content was not kept)",
          security: [{ bearerAuth: [] }],
          params: z.object({ id: UuidSchema }),
          body: SaveCallAsCaseSchema,
          response: { 201: EvalCaseSchema, ...errors },
        },
        onRequest: guards.requireUser,
      },
      async (request, reply) =>
        reply
          .status(201)
          .send(
            await saveCallAsCase(
              db,
              currentUser(request),
              { kind, id: request.params.id },
              request.body.invocation_id,
            ),
          ),
    );
};
