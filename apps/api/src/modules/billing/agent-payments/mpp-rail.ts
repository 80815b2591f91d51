import { randomBytes } from "node:crypto";
import { Challenge, Credential, Errors, Expires, PaymentRequest } from "mppx";
import { Methods as StripeMethods } from "mppx/stripe";
import Stripe from "stripe";
import type { MppConfig } from "../../../config.ts";
import { AppError } from "../../../lib/errors.ts";
import { MICROS_PER_CENT } from "../money.ts";
import {
  grantedToken,
  type MppPaymentState,
  type MppRailOptions,
  payerOf,
  refund,
  settle,
  stripeFor,
  tokenProblem,
} from "./mpp-stripe.ts";
import type { PaidResource, PaymentRail } from "./rail.ts";

export type { MppPaymentState, MppRailOptions } from "./mpp-stripe.ts";

/**
 * MPP (the Machine Payments Protocol, docs/decisions/071) as the platform speaks it: the `charge`
 * intent of the `stripe` method, paid with a Stripe shared payment token (SPT) an agent's platform
 * grants us. mppx gives the protocol (the HMAC-bound `Challenge`, the `Credential`, the `Receipt`,
 * the stripe charge's request schema); the money moves through the Stripe SDK here, because
 * mppx's own stripe `verify` captures while verifying (and cannot tell a decline from a timeout),
 * where a rail verifies first and settles only an answered call.
 *
 * Amounts: the challenge asks for whole US cents (`decimals: 2`), never less than Stripe's minimum
 * card charge (50 cents): a cheaper call's payment is credited whole to its payer's balance and
 * the rest stays there for the next calls.
 */

/** Stripe's smallest USD card charge: a challenge never asks for less. */
export const MINIMUM_CHARGE_CENTS = 50;
const CURRENCY = "usd";
const METHOD = "stripe";
const INTENT = "charge";

/** The amount a challenge asks for a resource at this price: its price, at least Stripe's minimum. */
export function mppChargeCents(priceCents: number): number {
  return Math.max(priceCents, MINIMUM_CHARGE_CENTS);
}

export function createMppRail(config: MppConfig, options: MppRailOptions = {}): PaymentRail {
  const stripe = stripeFor(config, options);
  const now = options.now ?? (() => new Date());

  const challengeFor = (resource: PaidResource) =>
    Challenge.fromMethod(StripeMethods.charge, {
      secretKey: config.secretKey,
      realm: config.realm,
      description: resource.description,
      expires: new Date(now().getTime() + config.challengeTtlSeconds * 1000).toISOString(),
      // Bound by the HMAC with the rest: the URL paid for, and a nonce that makes every 402's
      // challenge (and so its id, the payment's identity) distinct.
      meta: { resource: resource.url, nonce: randomBytes(12).toString("base64url") },
      request: {
        amount: centsToDecimal(mppChargeCents(resource.priceCents)),
        currency: CURRENCY,
        decimals: 2,
        networkId: config.networkId,
        paymentMethodTypes: ["card", "link"],
      },
    });

  const offer = (priceCents: number) => ({
    accepted: true,
    protocol: "mpp",
    method: METHOD,
    intent: INTENT,
    currency: CURRENCY,
    amount_cents: mppChargeCents(priceCents),
    ...(priceCents < MINIMUM_CHARGE_CENTS
      ? {
          note: `Stripe's smallest card charge is ${MINIMUM_CHARGE_CENTS} cents: the rest stays as the payer's balance for later calls`,
        }
      : {}),
    realm: config.realm,
    how: "Send the request without credentials: the 402 answer's WWW-Authenticate: Payment header holds the challenge; grant a Stripe shared payment token for its amount and send the request again with Authorization: Payment <credential>.",
  });

  const challenge = async (resource: PaidResource, error?: string) => {
    void error; // MPP carries a refusal's reason in the 402's body (the AppError's message).
    return { "www-authenticate": Challenge.serialize(challengeFor(resource)) };
  };

  const refuse = async (resource: PaidResource, reason: string, message: string) =>
    new AppError("payment_required", `MPP payment refused (${reason}): ${message}`, {
      headers: await challenge(resource, reason),
      remedy: { missing: "payment", price_cents: resource.priceCents },
    });

  return {
    name: "mpp",
    credentialOf(headers) {
      const header = headers.authorization;
      if (typeof header !== "string") return undefined;
      return Credential.extractPaymentScheme(header) ?? undefined;
    },
    challenge,
    offer,
    refuse,
    async decode(header, resource) {
      const { state, source } = await decode(header, resource, config, now, refuse);
      return {
        rail: "mpp",
        identity: `${METHOD}:${state.challengeId}`,
        amountMicros: state.amountCents * MICROS_PER_CENT,
        state: { ...state, source },
      };
    },
    async verify(decoded, resource) {
      const { source, ...state } = decoded.state as MppPaymentState & { source?: string };
      const token = await grantedToken(stripe, state.spt).catch((error: unknown) => {
        if (error instanceof Stripe.errors.StripeInvalidRequestError && error.statusCode === 404)
          return undefined;
        throw new AppError(
          "unavailable",
          `MPP payments are unavailable: Stripe did not answer (${(error as Error).message})`,
        );
      });
      if (!token)
        throw await refuse(resource, "invalid_token", `Stripe knows no shared payment token ${state.spt}`);
      const problem = tokenProblem(token, state, now());
      if (problem) throw await refuse(resource, "invalid_token", problem);
      return { ...decoded, payer: payerOf(token, source), state };
    },
    settle: (payment) => settle(stripe, payment, now),
    refund: (payer, amountMicros, payments, key) => refund(stripe, payer, amountMicros, payments, key),
  };
}

