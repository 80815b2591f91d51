import { PAID_OPERATIONS, receiptsInfo } from "../gateway/agent-discovery.ts";
import { AGENTS_DOCUMENT_PATH, type DiscoveryRails, railsInfo } from "./agent-discovery.routes.ts";

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
