import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ApiErrorSchema } from "@promptmint/contracts";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { authenticates } from "../../lib/body-limits.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import { currentUser } from "../auth/authenticate.ts";
import { ANONYMOUS_CALLER, refuseTwoPayers } from "../gateway/access.ts";
import { type GatewayDeps, headerPin } from "../gateway/gateway-call.ts";
import { type RateLimiter, rateLimitHook } from "../gateway/rate-limit.ts";
import type { VersionPin } from "../prompts/load-prompt.ts";
import { agentPayer, agentPaymentsOf } from "./agent-payment.ts";
import { loadAppSchemas } from "./app-tool.ts";
import { clientSessionOf, initializeCapabilities, sessionIdFor } from "./client-session.ts";
import { type McpExchanges, mcpRequestLimits } from "./mcp-limits.ts";
import { createAppServer, createCatalogueServer } from "./mcp-servers.ts";
import { CATALOGUE_PATH, isMcpPath, mcpChallenge, protectedResourceMetadata } from "./resources.ts";

const tags = ["mcp"];
const SlugParams = z.object({ slug: z.string().min(1).max(100) });
/**
 * One JSON-RPC message; the MCP transport checks it and answers JSON-RPC errors. A batch (an
 * array) is refused whole before anything runs (refuseBatch).
 */
const JsonRpcBody = z.unknown().meta({
  examples: [
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "haiku", arguments: { topic: "rain" } } },
  ],
});
const ProtectedResourceMetadataSchema = z.object({
  resource: z.string(),
  authorization_servers: z.array(z.string()),
  scopes_supported: z.array(z.string()),
  bearer_methods_supported: z.array(z.string()),
  resource_name: z.string(),
  resource_documentation: z.string(),
});
const mcpResponses = {
  200: z.unknown().describe("JSON-RPC response (application/json)"),
  400: z
    .unknown()
    .describe(
      "JSON-RPC error: a batch (not supported since MCP 2025-06-18), or a message the transport refuses",
    ),
  401: ApiErrorSchema,
  404: ApiErrorSchema,
  429: ApiErrorSchema,
};

/** What the MCP routes count besides paid calls (mcp-limits.ts, docs/decisions/043-mcp-limits.md). */
export interface McpDeps {
  /** MCP requests per minute, per caller and per address (every POST, paid or not). */
  requestLimiter: RateLimiter;
  /** MCP servers alive at once, per caller, per address and per process. */
  exchanges: McpExchanges;
}

/**
 * MCP over Streamable HTTP, stateless: every POST gets a fresh server and transport that answer
 * it and close. `/api/app/{slug}/mcp` serves one app as one paid tool; `/api/mcp` the catalogue.
 * Credentials: an API key, or an OAuth access token for that endpoint (docs/decisions/034-mcp.md).
 * One POST carries one message (batches are refused), so a paid tool call is one POST and passes
 * the paid rate limit and admission once, like any gateway call (decision 043).
 */
