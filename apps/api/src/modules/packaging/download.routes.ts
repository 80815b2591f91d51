import { ApiErrorSchema, DownloadFrontendQuerySchema } from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { getOwnApplication } from "../applications/applications.service.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import { buildAppPackage, defaultPackageType } from "./download.service.ts";

const SlugParams = z.object({ slug: z.string().max(100) });

/** SPEC §7 download-frontend: the app's ready-to-run front end, for its owner only (others 404). */
export const downloadRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  publicUrl: string;
}> = async (app, { db, guards, publicUrl }) => {
  app.get(
    "/app/:slug/download-frontend",
    {
      schema: {
        tags: ["packaging"],
        summary: "Download a ready-to-run front-end app for an application (zip)",
        description:
          "A dependency-free Node.js server and page that call this application with an API key kept server side. Saved as `{slug}-{type}-app.zip`.",
        security: [{ bearerAuth: [] }],
        params: SlugParams,
        querystring: DownloadFrontendQuerySchema,
        response: {
          200: z
            .instanceof(Buffer)
            .meta({ type: "string", format: "binary", description: "application/zip" }),
          400: ApiErrorSchema,
          401: ApiErrorSchema,
          404: ApiErrorSchema,
        },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const application = await getOwnApplication(db, currentUser(request), request.params.slug);
      const type = request.query.type ?? defaultPackageType(application);
      const { fileName, zip } = await buildAppPackage(db, { app: application, type, publicUrl });
      return reply
        .header("content-type", "application/zip")
        .header("content-disposition", `attachment; filename="${fileName}"`)
        .header("cache-control", "no-store")
        .send(Buffer.from(zip.buffer, zip.byteOffset, zip.byteLength));
    },
  );
};
