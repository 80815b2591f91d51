import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import scalarApiReference from "@scalar/fastify-api-reference";
import type { FastifyInstance, RouteOptions } from "fastify";
import { apiReferencePage, SCALAR_SCRIPT } from "./api-reference-page.ts";

const assetsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "assets");
const asset = (name: string, type: string) =>
  [name, { type, body: readFileSync(path.join(assetsDir, name)) }] as const;
const assets = new Map([
  asset("page-shell.css", "text/css; charset=utf-8"),
  asset("api-reference.css", "text/css; charset=utf-8"),
  asset("api-reference.js", "text/javascript; charset=utf-8"),
]);
const hidden = { schema: { hide: true } };

/**
 * Server-rendered pages' files, and the API reference at /api/docs: Scalar, whose Fastify
 * integration serves its standalone bundle from node_modules (offline, this origin). Its own
 * page at /api/docs carries an inline script, which the CSP refuses: that page is ours
 * (docs/decisions/055).
 */
export async function pagesRoutes(app: FastifyInstance) {
  app.get<{ Params: { name: string } }>("/pages/assets/:name", hidden, async (request, reply) => {
    const file = assets.get(request.params.name);
    if (!file) return reply.status(404).type("text/plain").send("Not found");
    return reply.type(file.type).header("cache-control", "public, max-age=3600").send(file.body);
  });

  const page = apiReferencePage();
  await app.register(async (docs) => {
    docs.addHook("onRoute", (route: RouteOptions) => {
      if (route.url === "/api/docs" || route.url === "/api/docs/")
        route.handler = async (_request, reply) => reply.type("text/html; charset=utf-8").send(page);
    });
    await docs.register(scalarApiReference, {
      routePrefix: "/api/docs",
      // The reference reads the public document itself; the plugin exposes no copy of it.
      configuration: { url: "/api/openapi.json" },
      hooks: {
        preHandler: async (request, reply) => {
          if (request.url === SCALAR_SCRIPT) reply.header("cache-control", "public, max-age=3600");
        },
      },
    });
  });
}
