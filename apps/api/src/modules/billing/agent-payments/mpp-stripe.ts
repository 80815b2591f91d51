import { createHash } from "node:crypto";
import { Receipt } from "mppx";
import Stripe from "stripe";
import type { MppConfig } from "../../../config.ts";
import { AppError } from "../../../lib/errors.ts";
import { MICROS_PER_CENT } from "../money.ts";
import type { RailPayer, RailRefund, RailSettlement, VerifiedPayment } from "./rail.ts";

/**
 * The Stripe half of the MPP rail (docs/decisions/071): the shared payment token as Stripe shows
 * it, the capture (a PaymentIntent confirmed with the token, under an idempotency key of the
 * payment's identity) and refunds. mpp-rail.ts speaks the protocol and calls these.
 */

/** Stripe's API version for shared payment tokens (mppx's `stripePreviewVersion`). */
export const STRIPE_SPT_API_VERSION = "2026-07-29.preview";
/** What `verify` keeps for `settle`: plain JSON, so a sweep can settle it again after a restart. */
export interface MppPaymentState {
  challengeId: string;
  spt: string;
  amountCents: number;
  currency: string;
  resource: string;
  externalId?: string;
}

export interface MppRailOptions {
  /** Stripe's answer time per request (default 20 s); past it a settlement is pending. */
  timeoutMs?: number;
  /** The SDK's own retries, each with the same Idempotency-Key (default 2). */
  maxNetworkRetries?: number;
  now?: () => Date;
}

export function stripeFor(config: MppConfig, options: MppRailOptions): Stripe {
  const endpoint = config.stripeApiUrl ? new URL(config.stripeApiUrl) : undefined;
  return new Stripe(config.stripeSecretKey, {
    maxNetworkRetries: options.maxNetworkRetries ?? 2,
    timeout: options.timeoutMs ?? 20_000,
    telemetry: false,
    ...(endpoint
      ? {
          host: endpoint.hostname,
          port: endpoint.port || undefined,
          protocol: endpoint.protocol.replace(":", "") as "http" | "https",
        }
      : {}),
  });
}

/** Stripe's view of a shared payment token granted to us (the fields this rail reads). */
export interface GrantedToken {
  id: string;
  deactivated_at?: number | null;
  deactivated_reason?: string | null;
  usage_limits?: { currency?: string; max_amount?: number; expires_at?: number | null } | null;
  payment_method_details?: {
    type?: string;
    card?: { brand?: string; last4?: string; fingerprint?: string };
  } | null;
}

export async function grantedToken(stripe: Stripe, spt: string): Promise<GrantedToken> {
  return (await stripe.rawRequest(
    "GET",
    `/v1/shared_payment/granted_tokens/${encodeURIComponent(spt)}`,
    undefined,
    {
      apiVersion: STRIPE_SPT_API_VERSION,
    },
  )) as GrantedToken;
}

/**
 * Why this token cannot pay this payment, if it cannot. A `consumed` token is not refused here: a
 * replayed credential must reach the payments table (its identity is known there), and a token
 * used up by another payment is refused by Stripe when it is settled.
 */
export function tokenProblem(token: GrantedToken, state: MppPaymentState, at: Date): string | undefined {
  if (token.deactivated_reason && token.deactivated_reason !== "consumed")
    return `The shared payment token is no longer usable (${token.deactivated_reason})`;
  const limits = token.usage_limits;
  if (limits?.currency && limits.currency !== state.currency)
    return `The shared payment token is limited to ${limits.currency}; this call is paid in ${state.currency}`;
  if (limits?.max_amount !== undefined && limits.max_amount < state.amountCents)
    return `The shared payment token allows ${limits.max_amount} cents; this call asks ${state.amountCents}`;
  if (limits?.expires_at && limits.expires_at * 1000 <= at.getTime())
    return "The shared payment token has expired";
  return undefined;
}

/**
 * Who pays: the card behind the token, as Stripe fingerprints it (`stripe:card:<fingerprint>`),
 * so every token an agent grants from one card reaches one balance. Not the credential's
 * `source`: with Stripe tokens nothing signs it, and whoever named someone's DID would spend that
 * payer's balance. `source` only labels the payer. Without a fingerprint the token itself names a
 * payer of one payment.
 */
export function payerOf(token: GrantedToken, source: string | undefined): RailPayer {
  const card = token.payment_method_details?.card;
  const subject = card?.fingerprint ? `stripe:card:${card.fingerprint}` : `stripe:spt:${token.id}`;
  const label = source
    ? source.length > 24
      ? `${source.slice(0, 12)}…${source.slice(-8)}`
      : source
    : card?.last4
      ? `${card.brand ?? "card"} ···${card.last4}`
      : `token ${token.id.slice(0, 12)}…`;
  return { rail: "mpp", subject, label };
}

/** Stripe's Idempotency-Key for a payment's capture: one per identity, whoever settles it and however often. */
export function captureKey(identity: string): string {
  return `mpp-capture-${createHash("sha256").update(identity).digest("hex").slice(0, 40)}`;
}

/**
 * Captures the payment: one PaymentIntent confirmed with the SPT, under an Idempotency-Key of the
 * payment's identity, so a retried settle (a lost answer, the sweep, a second process) gets
 * Stripe's first answer back and never charges twice. A decline is `refused`; no answer, a 5xx or
 * a PaymentIntent still processing is `pending` (settle again, with the same key, to learn which).
 */
