import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { IoSchemaSchema } from "@promptmint/contracts";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { findApplicationBySlug } from "../applications/applications.service.ts";
import { loadPrompt } from "../prompts/load-prompt.ts";
import { type EmbedTokens, isEmbeddable, listEmbedOrigins, originOf } from "./embed.service.ts";
import { renderUnavailablePage, renderWidgetPage, type WidgetField } from "./widget-page.ts";

const assetsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "assets");
const asset = (name: string, type: string) => ({ type, body: readFileSync(path.join(assetsDir, name)) });
const loader = asset("embed.js", "text/javascript; charset=utf-8");
const assets = new Map([
  ["widget.js", asset("widget.js", "text/javascript; charset=utf-8")],
  ["widget.css", asset("widget.css", "text/css; charset=utf-8")],
]);

/**
 * The one exception to `frame-ancestors 'none'`: the widget page may be framed by the app's
 * allowed origins, and by nothing else.
 */
function widgetPolicy(allowedOrigins: string[]): string {
  const ancestors = allowedOrigins.length > 0 ? allowedOrigins.join(" ") : "'none'";
  return `default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`;
}

/** The prompt's declared inputs besides the message itself, so the widget can ask for them. */
async function widgetFields(db: Database, application: ApplicationRow): Promise<WidgetField[]> {
  if (application.type !== "prompt") return [];
  const schema = IoSchemaSchema.parse((await loadPrompt(db, application)).active.inputSchema);
  return Object.entries(schema.properties)
    .filter(([name]) => name !== "query")
    .map(([name, property]) => ({
      name,
      label: property.description || name,
      required: schema.required.includes(name),
      type: property.type === "number" || property.type === "integer" ? "number" : "text",
    }));
}

/** `/embed.js` (the snippet's loader) and `/embed/{slug}` (the widget page it frames). */
export const widgetRoutes: FastifyPluginAsyncZod<{
  db: Database;
  tokens: EmbedTokens;
  /** Where Promptmint's pages are served: the widget links to the app's plans there. */
  publicUrl: string;
}> = async (app, { db, tokens, publicUrl }) => {
  app.get("/embed.js", { schema: { hide: true } }, async (_request, reply) =>
    reply.type(loader.type).header("cache-control", "public, max-age=300").send(loader.body),
  );

  app.get(
    "/embed/assets/:name",
    { schema: { hide: true, params: z.object({ name: z.string().max(40) }) } },
    async (request, reply) => {
      const file = assets.get(request.params.name);
      if (!file) throw new AppError("not_found", "Asset not found");
      return reply.type(file.type).header("cache-control", "public, max-age=300").send(file.body);
    },
  );

  app.get(
    "/embed/:slug",
    { schema: { hide: true, params: z.object({ slug: z.string().max(100) }) } },
    async (request, reply) => {
      reply
        .type("text/html; charset=utf-8")
        .header("cache-control", "no-store")
        .header("x-content-type-options", "nosniff")
        .header("referrer-policy", "no-referrer");
      const application = await findApplicationBySlug(db, request.params.slug);
      if (!isEmbeddable(application)) {
        reply.header("content-security-policy", widgetPolicy([]));
        return reply.status(404).send(renderUnavailablePage("This assistant is not available."));
      }
      const allowed = await listEmbedOrigins(db, application.id);
      reply.header("content-security-policy", widgetPolicy(allowed));
      // The host page's origin arrives as the Referer of the frame (embed.js asks for it).
      const hostOrigin = originOf(request.headers.referer);
      if (!hostOrigin || !allowed.includes(hostOrigin))
        return reply
          .status(403)
          .send(renderUnavailablePage("This assistant can only be shown on the sites its creator allowed."));
      return reply.send(
        renderWidgetPage({
          slug: application.slug,
          name: application.name,
          mode: application.interactionMode,
          token: await tokens.issue(application.id, hostOrigin),
          fields: await widgetFields(db, application),
          plansUrl: `${publicUrl.replace(/\/+$/, "")}/explore/${encodeURIComponent(application.slug)}#plans`,
        }),
      );
    },
  );
};
