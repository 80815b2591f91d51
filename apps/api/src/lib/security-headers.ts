import type { FastifyInstance, FastifyRequest, RouteOptions } from "fastify";
import type { Config } from "../config.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * Cross-origin browser calls allowed on this route (any origin, no cookies: callers bring a
     * bearer key or token). The gateway routes get it from app.ts; embed routes set it themselves.
     */
    cors?: boolean;
    /** Origins allowed to frame this route's pages (CSP frame-ancestors); default 'none'. */
    frameAncestors?: string[];
  }
}

const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers":
    "ratelimit-limit, ratelimit-remaining, ratelimit-reset, retry-after, idempotent-replayed, promptmint-charged, promptmint-receipt, payment-required, payment-response, x-should-retry, www-authenticate, payment-receipt, promptmint-payment-id, promptmint-payment-replayed, promptmint-balance-key",
};
const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  "access-control-allow-methods": "GET, POST, PATCH, DELETE",
  "access-control-max-age": "600",
};
const ALLOWED_REQUEST_HEADERS =
  "authorization, content-type, idempotency-key, x-embed-token, promptmint-max-price-cents, x-max-price-cents, payment-signature, access-control-expose-headers";
/**
 * Request headers the OpenAI SDK sends from a browser (`dangerouslyAllowBrowser`) on top of those:
 * its platform and retry headers (`x-stainless-*`, a family that grows with SDK versions, so it is
 * matched, not listed) and OpenAI's account headers, which the gateway does not act on.
 */
const CLIENT_HEADER = /^(x-stainless-[a-z0-9-]{1,64}|openai-organization|openai-project|openai-beta)$/;

/** The request headers a preflight allows: ours, and the client headers it asks for. */
function allowedHeaders(requested: string | undefined): string {
  const extra = (requested ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => CLIENT_HEADER.test(name));
  return [ALLOWED_REQUEST_HEADERS, ...new Set(extra)].join(", ");
}

/**
 * The Content-Security-Policy of every response: scripts only from this origin (the SPA, the
 * sign-in pages and the API docs have no inline script), plus Stripe.js when Stripe is configured
 * and an external issuer's origin for the SPA's token calls. Inline styles stay allowed: React,
 * CodeMirror and the toaster set them at run time, and they cannot run code.
 */
export function contentSecurityPolicy(
  config: Config,
  frameAncestors: string[] = [],
  formActions: string[] = [],
): string {
  const stripe = Boolean(config.stripe.secretKey && config.stripe.publishableKey);
  const issuer = !config.oidc.embedded && config.oidc.issuer ? new URL(config.oidc.issuer).origin : undefined;
  const directives: [string, ...(string | false | undefined)[]][] = [
    ["default-src", "'self'"],
    ["script-src", "'self'", stripe && "https://js.stripe.com https://*.js.stripe.com"],
    ["style-src", "'self'", "'unsafe-inline'"],
    ["img-src", "'self'", "data:", "https:"],
    ["font-src", "'self'", "data:"],
    ["connect-src", "'self'", issuer, stripe && "https://api.stripe.com"],
    [
      "frame-src",
      "'self'",
      issuer,
      stripe && "https://js.stripe.com https://*.js.stripe.com https://hooks.stripe.com",
    ],
    ["object-src", "'none'"],
    ["base-uri", "'self'"],
    // The issuer's interaction pages add where their form's redirects end: the client's redirect
    // URI (identity/interaction-policy.ts); browsers apply form-action to every hop of a redirect.
    ["form-action", "'self'", ...formActions],
    ["frame-ancestors", ...(frameAncestors.length > 0 ? frameAncestors : ["'none'"])],
  ];
  return directives.map((parts) => parts.filter(Boolean).join(" ")).join("; ");
}

/**
 * Security headers on every response, and CORS on the routes that allow it.
 *
 * Headers are set on the raw response as soon as the request is routed, so they also reach
 * responses written outside Fastify (the issuer's Koa app, SSE streams). A route overrides any of
 * them by setting the header itself (`reply.header(...)` wins), or declares
 * `config: { frameAncestors: ["https://shop.example"] }` to be framed by those origins, or
 * `config: { cors: true }` to accept cross-origin calls (preflight included).
 */
export function installSecurityHeaders(app: FastifyInstance, config: Config) {
  const defaultPolicy = contentSecurityPolicy(config);
  const publicHttps = config.publicUrl.startsWith("https:");
  const corsPatterns: RegExp[] = [];

  app.addHook("onRoute", (route: RouteOptions) => {
    if (route.config?.cors) corsPatterns.push(patternOf(route.url));
  });

  app.addHook("onRequest", async (request, reply) => {
    const raw = reply.raw;
    const routeConfig = request.routeOptions.config ?? {};
    raw.setHeader(
      "content-security-policy",
      routeConfig.frameAncestors ? contentSecurityPolicy(config, routeConfig.frameAncestors) : defaultPolicy,
    );
    raw.setHeader("x-content-type-options", "nosniff");
    raw.setHeader("referrer-policy", "strict-origin-when-cross-origin");
    raw.setHeader("permissions-policy", "camera=(), microphone=(), geolocation=(), payment=(self)");
    if (publicHttps || request.protocol === "https")
      raw.setHeader("strict-transport-security", "max-age=31536000; includeSubDomains");
    if (routeConfig.cors && request.headers.origin) {
      for (const [name, value] of Object.entries(CORS_HEADERS)) raw.setHeader(name, value);
      raw.setHeader("vary", "origin");
    }
  });

  // Preflights: answered for CORS routes only; anywhere else the browser gets no permission.
  app.options("*", { schema: { hide: true } }, async (request: FastifyRequest, reply) => {
    const path = request.url.split("?")[0] ?? "";
    if (!corsPatterns.some((pattern) => pattern.test(path))) {
      return reply
        .status(404)
        .send({ code: "not_found", message: `Route OPTIONS ${path} not found`, status: 404 });
    }
    const requested = request.headers["access-control-request-headers"];
    return reply
      .status(204)
      .headers(PREFLIGHT_HEADERS)
      .header(
        "access-control-allow-headers",
        allowedHeaders(typeof requested === "string" ? requested : undefined),
      )
      .header("vary", "access-control-request-headers")
      .send();
  });

  return {
    /**
     * An onRoute hook for a scope whose every route accepts cross-origin calls (the gateways); a
     * route that says `cors: false` (a catch-all, which would allow every path below it) stays out.
     */
    allowCors(route: RouteOptions) {
      if (route.method === "OPTIONS" || route.config?.cors !== undefined) return;
      route.config = { ...route.config, cors: true };
      corsPatterns.push(patternOf(route.url));
    },
  };
}

/** `/api/app/:slug/info` → a regex matching concrete paths of that route. */
export function patternOf(url: string): RegExp {
  const escaped = url
    .split("/")
    .map((part) =>
      part.startsWith(":") ? "[^/]+" : part === "*" ? ".*" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("/");
  return new RegExp(`^${escaped}$`);
}