export async function settle(
  stripe: Stripe,
  payment: VerifiedPayment,
  now: () => Date,
): Promise<RailSettlement> {
  const state = payment.state as MppPaymentState;
  let intent: Stripe.PaymentIntent;
  try {
    intent = await stripe.paymentIntents.create(
      {
        amount: state.amountCents,
        currency: state.currency,
        confirm: true,
        automatic_payment_methods: { enabled: true, allow_redirects: "never" },
        metadata: {
          machine_payment: "true",
          mpp_challenge_id: state.challengeId,
          mpp_resource: state.resource,
        },
        // Not in the SDK's types yet (shared payment tokens are in preview), as in mppx.
        shared_payment_granted_token: state.spt,
      } as Stripe.PaymentIntentCreateParams,
      { apiVersion: STRIPE_SPT_API_VERSION, idempotencyKey: captureKey(payment.identity) },
    );
  } catch (error) {
    return settlementOfError(error);
  }
  if (intent.status === "succeeded") {
    if (intent.amount !== state.amountCents || intent.currency !== state.currency)
      return {
        kind: "pending",
        reason: `Stripe captured ${intent.amount} ${intent.currency}, not ${state.amountCents} ${state.currency}`,
        reference: intent.id,
      };
    const receipt = Receipt.from({
      method: "stripe",
      reference: intent.id,
      status: "success",
      timestamp: now().toISOString(),
      ...(state.externalId ? { externalId: state.externalId } : {}),
    });
    return {
      kind: "settled",
      reference: intent.id,
      headers: { "payment-receipt": Receipt.serialize(receipt) },
    };
  }
  if (intent.status === "processing")
    return { kind: "pending", reason: "Stripe is still processing the payment", reference: intent.id };
  // requires_action (3-D Secure: no agent can answer it), requires_payment_method, canceled:
  // nothing was captured.
  return { kind: "refused", reason: `Stripe did not capture the payment (PaymentIntent ${intent.status})` };
}

function settlementOfError(error: unknown): RailSettlement {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Stripe.errors.StripeCardError)
    return {
      kind: "refused",
      reason: `declined: ${error.decline_code ?? error.code ?? "card_declined"}: ${message}`,
    };
  // A used, expired or revoked token, a bad amount: Stripe refused the request before charging.
  // An idempotency error is not one (the key was used, maybe with a charge), nor a 409 (another
  // request with the same key still in flight: a second process settling it).
  if (
    error instanceof Stripe.errors.StripeInvalidRequestError &&
    !(error instanceof Stripe.errors.StripeIdempotencyError) &&
    error.statusCode !== 409
  )
    return { kind: "refused", reason: `refused by Stripe: ${error.code ?? "invalid_request"}: ${message}` };
  if (
    error instanceof Stripe.errors.StripeAuthenticationError ||
    error instanceof Stripe.errors.StripePermissionError
  )
    return { kind: "refused", reason: `Stripe refused our key: ${message}` };
  // Connection lost or timed out, 5xx, 429, idempotency conflicts: it may have been charged.
  return { kind: "pending", reason: message };
}

/**
 * Gives `amountMicros` back on the payments' cards, payment after payment (Stripe refunds each
 * PaymentIntent, never beyond what it captured). `key` (optional, beyond `PaymentRail`) makes it
 * idempotent: the same key refunds once however often it is retried. Stripe refunds whole cents:
 * a sub-cent amount, or more than the payments carry, is `owed` and nothing moves.
 */
export async function refund(
  stripe: Stripe,
  payer: RailPayer,
  amountMicros: number,
  payments: { reference: string; amountMicros: number }[],
  key?: string,
): Promise<RailRefund> {
  if (amountMicros <= 0 || amountMicros % MICROS_PER_CENT !== 0)
    return {
      kind: "owed",
      reason: `Stripe refunds whole cents: ${amountMicros} micro-dollars cannot be given back on a card`,
    };
  const paid = payments.reduce((sum, payment) => sum + payment.amountMicros, 0);
  if (amountMicros > paid)
    return { kind: "owed", reason: `${amountMicros} micro-dollars asked back, the payments carry ${paid}` };
  let remaining = amountMicros / MICROS_PER_CENT;
  const references: string[] = [];
  for (const payment of payments) {
    if (remaining === 0) break;
    const cents = Math.min(remaining, Math.floor(payment.amountMicros / MICROS_PER_CENT));
    if (cents === 0) continue;
    try {
      const made = await stripe.refunds.create(
        { payment_intent: payment.reference, amount: cents, metadata: { mpp_payer: payer.subject } },
        key
          ? {
              idempotencyKey: `mpp-refund-${createHash("sha256").update(`${key}:${payment.reference}`).digest("hex").slice(0, 40)}`,
            }
          : {},
      );
      references.push(made.id);
    } catch (error) {
      if (
        error instanceof Stripe.errors.StripeInvalidRequestError &&
        !(error instanceof Stripe.errors.StripeIdempotencyError)
      )
        return {
          kind: "owed",
          reason: `Stripe refused the refund of ${payment.reference} (${error.message})${references.length ? `; refunded before it: ${references.join(", ")}` : ""}`,
        };
      throw new AppError("unavailable", `MPP refund not confirmed by Stripe: ${(error as Error).message}`);
    }
    remaining -= cents;
  }
  return { kind: "refunded", reference: references.join(",") };
}
