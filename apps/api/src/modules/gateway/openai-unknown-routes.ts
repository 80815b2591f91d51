import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import { sendRouteNotFound } from "../../lib/error-handler.ts";
import { patternOf } from "../../lib/security-headers.ts";

/**
 * Every path under /api/v1 that no route serves answers in OpenAI's shape, whatever its method: 404
 * `unknown_url`, or 405 with `Allow` when the path is served under another method. The Dify-style
 * routes under /api/v1/app/ keep Dify's shape (their clients read it). A catch-all route as well as
 * the not-found handler: in production the SPA's history fallback (`GET /*`, web.ts) would
 * otherwise answer unknown GETs; the more specific `/api/v1/*` wins over it.
 */
/**
 * A URL the router cannot read (a malformed percent-escape, `/api/v1/responses/%zz`): Fastify's
 * `frameworkErrors`, answered before any route or hook, in the shape the path's clients read —
 * OpenAI's under /api/v1 (Dify's routes under /api/v1/app/ aside), `{code, message, status}`
 * elsewhere — instead of Fastify's own `{error, code: FST_ERR_BAD_URL, statusCode}`.
 */
export function answerBadUrl(error: Error, request: FastifyRequest, reply: FastifyReply) {
  const path = request.url.split("?")[0] ?? "";
  const message = `The request URL is not valid (a malformed percent-escape?): ${error.message}`;
  reply.header("x-content-type-options", "nosniff");
  if (path.startsWith("/api/v1/") && !path.startsWith("/api/v1/app/"))
    return reply
      .status(400)
      .send({ error: { message, type: "invalid_request_error", param: null, code: "invalid_url" } });
  return reply.status(400).send({ code: "bad_request", message, status: 400 });
}

export function answerUnknownRoutes(app: FastifyInstance) {
  // Each route's path and methods, for the 405 of a path served under another method.
  const served: { pattern: RegExp; method: string }[] = [];
  app.addHook("onRoute", (route: RouteOptions) => {
    if (route.url.endsWith("*")) return;
    for (const method of [route.method].flat()) served.push({ pattern: patternOf(route.url), method });
  });
  const unknownRoute = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split("?")[0] ?? "";
    if (path.startsWith("/api/v1/app/")) return sendRouteNotFound(request, reply);
    const allowed = served.filter((route) => route.pattern.test(path)).map((route) => route.method);
    const methods = [...new Set(allowed.filter((method) => method !== "HEAD"))];
    if (methods.length > 0) reply.header("allow", methods.join(", "));
    const status = methods.length > 0 ? 405 : 404;
    return reply.status(status).send({
      error: {
        message:
          status === 405
            ? `Method ${request.method} is not allowed on ${path}; use ${methods.join(" or ")}`
            : `Unknown request URL: ${request.method} ${path}`,
        type: "invalid_request_error",
        param: null,
        code: status === 405 ? "method_not_allowed" : "unknown_url",
      },
    });
  };
  app.setNotFoundHandler(unknownRoute);
  // No OPTIONS, and `cors: false`: preflights stay with security-headers.ts, and this catch-all
  // must not open CORS to every path under /api/v1 (the product API's included).
  app.route({
    method: ["GET", "POST", "PUT", "PATCH", "DELETE"],
    url: "/*",
    schema: { hide: true },
    config: { cors: false },
    handler: unknownRoute,
  });
}
