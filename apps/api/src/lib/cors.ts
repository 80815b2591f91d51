import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/**
 * CORS for the routes a browser-based MCP client needs (MCP authorization, revision 2025-11-25):
 * the MCP endpoints, their protected resource metadata, the issuer's metadata and keys, dynamic
 * registration, token and revocation (docs/decisions/051).
 *
 * Each of them takes its credentials in a header or the body (a bearer token, an API key, a PKCE
 * verifier), never a cookie, so any origin may call them: `Access-Control-Allow-Origin: *`,
 * without `Allow-Credentials`, which makes a browser leave its cookies out. The issuer's pages
 * that use its session cookie (authorization, interactions, end-session) and the cookie-free
 * management API are not listed, so they stay closed to other origins.
 *
 * Matched on the raw path, in a root onRequest hook: it runs before the route's own hooks (an MCP
 * endpoint's 401 carries the headers too) and before the embedded issuer (a Koa app, which then
 * leaves CORS alone: oidc-provider skips its own when a response already has it), and it answers
 * preflights the issuer would not (`/oidc/reg`) or the router would refuse.
 */

/** Headers a browser may send: credentials, MCP's own, and the x402 payment of a paid call. */
export const BEARER_CORS_ALLOW_HEADERS = [
  "authorization",
  "content-type",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
  "idempotency-key",
  "payment-signature",
  "promptmint-prepay-cents",
  "promptmint-balance-key",
].join(", ");
/** Headers a browser may read: MCP's, the 401 challenge, the x402 answers, the gateway's limits. */
export const BEARER_CORS_EXPOSE_HEADERS = [
  "mcp-session-id",
  "mcp-protocol-version",
  "www-authenticate",
  "payment-required",
  "payment-response",
  "payment-receipt",
  "promptmint-payment-id",
  "promptmint-payment-replayed",
  "promptmint-balance-key",
  "ratelimit-limit",
  "ratelimit-remaining",
  "ratelimit-reset",
  "retry-after",
  "x-should-retry",
  "idempotent-replayed",
  "promptmint-charged",
  "promptmint-version",
  "promptmint-receipt",
].join(", ");

interface BearerRoute {
  path: RegExp;
  methods: string;
}

/** The routes, by path under the public URL (the API's under /api and /api/v1). */
export const BEARER_CORS_ROUTES: BearerRoute[] = [
  { path: /^\/api(?:\/v1)?\/(?:agents\/)?(?:mcp|app\/[^/]+\/mcp)$/, methods: "GET, POST, DELETE" },
  { path: /^\/\.well-known\/oauth-protected-resource(?:\/.*)?$/, methods: "GET" },
  {
    path: /^\/\.well-known\/(?:oauth-authorization-server|openid-configuration)(?:\/oidc)?$/,
    methods: "GET",
  },
  { path: /^\/oidc\/\.well-known\/(?:openid-configuration|oauth-authorization-server)$/, methods: "GET" },
  { path: /^\/oidc\/jwks$/, methods: "GET" },
  { path: /^\/oidc\/(?:reg|token|token\/revocation)$/, methods: "POST" },
  // Discovery for agents and the receipts' keys (docs/decisions/073): public documents, no cookies.
  {
    path: /^\/\.well-known\/(?:x402|promptmint-agents\.json|promptmint-receipt-keys\.json)$/,
    methods: "GET",
  },
];

/** A header name as HTTP spells one (RFC 9110 token), short enough to echo back. */
const HEADER_NAME = /^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/;

/**
 * The request headers a preflight allows: ours, and any other the client asks for. These routes
 * take no cookies (no `Allow-Credentials`), and their credentials are already allowed, so an extra
 * header grants nothing; refusing one only breaks a browser client that adds its own (the
 * Inspector's custom headers, an SDK's `requestInit.headers`, tracing's `traceparent`).
 */
function allowedRequestHeaders(requested: string | string[] | undefined): string {
  const asked = (typeof requested === "string" ? requested : "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => HEADER_NAME.test(name))
    .slice(0, 32);
  const base = BEARER_CORS_ALLOW_HEADERS.split(", ");
  return [...new Set([...base, ...asked])].join(", ");
}

function bearerRouteOf(url: string): BearerRoute | undefined {
  const path = url.split("?")[0] ?? "";
  return BEARER_CORS_ROUTES.find((route) => route.path.test(path));
}

export function installBearerCors(app: FastifyInstance) {
  app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
    const route = bearerRouteOf(request.url);
    if (!route) return;
    const raw = reply.raw;
    raw.setHeader("access-control-allow-origin", "*");
    raw.setHeader("access-control-expose-headers", BEARER_CORS_EXPOSE_HEADERS);
    if (request.method !== "OPTIONS" || !request.headers["access-control-request-method"]) return;
    // A preflight: answered here, for every listed route, before any route or the issuer runs.
    return reply
      .status(204)
      .headers({
        "access-control-allow-methods": `${route.methods}, OPTIONS`,
        "access-control-allow-headers": allowedRequestHeaders(
          request.headers["access-control-request-headers"],
        ),
        "access-control-max-age": "600",
        vary: "access-control-request-headers",
        "cache-control": "no-store",
      })
      .send();
  });
}
