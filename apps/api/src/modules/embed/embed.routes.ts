import {
  EmbedMessageRequestSchema,
  EmbedMessageResponseSchema,
  EmbedSettingsSchema,
  UpdateEmbedSettingsSchema,
} from "@promptmint/contracts";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { errorResponses } from "../../lib/api-document.ts";
import { AppError } from "../../lib/errors.ts";
import { findApplicationBySlug, getOwnApplication } from "../applications/applications.service.ts";
import { currentUser } from "../auth/authenticate.ts";
import type { GatewayDeps } from "../gateway/gateway-call.ts";
import { rateLimitHeaders } from "../gateway/rate-limit.ts";
import {
  type EmbedClaims,
  type EmbedTokens,
  findEmbeddableApp,
  listEmbedOrigins,
  replaceEmbedOrigins,
  toEmbedSettings,
} from "./embed.service.ts";
import { countVisitorCall, getEmbedLimits, spentTodayCents, updateEmbedLimits } from "./embed-limits.ts";
import { runEmbeddedCall } from "./embedded-call.ts";

const errors = errorResponses(400, 401, 402, 403, 404, 429, 502, 503, 504);
const SlugParams = z.object({ slug: z.string().max(100) });
/** A widget message: a query of at most 4,000 characters and the app's few inputs. */
export const EMBED_BODY_LIMIT_BYTES = 32 * 1024;
const tags = ["embed"];

/**
 * The owner's embed settings (allowed origins, snippet) and the widget's call endpoint. Widget
 * calls carry `Authorization: Embed <token>` and are paid by the app's owner.
 */
export const embedRoutes: FastifyPluginAsyncZod<GatewayDeps & { tokens: EmbedTokens }> = async (
  app,
  options,
) => {
  const { db, guards, tokens, publicUrl, rateLimiter } = options;
  const platformOrigin = new URL(publicUrl).origin;

  async function settingsOf(application: Parameters<typeof toEmbedSettings>[0]) {
    const [origins, limits, spent] = await Promise.all([
      listEmbedOrigins(db, application.id),
      getEmbedLimits(db, application.id),
      spentTodayCents(db, application.id),
    ]);
    return toEmbedSettings(application, origins, publicUrl, { limits, spentTodayCents: spent });
  }

  app.get(
    "/app/:slug/embed",
    {
      schema: {
        tags,
        summary: "Your app's allowed origins, embed snippet, spending cap and today's embedded spend",
        security: [{ bearerAuth: [] }],
        params: SlugParams,
        response: { 200: EmbedSettingsSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => settingsOf(await getOwnApplication(db, currentUser(request), request.params.slug)),
  );

  app.put(
    "/app/:slug/embed",
    {
      schema: {
        tags,
        summary:
          "Replace the sites allowed to embed your app, its daily spending cap or its per-visitor limits",
        security: [{ bearerAuth: [] }],
        params: SlugParams,
        body: UpdateEmbedSettingsSchema,
        response: { 200: EmbedSettingsSchema, ...errors },
      },
      onRequest: guards.requireUser,
    },
    async (request) => {
      const application = await getOwnApplication(db, currentUser(request), request.params.slug);
      const { allowed_origins: origins, ...limits } = request.body;
      if (origins) await replaceEmbedOrigins(db, application.id, origins);
      if (Object.values(limits).some((value) => value !== undefined))
        await updateEmbedLimits(db, application.id, limits);
      return settingsOf(application);
    },
  );

  /** CORS only for the app's allowed origins; the widget itself calls same-origin. */
  async function allowAllowedOrigin(
    request: FastifyRequest<{ Params: { slug: string } }>,
    reply: FastifyReply,
  ) {
    const origin = request.headers.origin;
    if (!origin || origin === platformOrigin) return;
    const application = await findApplicationBySlug(db, request.params.slug);
    if (!application || !(await listEmbedOrigins(db, application.id)).includes(origin)) return;
    reply.headers({
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "POST",
      "access-control-allow-headers": "authorization, content-type",
      "access-control-max-age": "600",
      vary: "Origin",
    });
  }

  /** The embed token's claims, kept for the handler; a missing or bad token is a 401 before any body is read. */
  const claimsByRequest = new WeakMap<FastifyRequest, EmbedClaims>();
  async function requireEmbedToken(request: FastifyRequest) {
    const token = /^Embed\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1];
    if (!token)
      throw new AppError("unauthorized", "An embed token is required: Authorization: Embed <token>");
    claimsByRequest.set(request, await tokens.verify(token));
  }
  const embedClaimsOf = (request: FastifyRequest) => {
    const claims = claimsByRequest.get(request);
    if (!claims) throw new AppError("unauthorized", "An embed token is required");
    return claims;
  };

  app.options(
    "/embed/:slug/messages",
    { schema: { hide: true, params: SlugParams }, onRequest: allowAllowedOrigin },
    async (_request, reply) => {
      if (!reply.hasHeader("access-control-allow-origin"))
        throw new AppError("forbidden", "This site is not allowed to call this app");
      return reply.status(204).send();
    },
  );

  app.post(
    "/embed/:slug/messages",
    {
      schema: {
        tags,
        summary: "Send a message from an embedded widget (paid by the app's owner)",
        description:
          "Authenticate with `Authorization: Embed <token>` (issued to the widget for one allowed site). Accepted only from the widget itself or that site; rate limited per visitor (widget load and client address, per hour and per UTC day) and refused with 429 once the app's daily spending cap is reached.",
        params: SlugParams,
        body: EmbedMessageRequestSchema,
        response: { 200: EmbedMessageResponseSchema, ...errors },
      },
      // The token is checked before the body is read; a widget message is small.
      bodyLimit: EMBED_BODY_LIMIT_BYTES,
      onRequest: [allowAllowedOrigin, requireEmbedToken, options.admission.hook],
    },
    async (request, reply) => {
      const claims = embedClaimsOf(request);
      const application = await findEmbeddableApp(db, request.params.slug);
      if (claims.appId !== application.id)
        throw new AppError("forbidden", "This embed token was issued for another app");
      const requestOrigin = request.headers.origin;
      if (requestOrigin !== platformOrigin && requestOrigin !== claims.origin)
        throw new AppError(
          "forbidden",
          `Requests from ${requestOrigin ?? "a page without an Origin header"} may not use this embed token`,
        );
      if (!(await listEmbedOrigins(db, application.id)).includes(claims.origin))
        throw new AppError("forbidden", `${claims.origin} is no longer allowed to embed this app`);
      // Per visitor: anonymous visitors are told apart by address, which a page reload (a new
      // visitor id) does not change.
      const limit = await rateLimiter.consume({
        caller: `embed:${application.id}:${request.ip}`,
        ip: request.ip,
      });
      reply.headers(rateLimitHeaders(limit));
      const limits = await getEmbedLimits(db, application.id);
      await countVisitorCall(db, {
        applicationId: application.id,
        visitorId: claims.visitor,
        ip: request.ip,
        limits,
      });
      return runEmbeddedCall(options, { limits, request, application, claims, body: request.body });
    },
  );
};
