import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "./config.ts";
import { contentSecurityPolicy } from "./lib/security-headers.ts";
import { runtimeConfigFor } from "./modules/system/system.routes.ts";

/** Where `npm run build` puts the SPA. */
export const webDist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../web/dist");

/**
 * The runtime config (`GET /api/config`) written into the page as inert JSON, so the SPA starts
 * without waiting for a request. `<` is escaped so no value can close the script element.
 */
export function indexPage(html: string, config: Config, shell = ""): string {
  const json = JSON.stringify(runtimeConfigFor(config)).replaceAll("<", "\\u003c");
  return html
    .replace("</head>", `<script id="runtime-config" type="application/json">${json}</script></head>`)
    .replace('<div id="root"></div>', () => `<div id="root">${shell}</div>`);
}

/**
 * The first paint of some routes, rendered at build time (apps/web/src/shell.tsx, written to
 * dist/shells.json by apps/web/scripts/prerender.mjs): static markup, no user data. The app
 * renders over it once its code has loaded.
 */
function readShells(): Record<string, string> {
  const file = path.join(webDist, "shells.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, string>) : {};
}

/** The page as sent: compressed once at start-up (it carries the inlined stylesheet). */
interface Page {
  identity: Buffer;
  br: Buffer;
  gzip: Buffer;
}

function compressed(html: string): Page {
  const identity = Buffer.from(html);
  return {
    identity,
    br: brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    gzip: gzipSync(identity, { level: 9 }),
  };
}

function encodingFor(request: FastifyRequest): "br" | "gzip" | undefined {
  const accepted = String(request.headers["accept-encoding"] ?? "");
  if (/\bbr\b/.test(accepted)) return "br";
  if (/\bgzip\b/.test(accepted)) return "gzip";
  return undefined;
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
  const html = readFileSync(path.join(webDist, "index.html"), "utf8");
  const shells = readShells();
  const plainPage = compressed(indexPage(html, config));
  const pages = new Map(
    Object.entries(shells).map(([route, shell]) => [route, compressed(indexPage(html, config, shell))]),
  );
  // /applications shows the dashboard too (apps/web/src/app/router.tsx).
  const dashboard = pages.get("/dashboard");
  if (dashboard) pages.set("/applications", dashboard);
  const sendPage = (request: FastifyRequest, reply: FastifyReply, url: string) => {
    const page = pages.get(url) ?? plainPage;
    const encoding = encodingFor(request);
    reply
      .header("cache-control", "no-cache")
      .header("vary", "accept-encoding")
      .type("text/html; charset=utf-8");
    if (encoding) reply.header("content-encoding", encoding);
    return reply.send(encoding ? page[encoding] : page.identity);
  };
  app.get("/favicon.ico", (_request, reply) => reply.redirect("/favicon.svg", 301));
  app.get("/", (request, reply) => sendPage(request, reply, "/"));
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
    return sendPage(request, reply, url);
  });
}
