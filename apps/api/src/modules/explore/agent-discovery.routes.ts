import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import { notFound } from "../../lib/errors.ts";
import { RECEIPT_KEYS_PATH, type ReceiptSigner } from "../billing/call-receipts-signing.ts";
import { PAID_ENDPOINTS, receiptsInfo } from "../gateway/agent-discovery.ts";
import {
  AGENTS_DOCUMENT_PATH,
  AGENTS_PAGE_MAX,
  appEntry,
  type DiscoveryRails,
  paidListedApps,
  railsInfo,
  WELL_KNOWN_X402_APPS,
} from "./agent-discovery.ts";

/**
 * Discovery for agents without an account (issue 40 item 4, docs/decisions/073), unauthenticated
 * and cacheable, naming only what Explore lists (live, public or embeddable, not suspended) at a
 * price above zero — never a private app, never a secret:
 *
 * - `GET /.well-known/promptmint-agents.json`: every such app (paginated: `offset`, `limit` ≤ 100)
 *   with its price, its paid endpoints and how to pay each (the rails that are on), and the
 *   receipts' key URL.
 * - `GET /.well-known/x402` (only while x402 is on): the origin manifest x402 indexers read
 *   (x402scan's `{version: 1, resources: ["POST /path", …], instructions}`), bounded to the first
 *   `WELL_KNOWN_X402_APPS` apps; the rest are in the paginated document.
 * - `GET /.well-known/promptmint-receipt-keys.json`: the receipts' public keys (a JWKS).
 */

const CACHE = "public, max-age=60";

export const agentDiscoveryRoutes: FastifyPluginAsyncZod<{
  db: Database;
  publicUrl: string;
  rails: DiscoveryRails;
  receipts?: ReceiptSigner;
}> = async (app, { db, publicUrl, rails, receipts }) => {
  const tags = ["explore"];
  app.get(
    AGENTS_DOCUMENT_PATH,
    {
      schema: {
        tags,
        summary: "Paid apps for agents: prices, endpoints, payment rails and the receipts' keys",
        querystring: z.object({
          offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
          limit: z.coerce.number().int().min(1).max(AGENTS_PAGE_MAX).default(AGENTS_PAGE_MAX),
        }),
      },
    },
    async (request, reply) => {
      const { offset, limit } = request.query;
      const { rows, total } = await paidListedApps(db, offset, limit);
      const next = offset + rows.length < total ? offset + rows.length : null;
      reply.header("cache-control", CACHE);
      return {
        version: 1,
        service: {
          name: "Promptmint",
          url: publicUrl,
          openapi: `${publicUrl}/api/openapi.json`,
          price_model: "per_call: each app has its own fixed price per call, listed here and in each 402",
        },
        rails: railsInfo(publicUrl, rails),
        receipts: receiptsInfo(publicUrl),
        apps: rows.map((row) => appEntry(publicUrl, rails, row)),
        pagination: {
          offset,
          limit,
          total,
          next: next === null ? null : `${publicUrl}${AGENTS_DOCUMENT_PATH}?offset=${next}&limit=${limit}`,
        },
      };
    },
  );

  app.get(
    "/.well-known/x402",
    { schema: { tags, summary: "x402 origin manifest: the paid resources (while x402 is on)" } },
    async (_request, reply) => {
      if (!rails.x402) throw notFound("x402 discovery");
      const { rows, total } = await paidListedApps(db, 0, WELL_KNOWN_X402_APPS);
      reply.header("cache-control", CACHE);
      const resources = rows.flatMap((row) =>
        PAID_ENDPOINTS.filter((endpoint) => endpoint.protocol !== "openai" && endpoint.serves(row)).map(
          (endpoint) => `${endpoint.method} ${endpoint.path.replace("{slug}", row.slug)}`,
        ),
      );
      return {
        version: 1,
        resources,
        instructions: `Each resource answers 402 with PAYMENT-REQUIRED (x402 v2, exact, ${rails.x402.network}); the bazaar extension describes its body. The MCP ones (/api/agents/…/mcp) answer a tools/call with x402's MCP binding instead: an isError tool result holding the PaymentRequired, paid again with _meta["x402/payment"]. OpenAI-compatible calls (POST /api/v1/chat/completions, POST /api/v1/responses) take the app's slug as model. ${total > rows.length ? `${total} apps in all: ` : ""}every app, its price and endpoints: ${publicUrl}${AGENTS_DOCUMENT_PATH}. Paid answers carry a signed receipt (${publicUrl}${RECEIPT_KEYS_PATH}).`,
      };
    },
  );

  app.get(
    RECEIPT_KEYS_PATH,
    { schema: { tags, summary: "The public keys (JWKS) that verify call receipts" } },
    async (_request, reply) => {
      if (!receipts) throw notFound("Receipt keys");
      reply.header("cache-control", "public, max-age=300");
      return receipts.jwks();
    },
  );
};
