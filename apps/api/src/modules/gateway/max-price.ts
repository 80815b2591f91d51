import type { FastifyRequest } from "fastify";
import { invalidFields } from "../../lib/errors.ts";

/** The headers a caller may cap a call's price with (the second for clients that prefix their own). */
const MAX_PRICE_HEADERS = ["Promptmint-Max-Price-Cents", "X-Max-Price-Cents"] as const;

/**
 * The most the caller agrees to pay for this call, in cents: the lowest of the
 * `Promptmint-Max-Price-Cents` / `X-Max-Price-Cents` headers and the body's `max_price_cents`
 * (already checked by the route's schema); undefined when none is sent. A header that is not a
 * whole number of cents, 0 or more, is a 400 naming it.
 */
export function maxPriceOf(request: FastifyRequest, bodyMaxPriceCents?: number): number | undefined {
  const limits = bodyMaxPriceCents === undefined ? [] : [bodyMaxPriceCents];
  for (const header of MAX_PRICE_HEADERS) {
    const value = request.headers[header.toLowerCase()];
    if (value === undefined) continue;
    const text = typeof value === "string" ? value.trim() : "";
    if (!/^\d{1,12}$/.test(text))
      throw invalidFields({ [header]: "must be a whole number of cents, 0 or more" });
    limits.push(Number(text));
  }
  return limits.length > 0 ? Math.min(...limits) : undefined;
}
