import {
  ApplicationListSchema,
  ApplicationSchema,
  CreateApplicationSchema,
  SavedPromptApplicationSchema,
  SavePromptApplicationSchema,
  UpdateApplicationSchema,
  UpdateStatusSchema,
  UploadedFileSchema,
} from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { errorResponses } from "../../lib/api-document.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { suspensionsOf } from "../admin/suspensions.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { StripeGateway } from "../billing/stripe-gateway.ts";
import { KNOWN_MODEL_IDS } from "../models/model-catalog.ts";
import {
  createApplication,
  creatorNameFor,
  deleteApplication,
  duplicateApplication,
  getOwnApplication,
  listOwnApplications,
  savePromptApplication,
  toApplication,
  updateApplication,
} from "./applications.service.ts";
import { removeUploads, saveUpload } from "./uploads.service.ts";

const errors = errorResponses(400, 401, 404, 409, 413, 415);
const security = [{ bearerAuth: [] }];
const SlugParams = z.object({ slug: z.string().max(100) });

/** SPEC §7 "Applications": every call is limited to the app's owner; others get 404. */
export const applicationsRoutes: FastifyPluginAsyncZod<{
  db: Database;
  guards: AuthGuards;
  secrets: SecretBox;
  dataDir: string;
  maxUploadBytes: number;
  stripe: StripeGateway | undefined;
  feePercent: number;
  /** How long a raised price is announced before it is charged. */
  priceNoticeMs: number;
  uploadQuotaBytes: number;
}> = async (
  app,
  { db, guards, secrets, dataDir, maxUploadBytes, stripe, feePercent, priceNoticeMs, uploadQuotaBytes },
) => {
  const present = async (userId: string, row: Parameters<typeof toApplication>[0]) =>
    toApplication(row, await creatorNameFor(db, userId), secrets);
  const tags = ["applications"];

  app.get(
    "/app/",
    {
      schema: {
        tags,
        summary: "Your applications",
        security,
        response: { 200: ApplicationListSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const user = currentUser(request);
      const [rows, creatorName] = await Promise.all([
        listOwnApplications(db, user),
        creatorNameFor(db, user.id),
      ]);
      const suspended = await suspensionsOf(
        db,
        user.id,
        rows.map((row) => row.id),
      );
      return rows.map((row) => {
        const suspension = suspended.get(row.id);
        return {
          ...toApplication(row, creatorName, secrets),
          suspension: suspension
            ? { reason: suspension.reason, since: suspension.since.toISOString() }
            : null,
        };
      });
    },
  );

  app.post(
    "/app/",
    {
      schema: {
        tags,
        summary: "Create an application (the slug is derived from the name)",
        security,
        body: CreateApplicationSchema,
        response: { 201: ApplicationSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const user = currentUser(request);
      // A prompt app starts on the starter model: its price must cover that (issue 32).
      const row = await createApplication(db, secrets, user, request.body, { feePercent });
      return reply.status(201).send(await present(user.id, row));
    },
  );

  app.get(
    "/app/:slug/",
    {
      schema: {
        tags,
        summary: "One of your applications",
        security,
        params: SlugParams,
        response: { 200: ApplicationSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const user = currentUser(request);
      return present(user.id, await getOwnApplication(db, user, request.params.slug));
    },
  );

  app.patch(
    "/app/:slug/",
    {
      schema: {
        tags,
        summary: "Update an application",
        security,
        params: SlugParams,
        body: UpdateApplicationSchema,
        response: { 200: ApplicationSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const user = currentUser(request);
      const row = await getOwnApplication(db, user, request.params.slug);
      return present(user.id, await updateApplication(db, row, request.body, { priceNoticeMs, feePercent }));
    },
  );

  app.patch(
    "/app/:slug/prompt-application/",
    {
      schema: {
        tags,
        summary:
          "Save a prompt app's settings (status included) and its prompt together: both are written or neither",
        security,
        params: SlugParams,
        body: SavePromptApplicationSchema,
        response: { 200: SavedPromptApplicationSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const user = currentUser(request);
      const row = await getOwnApplication(db, user, request.params.slug);
      const saved = await savePromptApplication(db, row, request.body, {
        priceNoticeMs,
        feePercent,
        knownModels: KNOWN_MODEL_IDS,
        actorId: user.id,
      });
      return { application: await present(user.id, saved.application), prompt: saved.prompt };
    },
  );

  app.delete(
    "/app/:slug/",
    {
      schema: {
        tags,
        summary:
          "Delete an application; one with money history (paid calls, plans) is archived instead, its subscribers refunded",
        security,
        params: SlugParams,
        response: { 204: z.null(), ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const row = await getOwnApplication(db, currentUser(request), request.params.slug);
      await deleteApplication(db, row, { stripe, feePercent });
      await removeUploads(dataDir, row.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    "/app/:slug/duplicate/",
    {
      schema: {
        tags,
        summary: "Duplicate an application as a draft",
        security,
        params: SlugParams,
        body: z.strictObject({}).nullish(),
        response: { 201: ApplicationSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const user = currentUser(request);
      const copy = await duplicateApplication(db, await getOwnApplication(db, user, request.params.slug));
      return reply.status(201).send(await present(user.id, copy));
    },
  );

  app.patch(
    "/app/:slug/update_status/",
    {
      schema: {
        tags,
        summary: "Set an application's status",
        security,
        params: SlugParams,
        body: UpdateStatusSchema,
        response: { 200: ApplicationSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const user = currentUser(request);
      const row = await getOwnApplication(db, user, request.params.slug);
      return present(
        user.id,
        await updateApplication(db, row, { status: request.body.status }, { priceNoticeMs, feePercent }),
      );
    },
  );

  app.post(
    "/app/:slug/file-upload/",
    {
      schema: {
        tags,
        summary: "Upload a file for an application (multipart, field 'file')",
        security,
        params: SlugParams,
        response: { 201: UploadedFileSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request, reply) => {
      const user = currentUser(request);
      const row = await getOwnApplication(db, user, request.params.slug);
      return reply.status(201).send(
        await saveUpload(db, {
          request,
          application: row,
          uploader: user,
          dataDir,
          maxBytes: maxUploadBytes,
          quotaBytes: uploadQuotaBytes,
        }),
      );
    },
  );
};