export const mcpRoutes: FastifyPluginAsyncZod<GatewayDeps & { mcp: McpDeps }> = async (app, deps) => {
  const { guards, publicUrl } = deps;
  const limit = rateLimitHook(deps.rateLimiter);
  const requests = mcpRequestLimits(deps.mcp.requestLimiter);

  /**
   * The caller, by API key or by a token for this endpoint; a 401 says where its metadata is.
   * Marked as authenticating, so the route keeps the full body limit (lib/body-limits.ts).
   * Always, whether agent payments are on or not, and for every message (`initialize` too): an
   * MCP client's OAuth client signs its user in only when it meets this 401, so these endpoints
   * never answer anyone without credentials. Agents that pay per call have their own endpoints
   * (`/agents/...`, agent-payment.ts; docs/decisions/074-mcp-oauth-beside-x402.md).
   */
  const authenticateAt = (pathOf: (request: FastifyRequest) => string) =>
    authenticates(async (request: FastifyRequest) => {
      // Credentials and an x402 payment at once would leave the payment unused: refused.
      refuseTwoPayers(deps, request);
      const path = pathOf(request);
      try {
        await guards.requireCallerAt(request, `${publicUrl}${path}`);
      } catch (error) {
        if (!(error instanceof AppError) || error.code !== "unauthorized") throw error;
        const invalid = Boolean(request.headers.authorization);
        throw new AppError("unauthorized", error.message, {
          headers: {
            "www-authenticate": mcpChallenge(publicUrl, path, invalid ? "invalid_token" : undefined),
          },
        });
      }
    });
  // The endpoint's own URL is its resource: under /api or /api/v1, as the plugin is served at both.
  const appPath = (request: FastifyRequest) =>
    `${app.prefix}/app/${(request.params as { slug: string }).slug}/mcp`;
  /**
   * A paid call's rate limit for every request but those known to cost nothing (the handshake,
   * listings, ping, notifications, responses): a method this list does not name counts as paid.
   */
  const limitPaidRequests = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!isFreeMessage(request.body)) await limit(request, reply);
  };
  /** Every POST, before anything else: its address's MCP request limit; then its caller's. */
  const onRequest = (path: (request: FastifyRequest) => string) => [
    requests.byAddress,
    authenticateAt(path),
    requests.byCaller,
    deps.admission.hook,
  ];
  /**
   * The schemas the app's tool is listed with (docs/decisions/057): production's, or those of the
   * version the `Promptmint-Version` header pins for the whole connection. A header pin the app
   * lacks, or a malformed one, lists production's: the call that uses it is the tool error.
   */
  async function listedSchemas(application: ApplicationRow, request: FastifyRequest) {
    let pin: VersionPin | undefined;
    try {
      pin = headerPin(request)?.pin;
    } catch {
      pin = undefined;
    }
    if (!pin) return loadAppSchemas(deps.db, application);
    return loadAppSchemas(deps.db, application, pin).catch((error: unknown) => {
      if (error instanceof AppError && error.code === "version_not_found")
        return loadAppSchemas(deps.db, application);
      throw error;
    });
  }
  /** A batch is refused whole, before anything is counted as paid or run. */
  const preHandler = [refuseBatch, limitPaidRequests];

  app.post(
    "/app/:slug/mcp",
    {
      schema: {
        tags,
        summary: "MCP server of one app: its one tool, paid per call (Streamable HTTP, stateless)",
        description:
          'A `tools/call` may pin a prompt version or label with `params._meta["promptmint/version"]` (`"v12"`, `"staging"`) or the `Promptmint-Version` request header; without one it gets `production`. The result\'s `_meta["promptmint/version"]` names the version that answered. A version or label the app does not have is a tool error (`isError: true`) naming it; nothing is charged. `tools/list` shows production\'s schemas, or those of the version the header pins; a call is checked against the version that answers it.',
        security: [{ bearerAuth: [] }],
        params: SlugParams,
        body: JsonRpcBody,
        response: mcpResponses,
      },
      onRequest: onRequest(appPath),
      preHandler,
    },
    async (request, reply) => {
      const release = deps.mcp.exchanges.open(request);
      try {
        const caller = currentUser(request);
        const application = await findCallableApp(deps.db, request.params.slug, caller);
        const schemas = await listedSchemas(application, request);
        const session = clientSessionOf(request.headers["mcp-session-id"]);
        return await serve(
          createAppServer({ deps, request, caller, session }, application, schemas),
          request,
          reply,
        );
      } finally {
        release();
      }
    },
  );

  app.post(
    "/mcp",
    {
      schema: {
        tags,
        summary: "MCP catalogue: search_apps, describe_app, call_app (paid per call)",
        description:
          'A `tools/call` of `call_app` may pin a prompt version or label with its `version` argument, `params._meta["promptmint/version"]` (`"v12"`, `"staging"`) or the `Promptmint-Version` request header; without one it gets `production`. The result\'s `_meta["promptmint/version"]` names the version that answered. A version or label the app does not have is a tool error (`isError: true`) naming it; nothing is charged.',
        security: [{ bearerAuth: [] }],
        body: JsonRpcBody,
        response: mcpResponses,
      },
      onRequest: onRequest(() => `${app.prefix}/mcp`),
      preHandler,
    },
    async (request, reply) => {
      const release = deps.mcp.exchanges.open(request);
      try {
        return await serve(
          createCatalogueServer({
            deps,
            request,
            caller: currentUser(request),
            session: clientSessionOf(request.headers["mcp-session-id"]),
          }),
          request,
          reply,
        );
      } finally {
        release();
      }
    },
  );

  /**
   * The agents' endpoints (docs/decisions/074-mcp-oauth-beside-x402.md): for agents without an
   * account that pay each tool call with x402, speaking x402's MCP binding (agent-payment.ts).
   * Every free message (the handshake, listings, ping, notifications) is answered without
   * credentials; a `tools/call` pays in `params._meta["x402/payment"]`. They exist only while
   * agent payments are on (404 otherwise), and take no credentials: an account's calls go to the
   * OAuth-protected endpoints above, never paid two ways on one request.
   */
  const agentsOnly = authenticates(async (request: FastifyRequest) => {
    if (!agentPaymentsOf(deps))
      throw new AppError(
        "not_found",
        "This server takes no agent payments (x402, MPP): call its apps with credentials at /api/app/{slug}/mcp or /api/mcp",
      );
    if (request.headers.authorization || request.headers["payment-signature"] !== undefined)
      throw invalidFields({
        [request.headers.authorization ? "authorization" : "payment-signature"]:
          'is not taken here: this endpoint is for agents that pay each tool call without an account, in params._meta (x402: "x402/payment"; MPP: "org.paymentauth/credential"). With credentials, use /api/app/{slug}/mcp or /api/mcp.',
      });
  });
  const agentRequest = [requests.byAddress, agentsOnly, requests.byCaller, deps.admission.hook];
  const endpointUrl = (request: FastifyRequest) => `${publicUrl}${request.url.split("?")[0]}`;

  app.post(
    "/agents/app/:slug/mcp",
    {
      schema: {
        tags,
        summary: "MCP server of one app for agents that pay per call with x402 (no account)",
        description:
          'The app\'s one tool, as at `/app/{slug}/mcp`, without credentials: `initialize`, `tools/list` and `ping` are free. A `tools/call` without `params._meta["x402/payment"]` runs nothing and answers a tool result with `isError: true` whose `structuredContent` (and `content[0].text`, as JSON) is the x402 `PaymentRequired`; retried with the signed `PaymentPayload` in `params._meta["x402/payment"]`, the payment is verified and settled and the tool runs, its result\'s `_meta["x402/payment-response"]` being the settlement (x402 `specs/transports-v2/mcp.md`, tool-result binding). MPP pays the same way: the unpaid result\'s `_meta["org.paymentauth/payment-required"]` holds its challenges, the retry carries the credential in `params._meta["org.paymentauth/credential"]`, the result\'s `_meta["org.paymentauth/receipt"]` is the receipt (mppx\'s MCP binding). Only while agent payments are on (404 otherwise).',
        security: [],
        params: SlugParams,
        body: JsonRpcBody,
        response: mcpResponses,
      },
      onRequest: agentRequest,
      preHandler,
    },
    async (request, reply) => {
      const release = deps.mcp.exchanges.open(request);
      try {
        const application = await findCallableApp(deps.db, request.params.slug, ANONYMOUS_CALLER);
        const schemas = await listedSchemas(application, request);
        const context = {
          deps,
          request,
          caller: ANONYMOUS_CALLER,
          session: clientSessionOf(request.headers["mcp-session-id"]),
          agent: agentPayer(deps, request, endpointUrl(request)),
        };
        return await serve(createAppServer(context, application, schemas), request, reply);
      } finally {
        release();
      }
    },
  );

  app.post(
    "/agents/mcp",
    {
      schema: {
        tags,
        summary: "MCP catalogue for agents that pay per call with x402 (no account)",
        description:
          '`search_apps` and `describe_app` are free; `call_app` is paid with x402 like a tool of `/agents/app/{slug}/mcp`: without `params._meta["x402/payment"]` it answers the named app\'s `PaymentRequired` (and MPP challenges) as an `isError` tool result. Only while agent payments are on (404 otherwise).',
        security: [],
        body: JsonRpcBody,
        response: mcpResponses,
      },
      onRequest: agentRequest,
      preHandler,
    },
    async (request, reply) => {
      const release = deps.mcp.exchanges.open(request);
      try {
        return await serve(
          createCatalogueServer({
            deps,
            request,
            caller: ANONYMOUS_CALLER,
            session: clientSessionOf(request.headers["mcp-session-id"]),
            agent: agentPayer(deps, request, endpointUrl(request)),
          }),
          request,
          reply,
        );
      } finally {
        release();
      }
    },
  );

  // A stateless server offers no stream to GET and no session to DELETE (MCP transports, 2025-06-18).
  for (const url of ["/app/:slug/mcp", "/mcp", "/agents/app/:slug/mcp", "/agents/mcp"])
    app.route({
      method: ["GET", "DELETE"],
      url,
      schema: { hide: true },
      handler: async (_request, reply) =>
        reply.status(405).header("allow", "POST").send({
          code: "method_not_allowed",
          message: "This MCP server is stateless: use POST",
          status: 405,
        }),
    });
};

