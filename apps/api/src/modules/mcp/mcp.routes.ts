import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ApiErrorSchema } from "@promptmint/contracts";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { authenticates } from "../../lib/body-limits.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import { currentUser } from "../auth/authenticate.ts";
import { findCallableApp } from "../gateway/access.ts";
import type { GatewayDeps } from "../gateway/gateway-call.ts";
import { rateLimitHook } from "../gateway/rate-limit.ts";
import { loadAppSchemas } from "./app-tool.ts";
import { createAppServer, createCatalogueServer } from "./mcp-servers.ts";
import { CATALOGUE_PATH, isMcpPath, mcpChallenge, protectedResourceMetadata } from "./resources.ts";

const tags = ["mcp"];
const SlugParams = z.object({ slug: z.string().min(1).max(100) });
/** A JSON-RPC message or batch; the MCP transport checks it and answers JSON-RPC errors. */
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
  401: ApiErrorSchema,
  404: ApiErrorSchema,
  429: ApiErrorSchema,
};

/**
 * MCP over Streamable HTTP, stateless: every POST gets a fresh server and transport that answer
 * it and close. `/api/app/{slug}/mcp` serves one app as one paid tool; `/api/mcp` the catalogue.
 * Credentials: an API key, or an OAuth access token for that endpoint (docs/decisions/034-mcp.md).
 */
export const mcpRoutes: FastifyPluginAsyncZod<GatewayDeps> = async (app, deps) => {
  const { guards, publicUrl } = deps;
  const limit = rateLimitHook(deps.rateLimiter);

  /**
   * The caller, by API key or by a token for this endpoint; a 401 says where its metadata is.
   * Marked as authenticating, so the route keeps the full body limit (lib/body-limits.ts).
   */
  const authenticateAt = (pathOf: (request: FastifyRequest) => string) =>
    authenticates(async (request: FastifyRequest) => {
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
  /** Tool calls are paid calls: rate limited like every gateway call; listing tools is not. */
  const limitToolCalls = async (request: FastifyRequest, reply: FastifyReply) => {
    const messages = Array.isArray(request.body) ? request.body : [request.body];
    if (messages.some((message) => (message as { method?: unknown } | null)?.method === "tools/call"))
      await limit(request, reply);
  };

  app.post(
    "/app/:slug/mcp",
    {
      schema: {
        tags,
        summary: "MCP server of one app: its one tool, paid per call (Streamable HTTP, stateless)",
        security: [{ bearerAuth: [] }],
        params: SlugParams,
        body: JsonRpcBody,
        response: mcpResponses,
      },
      onRequest: [authenticateAt(appPath), deps.admission.hook],
      preHandler: limitToolCalls,
    },
    async (request, reply) => {
      const caller = currentUser(request);
      const application = await findCallableApp(deps.db, request.params.slug, caller);
      const schemas = await loadAppSchemas(deps.db, application);
      return serve(createAppServer({ deps, request, caller }, application, schemas), request, reply);
    },
  );

  app.post(
    "/mcp",
    {
      schema: {
        tags,
        summary: "MCP catalogue: search_apps, describe_app, call_app (paid per call)",
        security: [{ bearerAuth: [] }],
        body: JsonRpcBody,
        response: mcpResponses,
      },
      onRequest: [authenticateAt(() => `${app.prefix}/mcp`), deps.admission.hook],
      preHandler: limitToolCalls,
    },
    async (request, reply) =>
      serve(createCatalogueServer({ deps, request, caller: currentUser(request) }), request, reply),
  );

  // A stateless server offers no stream to GET and no session to DELETE (MCP transports, 2025-06-18).
  for (const url of ["/app/:slug/mcp", "/mcp"])
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
