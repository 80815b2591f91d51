import { and, asc, gt, sql } from "drizzle-orm";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { X402Config } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, applications } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import { RECEIPT_KEYS_PATH, type ReceiptSigner } from "../billing/call-receipts-signing.ts";
import { MICROS_PER_CENT } from "../billing/money.ts";
import { effectivePriceSql, priceFields } from "../billing/price-changes.ts";
import { CATALOGUE_MCP_PATH, endpointUrl, PAID_ENDPOINTS, receiptsInfo } from "../gateway/agent-discovery.ts";
import { centsAsDollars } from "../gateway/charge.ts";
import { listed } from "./explore.service.ts";

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

export const AGENTS_DOCUMENT_PATH = "/.well-known/promptmint-agents.json";
export const AGENTS_PAGE_MAX = 100;
export const WELL_KNOWN_X402_APPS = 200;
const CACHE = "public, max-age=60";

/** The rails an agent may pay with, as the discovery documents state them (MPP when it exists). */
export interface DiscoveryRails {
  x402?: X402Config;
  /** Stripe/Tempo MPP (issue 40): not on yet; its offer is listed when it is. */
  mpp?: { methods: string[]; currency: string };
}

/** What the agents' document says of how to pay (account-less rails and API keys). */
export function railsInfo(publicUrl: string, rails: DiscoveryRails) {
  return {
    x402: rails.x402
      ? {
          x402_version: 2,
          scheme: "exact",
          network: rails.x402.network,
          asset: rails.x402.asset,
          asset_name: rails.x402.assetName,
          pay_to: rails.x402.payTo,
          atomic_units_per_cent: MICROS_PER_CENT,
          how: "POST without credentials: the 402's PAYMENT-REQUIRED header holds the requirements (with the bazaar extension describing the body); send the request again with PAYMENT-SIGNATURE.",
        }
      : null,
    mpp: rails.mpp
      ? {
          methods: rails.mpp.methods,
          currency: rails.mpp.currency,
          how: "POST without credentials: answer the 402's WWW-Authenticate: Payment challenge with Authorization: Payment.",
        }
      : null,
    api_key: {
      how: "Sign up, top up the wallet and send Authorization: Bearer pm_…; plans cover calls of an app.",
      keys_url: `${publicUrl}/api-keys`,
    },
  };
}

/** The live, listed apps whose price is above zero, oldest first (stable pages), and their count. */
async function paidListedApps(db: Database, offset: number, limit: number) {
  const where = and(listed, gt(effectivePriceSql(applications), 0));
  const [rows, [counted]] = await Promise.all([
    db
      .select()
      .from(applications)
      .where(where)
      .orderBy(asc(applications.createdAt), asc(applications.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: sql<number>`count(*)::int` }).from(applications).where(where),
  ]);
  return { rows, total: counted?.total ?? 0 };
}

function appEntry(publicUrl: string, rails: DiscoveryRails, app: ApplicationRow) {
  const price = priceFields(app);
  return {
    name: app.name,
    slug: app.slug,
    description: app.description,
    type: app.type,
    interaction_mode: app.interactionMode,
    price: {
      model: "per_call",
      cents: price.price_cents,
      amount: centsAsDollars(price.price_cents),
      currency: "USD",
      pending_cents: price.pending_price_cents,
      pending_at: price.pending_price_at,
      ...(rails.x402 ? { x402_amount: String(price.price_cents * MICROS_PER_CENT) } : {}),
    },
    page_url: `${publicUrl}/explore/${app.slug}`,
    endpoints: [
      ...PAID_ENDPOINTS.filter((endpoint) => endpoint.serves(app)).map((endpoint) => ({
        kind: endpoint.kind,
        protocol: endpoint.protocol,
        method: endpoint.method,
        url: endpointUrl(publicUrl, endpoint, app.slug),
        summary: endpoint.summary,
        example: endpoint.example(app.slug),
      })),
      {
        kind: "mcp-catalogue",
        protocol: "mcp",
        method: "POST",
        url: `${publicUrl}${CATALOGUE_MCP_PATH}`,
        summary: "The MCP catalogue: call_app with this slug",
        example: {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "call_app", arguments: { slug: app.slug, query: "Hello" } },
        },
      },
    ],
  };
}

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
        instructions: `Each resource answers 402 with PAYMENT-REQUIRED (x402 v2, exact, ${rails.x402.network}); the bazaar extension describes its body. OpenAI-compatible calls (POST /api/v1/chat/completions, POST /api/v1/responses) take the app's slug as model. ${total > rows.length ? `${total} apps in all: ` : ""}every app, its price and endpoints: ${publicUrl}${AGENTS_DOCUMENT_PATH}. Paid answers carry a signed receipt (${publicUrl}${RECEIPT_KEYS_PATH}).`,
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
