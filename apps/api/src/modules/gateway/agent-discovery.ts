import { declareDiscoveryExtension } from "@x402/extensions/bazaar";
import type { ApplicationRow } from "../../db/schema/index.ts";
import { RECEIPT_HEADER, RECEIPT_KEYS_PATH, RECEIPT_META_KEY } from "../billing/call-receipts-signing.ts";

/**
 * What agents read to find and call the paid endpoints (issue 40 item 4, docs/decisions/073): the
 * paid endpoints of an app, and the x402 `bazaar` discovery extension a 402 declares for the one
 * it refused, so that facilitators' discovery (the Bazaar) can index it with its input and output.
 * The well-known documents (agent-discovery.routes.ts) and the OpenAPI document's
 * `x-payment-info` use the same list.
 */

/** One paid endpoint kind: how an agent calls it, with a body an app's slug fills in. */
export interface PaidEndpoint {
  /** A stable name: `dify-completion`, `openai-chat`, `mcp`… */
  kind: string;
  protocol: "dify" | "openai" | "mcp";
  method: "POST";
  /** The OpenAPI path (`{slug}` where the app's slug goes). */
  path: string;
  summary: string;
  /** An example body for the app (JSON). */
  example(slug: string): Record<string, unknown>;
  /** The body's JSON Schema (object properties and required). */
  schema(slug: string): { properties: Record<string, unknown>; required: string[] };
  /** Which apps it calls. */
  serves(application: Pick<ApplicationRow, "type" | "interactionMode">): boolean;
}

const difyBody = (withQuery: boolean, extra: Record<string, unknown> = {}) => ({
  properties: {
    inputs: { type: "object", description: "The app's input variables" },
    ...(withQuery ? { query: { type: "string", description: "The user's message" } } : {}),
    response_mode: { type: "string", enum: ["blocking", "streaming"] },
    user: { type: "string", description: "Your end user's id" },
    ...extra,
  },
  required: ["inputs"],
});

const isChatApp = (app: Pick<ApplicationRow, "type" | "interactionMode">) =>
  app.type !== "prompt" || app.interactionMode === "chat";

export const PAID_ENDPOINTS: PaidEndpoint[] = [
  {
    kind: "dify-completion",
    protocol: "dify",
    method: "POST",
    path: "/api/app/{slug}/completion-messages",
    summary: "Dify-compatible completion",
    example: () => ({ inputs: {}, query: "Hello", response_mode: "blocking", user: "agent" }),
    schema: () => difyBody(true),
    serves: () => true,
  },
  {
    kind: "dify-chat",
    protocol: "dify",
    method: "POST",
    path: "/api/app/{slug}/chat-messages",
    summary: "Dify-compatible chat message (chat apps)",
    example: () => ({ inputs: {}, query: "Hello", response_mode: "blocking", user: "agent" }),
    schema: () => difyBody(true, { conversation_id: { type: "string" } }),
    serves: isChatApp,
  },
  {
    kind: "dify-workflow",
    protocol: "dify",
    method: "POST",
    path: "/api/app/{slug}/workflows/run",
    summary: "Dify-compatible workflow run (workflow apps)",
    example: () => ({ inputs: {}, response_mode: "blocking", user: "agent" }),
    schema: () => difyBody(false),
    serves: (app) => app.type === "workflow",
  },
  {
    kind: "openai-chat",
    protocol: "openai",
    method: "POST",
    path: "/api/v1/chat/completions",
    summary: "OpenAI-compatible chat completion, model = the app's slug",
    example: (slug) => ({ model: slug, messages: [{ role: "user", content: "Hello" }] }),
    schema: (slug) => ({
      properties: {
        model: { type: "string", const: slug },
        messages: { type: "array", items: { type: "object" } },
        stream: { type: "boolean" },
      },
      required: ["model", "messages"],
    }),
    serves: () => true,
  },
  {
    kind: "openai-responses",
    protocol: "openai",
    method: "POST",
    path: "/api/v1/responses",
    summary: "OpenAI-compatible Responses API, model = the app's slug",
    example: (slug) => ({ model: slug, input: "Hello" }),
    schema: (slug) => ({
      properties: {
        model: { type: "string", const: slug },
        input: { type: ["string", "array"] },
        stream: { type: "boolean" },
      },
      required: ["model", "input"],
    }),
    serves: () => true,
  },
  {
    kind: "mcp",
    protocol: "mcp",
    method: "POST",
    // Agents pay over MCP on their own endpoints (decision 074): the app's own MCP URL asks for
    // credentials (OAuth or an API key), whatever the rails.
    path: "/api/agents/app/{slug}/mcp",
    summary:
      "MCP server of the app for agents without an account (streamable HTTP): one tool named after the app's slug; tools/call is paid with x402's MCP binding (or MPP's)",
    example: (slug) => ({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: slug, arguments: { query: "Hello" } },
    }),
    schema: () => ({
      properties: {
        jsonrpc: { type: "string", const: "2.0" },
        id: { type: ["string", "number"] },
        method: { type: "string" },
        params: { type: "object" },
      },
      required: ["jsonrpc", "method"],
    }),
    serves: () => true,
  },
];

