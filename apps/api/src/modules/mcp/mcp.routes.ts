import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ApiErrorSchema } from "@promptmint/contracts";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { AppError } from "../../lib/errors.ts";
import { currentUser } from "../auth/authenticate.ts";
import { findCallableApp } from "../gateway/access.ts";
import type { GatewayDeps } from "../gateway/gateway-call.ts";
import { rateLimitHook } from "../gateway/rate-limit.ts";
import { loadAppSchemas } from "./app-tool.ts";
import { createAppServer, createCatalogueServer } from "./mcp-servers.ts";
import { appMcpPath, CATALOGUE_PATH, mcpChallenge, protectedResourceMetadata } from "./resources.ts";

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

  /** The caller, by API key or by a token for this endpoint; a 401 says where its metadata is. */
  const authenticateAt = (pathOf: (request: FastifyRequest) => string) => async (request: FastifyRequest) => {
    const path = pathOf(request);
    try {
      await guards.requireCallerAt(request, `${publicUrl}${path}`);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== "unauthorized") throw error;
      const invalid = Boolean(request.headers.authorization);
      throw new AppError("unauthorized", error.message, {
        headers: { "www-authenticate": mcpChallenge(publicUrl, path, invalid ? "invalid_token" : undefined) },
      });
    }
  };
  const appPath = (request: FastifyRequest) => appMcpPath((request.params as { slug: string }).slug);
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
      onRequest: [authenticateAt(() => CATALOGUE_PATH), deps.admission.hook],
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
  const catalogue = {
    tags,
    summary: "Protected resource metadata of the MCP catalogue (RFC 9728)",
    response,
  };
  const describe = (path: string) => protectedResourceMetadata(publicUrl, path, authorizationServer);
  app.get("/.well-known/oauth-protected-resource", { schema: catalogue }, async () =>
    describe(CATALOGUE_PATH),
  );
  app.get(`/.well-known/oauth-protected-resource${CATALOGUE_PATH}`, { schema: catalogue }, async () =>
    describe(CATALOGUE_PATH),
  );
  app.get(
    "/.well-known/oauth-protected-resource/api/app/:slug/mcp",
    {
      schema: {
        tags,
        summary: "Protected resource metadata of an app's MCP server (RFC 9728)",
        params: SlugParams,
        response,
      },
    },
    async (request) => describe(appMcpPath(request.params.slug)),
  );
};

/** Answers one MCP request with a fresh stateless transport, then closes both. */
async function serve(server: Server, request: FastifyRequest, reply: FastifyReply) {
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  reply.raw.on("close", () => {
    transport.close().catch(() => {});
    server.close().catch(() => {});
  });
  await server.connect(transport);
  reply.hijack();
  // The gateway's headers (rate limits, security) go out with the transport's answer.
  for (const [name, value] of Object.entries(reply.getHeaders()))
    if (value !== undefined) reply.raw.setHeader(name, value as string);
  await transport.handleRequest(request.raw, reply.raw, request.body);
}
