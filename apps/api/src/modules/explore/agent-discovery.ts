import { and, asc, gt, sql } from "drizzle-orm";
import type { X402Config } from "../../config.ts";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, applications } from "../../db/schema/index.ts";
import { MICROS_PER_CENT } from "../billing/money.ts";
import { effectivePriceSql, priceFields } from "../billing/price-changes.ts";
import {
  CATALOGUE_MCP_PATH,
  endpointUrl,
  PAID_ENDPOINTS,
  PAID_OPERATIONS,
  receiptsInfo,
} from "../gateway/agent-discovery.ts";
import { centsAsDollars } from "../gateway/charge.ts";
import { listed } from "./explore.service.ts";

/**
 * Discovery for agents without an account (issue 40 item 4, docs/decisions/073): the apps it
 * names — only what Explore lists (live, public or embeddable, not suspended) at a price above
 * zero, never a private app — and the documents' parts (agent-discovery.routes.ts serves them):
 * the agents' document, x402's origin manifest, and the OpenAPI document's `x-payment-info`.
 */

export const AGENTS_DOCUMENT_PATH = "/.well-known/promptmint-agents.json";
export const AGENTS_PAGE_MAX = 100;
export const WELL_KNOWN_X402_APPS = 200;

/** The rails an agent may pay with, as the discovery documents state them (MPP when it exists). */
export interface DiscoveryRails {
  x402?: X402Config;
  /** Stripe/Tempo MPP (issue 40, decision 071): its methods (`stripe`) and currency, when it is on. */
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
export async function paidListedApps(db: Database, offset: number, limit: number) {
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

export function appEntry(publicUrl: string, rails: DiscoveryRails, app: ApplicationRow) {
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

/**
 * `x-payment-info` on the paid operations of the OpenAPI document (docs/decisions/073), in the
 * shape MPP's discovery reads (`mppx/discovery`: `intent`, `method`, `amount`, `currency`,
 * `description`, `offers[]`, unknown fields kept): the price is per call and the app's own, so
 * `amount` is null (dynamic) and the description points at the agents' document, which lists each
 * app's price; one offer per account-less rail that is on (x402 with its network, asset and
 * receiving address; MPP when it exists). Every paid operation also states its 402.
 */
export function withPaymentInfo<T extends Record<string, unknown>>(
  document: T,
  publicUrl: string,
  rails: DiscoveryRails,
): T {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Record<string, unknown>>>;
  const info = paymentInfo(publicUrl, rails);
  const updated = Object.fromEntries(
    Object.entries(paths).map(([path, operations]) => {
      const post = operations.post;
      if (!PAID_OPERATIONS.includes(path) || !post) return [path, operations];
      const responses = (post.responses ?? {}) as Record<string, unknown>;
      return [
        path,
        {
          ...operations,
          post: {
            ...post,
            "x-payment-info": info,
            responses:
              "402" in responses ? responses : { ...responses, 402: { description: "Payment Required" } },
          },
        },
      ];
    }),
  );
  return { ...document, paths: updated };
}

export function paymentInfo(publicUrl: string, rails: DiscoveryRails) {
  const how = railsInfo(publicUrl, rails);
  const discovery = `${publicUrl}${AGENTS_DOCUMENT_PATH}`;
  const offers = [
    ...(how.x402 && rails.x402
      ? [
          {
            method: "x402",
            intent: "charge",
            amount: null,
            currency: "USD",
            description: `x402 v2 exact on ${rails.x402.network}: the app's price in ${rails.x402.assetName} atomic units (1 cent = 10000)`,
            ...how.x402,
          },
        ]
      : []),
    ...(how.mpp ? [{ method: "mpp", intent: "charge", amount: null, ...how.mpp }] : []),
  ];
  const terms = {
    price_model: "per_call",
    pricing: `Per call, at the app's own price (model = slug, or {slug} in the path): every app's price is in ${discovery}, and a request without credentials answers 402 with it. With an API key, the wallet or a plan pays.`,
    discovery,
    api_key: how.api_key,
    receipts: receiptsInfo(publicUrl),
  };
  // MPP's discovery reads either offers or the flat fields, never both (mppx/discovery).
  if (offers.length > 0) return { offers, ...terms };
  return { intent: "charge", amount: null, currency: "USD", description: terms.pricing, ...terms };
}