/** The MCP catalogue's paid tool: any public app by its slug. */
export const CATALOGUE_MCP_PATH = "/api/agents/mcp";

/** The OpenAPI operations that are paid per call ("METHOD path"), the catalogue's MCP endpoint too. */
export const PAID_OPERATIONS = [...PAID_ENDPOINTS.map((endpoint) => endpoint.path), CATALOGUE_MCP_PATH];

/** An endpoint's absolute URL for one app. */
export const endpointUrl = (publicUrl: string, endpoint: PaidEndpoint, slug: string) =>
  `${publicUrl}${endpoint.path.replace("{slug}", encodeURIComponent(slug))}`;

/** The receipts' description, as every discovery document states it. */
export function receiptsInfo(publicUrl: string) {
  return {
    format: "JWS compact (RFC 7515), alg EdDSA (Ed25519), typ promptmint-receipt+jwt",
    jwks_uri: `${publicUrl}${RECEIPT_KEYS_PATH}`,
    header: RECEIPT_HEADER,
    mcp_meta_key: RECEIPT_META_KEY,
    stream:
      "the last event's usage.receipt (Dify message_end metadata.usage, OpenAI's usage chunk / response.completed)",
    claims: [
      "iss",
      "iat",
      "jti",
      "app",
      "price_cents",
      "charged_cents",
      "currency",
      "paid_by",
      "payer",
      "invocation_id",
    ],
  };
}

/**
 * The `bazaar` extension a 402 of this endpoint declares (x402 v2 `PaymentRequired.extensions`),
 * built with the extension's own `declareDiscoveryExtension`: the HTTP method and JSON body of a
 * Dify or OpenAI call (OpenAI's `model` fixed to the app's slug), or the MCP tool (the app's own,
 * or the catalogue's `call_app`). Undefined for a path that is none of them.
 */
export function bazaarDiscoveryOf(
  routePath: string,
  application: Pick<ApplicationRow, "slug" | "name" | "description" | "type" | "interactionMode">,
): Record<string, unknown> | undefined {
  // The product API answers under /api/v1 too (hidden from the docs): the same endpoints.
  const path = (routePath.split("?")[0] ?? "").replace(/^\/api\/v1\/(app\/|agents\/)/, "/api/$1");
  // x402 over MCP is on the agents' MCP endpoints only (decision 074).
  if (path === CATALOGUE_MCP_PATH || /^\/api\/agents\/app\/[^/]+\/mcp$/.test(path)) {
    const catalogue = path === CATALOGUE_MCP_PATH;
    return declareDiscoveryExtension({
      toolName: catalogue ? "call_app" : application.slug,
      description: catalogue
        ? `Call any public Promptmint app by its slug (here: ${application.slug})`
        : application.description || application.name,
      transport: "streamable-http",
      inputSchema: catalogue
        ? {
            type: "object",
            properties: {
              slug: { type: "string", const: application.slug },
              inputs: { type: "object" },
              query: { type: "string" },
            },
            required: ["slug"],
          }
        : { type: "object", properties: { query: { type: "string" } }, additionalProperties: true },
      example: catalogue ? { slug: application.slug, query: "Hello" } : { query: "Hello" },
    });
  }
  const endpoint = PAID_ENDPOINTS.find(
    (candidate) => candidate.protocol !== "mcp" && pathPattern(candidate.path).test(path),
  );
  if (!endpoint) return undefined;
  const schema = endpoint.schema(application.slug);
  // The extension's own builder; the method is set here (its route enrichment would set it from
  // an HTTP transport context the gateway does not have).
  return declareDiscoveryExtension({
    method: endpoint.method,
    bodyType: "json",
    input: endpoint.example(application.slug),
    inputSchema: { type: "object", ...schema },
    output: {
      example:
        endpoint.protocol === "openai" ? { object: "chat.completion" } : { event: "message", answer: "…" },
    },
  } as Parameters<typeof declareDiscoveryExtension>[0]);
}

function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace("{slug}", "[^/]+");
  return new RegExp(`^${escaped}$`);
}