function centsToDecimal(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}

/**
 * The credential read and matched against this resource: issued by us (the HMAC over every field
 * of the challenge it echoes), not expired, for this URL, this amount and currency, and carrying
 * an SPT. Every mismatch is a 402 naming it, with a fresh challenge.
 */
async function decode(
  header: string,
  resource: PaidResource,
  config: MppConfig,
  now: () => Date,
  refuse: PaymentRail["refuse"],
): Promise<{ state: MppPaymentState; source: string | undefined }> {
  let credential: ReturnType<typeof Credential.deserialize>;
  try {
    credential = Credential.deserialize(header);
  } catch {
    throw await refuse(
      resource,
      "invalid_credential",
      "The Authorization: Payment credential is not base64url JSON of an MPP credential",
    );
  }
  const { challenge } = credential;
  if (!Challenge.verify(challenge, { secretKey: config.secretKey }))
    throw await refuse(
      resource,
      "unknown_challenge",
      "The credential's challenge was not issued by this server (or was altered)",
    );
  if (challenge.method !== METHOD || challenge.intent !== INTENT || challenge.realm !== config.realm)
    throw await refuse(
      resource,
      "unsupported_method",
      `Only method "${METHOD}", intent "${INTENT}" in realm "${config.realm}" is accepted`,
    );
  try {
    Expires.assert(challenge.expires, challenge.id);
    if (challenge.expires && new Date(challenge.expires) < now())
      throw new Errors.PaymentExpiredError({ expires: challenge.expires });
  } catch {
    throw await refuse(
      resource,
      "challenge_expired",
      "The credential's challenge has expired: ask again without Authorization for a fresh one",
    );
  }
  const paidFor = metaOf(challenge).resource;
  if (paidFor !== resource.url)
    throw await refuse(
      resource,
      "resource_mismatch",
      `The credential pays for ${paidFor ?? "another resource"}, not ${resource.url}`,
    );
  const request = challenge.request as { amount?: unknown; currency?: unknown; externalId?: unknown };
  const expected = mppChargeCents(resource.priceCents);
  if (request.amount !== String(expected) || request.currency !== CURRENCY)
    throw await refuse(
      resource,
      "amount_mismatch",
      `The credential pays ${String(request.amount)} ${String(request.currency)} (smallest unit); this call asks ${expected} ${CURRENCY}`,
    );
  const payload = StripeMethods.charge.schema.credential.payload.safeParse(credential.payload);
  if (!payload.success || !/^spt_[A-Za-z0-9_]+$/.test(payload.data.spt))
    throw await refuse(
      resource,
      "invalid_payload",
      "The credential's payload must carry a Stripe shared payment token (payload.spt, spt_…)",
    );
  const state: MppPaymentState = {
    challengeId: challenge.id,
    spt: payload.data.spt,
    amountCents: expected,
    currency: CURRENCY,
    resource: resource.url,
    ...(typeof request.externalId === "string" ? { externalId: request.externalId } : {}),
  };
  return { state, source: typeof credential.source === "string" ? credential.source : undefined };
}

/** The challenge's `meta` (sent as `opaque`, base64url JSON, and bound by its HMAC). */
function metaOf(challenge: { meta?: Record<string, string>; opaque?: string }): Record<string, unknown> {
  if (challenge.meta) return challenge.meta;
  try {
    const meta: unknown = challenge.opaque ? PaymentRequest.deserialize(challenge.opaque) : undefined;
    return typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