/**
 * RFC 9728 metadata of the MCP endpoints, at the well-known URI with each endpoint's path
 * appended (the root one describes the catalogue).
 */
export const protectedResourceRoutes: FastifyPluginAsyncZod<{
  publicUrl: string;
  authorizationServer: string | undefined;
}> = async (app, { publicUrl, authorizationServer }) => {
  const response = { 200: ProtectedResourceMetadataSchema };
  const describe = (path: string) => protectedResourceMetadata(publicUrl, path, authorizationServer);
  app.get(
    "/.well-known/oauth-protected-resource",
    { schema: { tags, summary: "Protected resource metadata of the MCP catalogue (RFC 9728)", response } },
    async () => describe(CATALOGUE_PATH),
  );
  app.get(
    "/.well-known/oauth-protected-resource/*",
    {
      schema: {
        tags,
        summary: "Protected resource metadata of an MCP endpoint (RFC 9728): …/api/app/{slug}/mcp, …/api/mcp",
        params: z.object({ "*": z.string().max(200) }),
        response: { ...response, 404: ApiErrorSchema },
      },
    },
    async (request) => {
      const path = `/${request.params["*"]}`;
      if (!isMcpPath(path)) throw notFound("Protected resource");
      return describe(path);
    },
  );
};

/** Requests and notifications that cost nothing: the handshake, listings, ping. */
const FREE_METHODS = new Set([
  "initialize",
  "ping",
  "tools/list",
  "resources/list",
  "resources/templates/list",
  "prompts/list",
  "logging/setLevel",
]);

