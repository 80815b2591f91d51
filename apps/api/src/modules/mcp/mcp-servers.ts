import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import type { FastifyRequest } from "fastify";
import { z } from "zod";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { AppError } from "../../lib/errors.ts";
import { findCallableApp } from "../applications/callable-app.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { effectivePriceCents, priceFields } from "../billing/price-changes.ts";
import { listExploreApps } from "../explore/explore.service.ts";
import { publishedInputLimit } from "../gateway/call-worst-case.ts";
import type { GatewayDeps } from "../gateway/gateway-call.ts";
import type { AgentPayer } from "./agent-payment.ts";
import { type AppSchemas, appTool, describePrice, loadAppSchemas, toolInputSchema } from "./app-tool.ts";
import { callAppAsTool } from "./call-app.ts";
import type { ClientSession } from "./client-session.ts";
import { agentAppMcpUrl, appMcpUrl } from "./resources.ts";

const SERVER_INFO = { name: "promptmint", version: "1.0.0" };

/**
 * These servers never check a value against a client's JSON Schema (the SDK does so only for
 * elicitation, which they never ask for). Without this, every `Server` builds its own Ajv with its
 * formats, about 0.9 ms of CPU per MCP request (decision 043); and a shared Ajv would cache every
 * schema it compiled. Asked anyway, it refuses.
 */
const NO_SCHEMA_VALIDATION: jsonSchemaValidator = {
  getValidator() {
    throw new McpError(ErrorCode.InternalError, "This server validates no client schema");
  },
};

/** Who is calling, on which request: every server lives for one HTTP request (stateless transport). */
interface CallContext {
  deps: GatewayDeps;
  request: FastifyRequest;
  caller: LocalUser;
  /** What the client declared at `initialize`, carried by its session id (client-session.ts). */
  session: ClientSession;
  /**
   * On the agents' endpoints: who pays for each tool call (x402's MCP binding, agent-payment.ts);
   * `caller` is then the anonymous caller, who may list and describe but pay for nothing.
   */
  agent?: AgentPayer;
}

/** One app's server: its single tool, called through the paid path. */
export function createAppServer(context: CallContext, application: ApplicationRow, schemas: AppSchemas) {
  const server = new Server(
    { ...SERVER_INFO, title: application.name },
    { capabilities: { tools: {} }, jsonSchemaValidator: NO_SCHEMA_VALIDATION },
  );
  const tool = appTool(application, schemas, context.deps.feePercent, context.agent ? "x402" : "account");
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [tool] }));
  server.setRequestHandler(CallToolRequestSchema, ({ params }) => {
    if (params.name !== tool.name)
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    const run = (caller: LocalUser) =>
      callAppAsTool(context.deps, {
        ...context,
        caller,
        application,
        schemas,
        args: params.arguments,
        meta: params._meta,
      });
    return context.agent ? context.agent.payAndRun(application, params._meta, run) : run(context.caller);
  });
  return server;
}

const SEARCH_LIMIT = 24;
const SearchArgs = z.strictObject({
  query: z.string().trim().max(100).default(""),
  limit: z.number().int().min(1).max(SEARCH_LIMIT).default(10),
});
const DescribeArgs = z.strictObject({ slug: z.string().min(1).max(100) });
const CallArgs = z.strictObject({
  slug: z.string().min(1).max(100),
  inputs: z.record(z.string(), z.unknown()).default({}),
  query: z.string().max(100_000).optional(),
  version: z
    .string()
    .max(40)
    .optional()
    .describe(
      "A prompt version (v12) or label (staging) to call instead of production; the result's _meta names the version that answered.",
    ),
});

const catalogueTools: Tool[] = [
  {
    name: "search_apps",
    title: "Search apps",
    description:
      "Search Promptmint's public apps by name or description. Each result has the slug to describe or call it with, and its price per call.",
    inputSchema: toJsonSchema(SearchArgs),
  },
  {
    name: "describe_app",
    title: "Describe an app",
    description: "An app's description, price (with any announced change), input schema and how to call it.",
    inputSchema: toJsonSchema(DescribeArgs),
  },
  {
    name: "call_app",
    title: "Call an app",
    description:
      "Calls an app with its inputs (and `query` for chat apps and workflows). Paid from your wallet or plan at the app's price; a failed call costs nothing.",
    inputSchema: toJsonSchema(CallArgs),
  },
];

/** The catalogue's server: find public apps, read one's price and schema, call one (paid). */
export function createCatalogueServer(context: CallContext) {
  const server = new Server(
    { ...SERVER_INFO, title: "Promptmint apps" },
    { capabilities: { tools: {} }, jsonSchemaValidator: NO_SCHEMA_VALIDATION },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: catalogueTools }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const run = catalogueHandlers[params.name];
    if (!run) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    try {
      return await run(context, params.arguments ?? {}, params._meta);
    } catch (error) {
      if (error instanceof z.ZodError) return toolError(`400 bad_request: ${z.prettifyError(error)}`);
      if (error instanceof AppError) return toolError(`${error.status} ${error.code}: ${error.message}`);
      throw error;
    }
  });
  return server;
}

const catalogueHandlers: Record<
  string,
  (context: CallContext, args: unknown, meta?: Record<string, unknown>) => Promise<CallToolResult>
> = {
  async search_apps({ deps }, args) {
    const { query, limit } = SearchArgs.parse(args);
    const found = await listExploreApps(deps.db, { q: query || undefined, page: 1 });
    const apps = found.data.slice(0, limit).map((app) => ({
      slug: app.slug,
      name: app.name,
      description: app.description,
      price_cents: app.price_cents,
      pending_price_cents: app.pending_price_cents,
      pending_price_at: app.pending_price_at,
    }));
    return jsonResult({ apps, total: found.total });
  },
  async describe_app({ deps, caller, agent }, args) {
    const { slug } = DescribeArgs.parse(args);
    const application = await findCallableApp(deps.db, slug, caller);
    const schemas = await loadAppSchemas(deps.db, application);
    return jsonResult({
      slug: application.slug,
      name: application.name,
      description: application.description,
      type: application.type,
      interaction_mode: application.interactionMode,
      ...priceFields(application),
      price: describePrice(application),
      max_input_tokens: publishedInputLimit(
        schemas.limitSettings,
        effectivePriceCents(application),
        deps.feePercent,
      ),
      input_schema: toolInputSchema(application, schemas),
      output_schema: schemas.outputSchema,
      how_to_call: `Use call_app with {"slug": "${application.slug}", "inputs": {…}${schemas.takesQuery ? ', "query": "…"' : ""}}, or add ${(agent ? agentAppMcpUrl : appMcpUrl)(deps.publicUrl, application.slug)} to your MCP client as its own tool.`,
    });
  },
  async call_app(context, args, meta) {
    const { slug, inputs, query, version } = CallArgs.parse(args);
    const application = await findCallableApp(context.deps.db, slug, context.caller);
    const schemas = await loadAppSchemas(context.deps.db, application);
    const run = (caller: LocalUser) =>
      callAppAsTool(context.deps, {
        ...context,
        caller,
        application,
        schemas,
        args: { ...inputs, ...(query === undefined ? {} : { query }) },
        meta,
        version,
      });
    return context.agent ? context.agent.payAndRun(application, meta, run) : run(context.caller);
  },
};

function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: value };
}

function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

function toJsonSchema(schema: z.ZodType): Tool["inputSchema"] {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return json as Tool["inputSchema"];
}
