import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { Config } from "./config.ts";
import { contentSecurityPolicy } from "./lib/security-headers.ts";
import { runtimeConfigFor } from "./modules/system/system.routes.ts";

/** Where `npm run build` puts the SPA. */
export const webDist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../web/dist");

/**
 * The runtime config (`GET /api/config`) written into the page as inert JSON, so the SPA starts
 * without waiting for a request. `<` is escaped so no value can close the script element.
 */
export function indexPage(html: string, config: Config): string {
  const json = JSON.stringify(runtimeConfigFor(config)).replaceAll("<", "\\u003c");
  return html.replace(
    "</head>",
    `<script id="runtime-config" type="application/json">${json}</script></head>`,
  );
}

/** The built SPA, with history fallback for every non-API GET that asks for HTML. */
export async function registerWeb(app: FastifyInstance, config: Config) {
  // Silent renew without a refresh token loads the sign-in callback in a hidden same-origin frame.
  const callbackPolicy = contentSecurityPolicy(config, ["'self'"]);
  const assetsDir = path.join(webDist, "assets");
  // The web build writes .br/.gz beside each asset (apps/web/scripts/precompress.mjs).
  await app.register(fastifyStatic, {
    root: webDist,
    wildcard: false,
    index: false,
    maxAge: "1h",
    preCompressed: true,
    // Vite names files under assets/ by content hash: they never change once published.
    setHeaders: (reply, filePath) => {
      if (filePath.startsWith(assetsDir)) {
        reply.header("cache-control", "public, max-age=31536000, immutable");
      }
    },
  });
  const page = indexPage(readFileSync(path.join(webDist, "index.html"), "utf8"), config);
  const sendPage = (reply: FastifyReply) =>
    reply.header("cache-control", "no-cache").type("text/html; charset=utf-8").send(page);
  app.get("/favicon.ico", (_request, reply) => reply.redirect("/favicon.svg", 301));
  app.get("/", (_request, reply) => sendPage(reply));
  app.get("/*", (request, reply) => {
    const url = request.url.split("?")[0] ?? "";
    if (url.startsWith("/api/") || url.startsWith("/oidc/")) {
      return reply
        .status(404)
        .send({ code: "not_found", message: `Route GET ${url} not found`, status: 404 });
    }
    if (/^\/assets\//.test(url) || path.extname(url)) {
      return reply.sendFile(url.slice(1), { maxAge: "365d", immutable: url.startsWith("/assets/") });
    }
    if (url === "/auth/callback") reply.header("content-security-policy", callbackPolicy);
    return sendPage(reply);
  });
}