/** A message that runs no paid work: a free method, any notification, or a response (no method). */
function isFreeMessage(body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const { method, id } = body as { method?: unknown; id?: unknown };
  if (method === undefined) return "result" in body || "error" in body;
  if (typeof method !== "string") return false;
  return FREE_METHODS.has(method) || (id === undefined && method.startsWith("notifications/"));
}

/**
 * JSON-RPC batches (a JSON array body) are refused whole, on every protocol version: MCP removed
 * them in revision 2025-06-18, and no SDK client in use sends them (decision 043). Before anything
 * runs or is counted as paid, whatever the array holds (repeated ids, notifications, tool calls).
 */
async function refuseBatch(request: FastifyRequest, reply: FastifyReply) {
  if (!Array.isArray(request.body)) return;
  const declared = request.headers["mcp-protocol-version"];
  reply
    .status(400)
    .header("content-type", "application/json")
    .send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message:
            "Invalid Request: JSON-RPC batches are not supported (MCP removed batching in protocol revision 2025-06-18; this server accepts none on any version). Send each message in its own POST.",
          data: {
            code: "batch_not_supported",
            protocol_version: typeof declared === "string" ? declared.slice(0, 40) : null,
          },
        },
      }),
    );
  return reply;
}

/**
 * Answers one MCP request with a fresh stateless transport, then closes both. The web-standard
 * transport is handed the body Fastify already parsed; its answer goes out through the reply,
 * with the gateway's headers (rate limits, security).
 */
async function serve(server: Server, request: FastifyRequest, reply: FastifyReply) {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    const answer = await transport.handleRequest(asWebRequest(request), { parsedBody: request.body });
    answer.headers.forEach((value, name) => {
      reply.header(name, value);
    });
    // The client's declared capabilities travel in its session id (client-session.ts).
    const initialize = initializeCapabilities(request.body);
    if (initialize && answer.status === 200)
      reply.header("mcp-session-id", sessionIdFor(initialize.capabilities));
    return reply.status(answer.status).send(Buffer.from(await answer.arrayBuffer()));
  } finally {
    await transport.close();
    await server.close();
  }
}

/** The request line and headers as a web Request (the transport checks Accept and Content-Type). */
function asWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  return new Request(new URL(request.url, "http://mcp.local"), { method: request.method, headers });
}
