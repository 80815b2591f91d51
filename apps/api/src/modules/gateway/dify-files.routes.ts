import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { AppError } from "../../lib/errors.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import { saveUpload } from "../applications/uploads.service.ts";
import { currentUser } from "../auth/authenticate.ts";
import { DifyError } from "./dify-errors.ts";
import {
  gatewayErrors as errors,
  SlugParams,
  gatewaySecurity as security,
  gatewayTags as tags,
} from "./dify-schemas.ts";
import type { DifyRouteDeps } from "./gateway.routes.ts";

const DifyFileSchema = z.object({
  id: z.string(),
  name: z.string(),
  size: z.number().int(),
  extension: z.string(),
  mime_type: z.string(),
  created_by: z.string(),
  created_at: z.number().int(),
});

/**
 * Dify's `POST /files/upload` for consumers: the file is kept with the app and its uploader in
 * the same storage, types and limits as a creator's uploads (applications/uploads.service.ts),
 * and answered in Dify's shape with Dify's error codes.
 */
export const difyFileRoutes: FastifyPluginAsyncZod<DifyRouteDeps> = async (app, { db, guards, uploads }) => {
  app.post(
    "/app/:slug/files/upload",
    {
      schema: {
        tags,
        summary: "Upload a file to send with a call (Dify compatible; multipart field `file`)",
        description:
          "Images (png, jpg, jpeg, webp, gif) and documents (pdf, txt, md, csv, json). A file is yours alone: only its uploader may send it. Whether the app's model takes files is in `file_upload` of /parameters.",
        security,
        params: SlugParams,
        response: { 201: DifyFileSchema, 413: errors[400], 415: errors[400], ...errors },
      },
      onRequest: guards.requireCaller,
    },
    async (request, reply) => {
      const caller = currentUser(request);
      const application = await findCallableApp(db, request.params.slug, caller);
      if (!request.isMultipart()) throw noFileUploaded();
      const saved = await saveUpload(db, {
        request,
        application,
        uploader: caller,
        dataDir: uploads.dataDir,
        maxBytes: uploads.maxUploadBytes,
        quotaBytes: uploads.uploadQuotaBytes,
      }).catch((error: unknown) => Promise.reject(asDifyUploadError(error)));
      return reply.status(201).send({
        id: saved.id,
        name: saved.name,
        size: saved.size,
        extension: saved.extension.replace(/^\./, ""),
        mime_type: saved.mime_type,
        created_by: caller.id,
        created_at: Math.floor(new Date(saved.created_at).getTime() / 1000),
      });
    },
  );
};

const noFileUploaded = () =>
  new DifyError("bad_request", "no_file_uploaded", "Please upload your file in the multipart field 'file'", {
    fields: { file: "is required" },
  });

/** The upload's refusals under Dify's names: file_too_large, unsupported_file_type, no_file_uploaded. */
function asDifyUploadError(error: unknown): unknown {
  if (!(error instanceof AppError) || error instanceof DifyError) return error;
  const extra = { fields: error.fields };
  if (error.code === "payload_too_large")
    return new DifyError(error.code, "file_too_large", error.message, extra);
  if (error.code === "unsupported_media_type")
    return new DifyError(error.code, "unsupported_file_type", error.message, extra);
  if (error.fields?.file === "is required") return noFileUploaded();
  return error;
}
