import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from "@x402/core/http";
import { HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import {
  type PaymentPayload,
  type PaymentRequired,
  type PaymentRequirements,
  SettleError,
  type SettleResponse,
} from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import type { X402Config } from "../../../config.ts";
import { AppError } from "../../../lib/errors.ts";
import type { X402Offer } from "../../../lib/payment-remedy.ts";
import { MICROS_PER_CENT } from "../money.ts";

/**
 * The x402 protocol (version 2) as the platform speaks it, through the protocol's own packages
 * (`@x402/core`'s resource server and HTTP facilitator client, `@x402/evm`'s `exact` scheme): the
 * requirements of one call at an app's price, the `PAYMENT-REQUIRED` challenge, the client's
 * `PAYMENT-SIGNATURE` decoded and matched, and the facilitator's verify and settle. No money rule
 * and no table here: x402-payments.ts keeps those.
 *
 * The asset is a 6-decimal USD stablecoin (USDC), so one atomic unit is one micro-dollar, the
 * ledger's unit: a price of 5 cents asks for exactly 50000 units. `exact` only: every call has
 * a fixed price (docs/decisions/052 on `upto`).
 */
export interface X402Rail {
  readonly config: X402Config;
  /** What a 402's remedy says of x402 for a call at this price. */
  offer(priceCents: number): X402Offer;
  /** The 402's `PAYMENT-REQUIRED` (base64 JSON) and its decoded form, for one call of `resource`. */
  challenge(
    call: PaidResource,
    error?: string,
  ): Promise<{ header: string; paymentRequired: PaymentRequired }>;
  /**
   * The client's `PAYMENT-SIGNATURE` decoded and matched against this call's requirements: 402
   * (with a fresh challenge) when it cannot be read or pays for something else.
   */
  decode(header: string, call: PaidResource): Promise<DecodedPayment>;
  /**
   * A 402 for this call: without payment (`reason` undefined) or refusing one, with the reason in
   * the message and the challenge's `error`, a fresh PAYMENT-REQUIRED, and the remedy's x402 offer.
   */
  refuse(call: PaidResource, reason?: string, message?: string): Promise<AppError>;
  /** The facilitator's check of the signature, the balance and the nonce; the payer's address. */
  verify(payment: DecodedPayment): Promise<{ valid: true; payer: string } | { valid: false; reason: string }>;
  /** The facilitator settles it (the transfer on chain); its answer and the header that reports it. */
  settle(payment: Pick<DecodedPayment, "payload" | "requirements">): Promise<SettleOutcome>;
}

/** One call of one app, as x402 describes what is paid for. */
export interface PaidResource {
  priceCents: number;
  /** The absolute URL of the endpoint. */
  url: string;
  description: string;
}

export interface DecodedPayment {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  /** The payment's identity: the same authorization can never pay twice (x402_payments). */
  identity: { network: string; payer: string; nonce: string };
  amountMicros: number;
}

export type SettleOutcome =
  | { kind: "settled"; transaction: string; header: string; response?: SettleResponse }
  /** The facilitator said no: the authorization will never move money (spent, expired, refused). */
  | { kind: "refused"; reason: string }
  /** No answer (timeout, network): it may or may not have settled; the sweep asks again. */
  | { kind: "unknown"; reason: string };

export function createX402Rail(config: X402Config, options: { fetchTimeoutMs?: number } = {}): X402Rail {
  const server = new x402ResourceServer(
    new HTTPFacilitatorClient({ url: config.facilitatorUrl, timeoutMs: options.fetchTimeoutMs ?? 30_000 }),
  ).register(config.network, new ExactEvmScheme());
  // The facilitator's supported kinds are fetched once, when the first call needs them (and again
  // after a failure): a facilitator that is down does not stop the server from starting.
  let ready: Promise<void> | undefined;
  const initialized = () => {
    ready ??= server.initialize().catch((error) => {
      ready = undefined;
      throw new AppError(
        "unavailable",
        `x402 payments are unavailable: the facilitator did not answer (${(error as Error).message})`,
      );
    });
    return ready;
  };
  const amountOf = (priceCents: number) => String(priceCents * MICROS_PER_CENT);
  const requirementsFor = async (priceCents: number): Promise<PaymentRequirements> => {
    await initialized();
    const [requirements] = await server.buildPaymentRequirements({
      scheme: "exact",
      network: config.network,
      payTo: config.payTo,
      price: {
        asset: config.asset,
        amount: amountOf(priceCents),
        extra: { name: config.assetName, version: config.assetVersion },
      },
      maxTimeoutSeconds: config.maxTimeoutSeconds,
    });
    if (!requirements) throw new Error("the x402 resource server built no payment requirements");
    return requirements;
  };
  const challenge = async (call: PaidResource, error?: string) => {
    const paymentRequired = await server.createPaymentRequiredResponse(
      [await requirementsFor(call.priceCents)],
      { url: call.url, description: call.description, mimeType: "application/json" },
      error,
    );
    return { header: encodePaymentRequiredHeader(paymentRequired), paymentRequired };
  };
  const offer = (priceCents: number): X402Offer => ({
    accepted: true,
    x402_version: 2,
    scheme: "exact",
    network: config.network,
    asset: config.asset,
    amount: amountOf(priceCents),
    pay_to: config.payTo,
    how: "Send the request without credentials: the 402 answer's PAYMENT-REQUIRED header holds the x402 payment requirements; send it again with a PAYMENT-SIGNATURE header.",
  });
  const refuse = async (call: PaidResource, reason?: string, message?: string) => {
    const { header } = await challenge(call, reason ? `${reason}: ${message}` : undefined);
    return new AppError(
      "payment_required",
      reason
        ? `x402 payment refused (${reason}): ${message}`
        : `This call costs ${call.priceCents} cents: sign in with an API key, or pay for this one call with x402 (the PAYMENT-REQUIRED header holds the requirements).`,
      {
        headers: { "payment-required": header },
        remedy: { missing: "payment", price_cents: call.priceCents, x402: offer(call.priceCents) },
      },
    );
  };
  return {
    config,
    refuse,
    offer,
    challenge,
    async decode(header, call) {
      let payload: PaymentPayload;
      try {
        payload = decodePaymentSignatureHeader(header);
      } catch {
        throw await refuse(
          call,
          "invalid_payment",
          "The PAYMENT-SIGNATURE header is not a base64 JSON x402 payment payload",
        );
      }
      // The header is the client's: anything JSON can say may arrive (null, a number, an array).
      if (typeof payload !== "object" || payload === null || Array.isArray(payload))
        throw await refuse(
          call,
          "invalid_payment",
          "The PAYMENT-SIGNATURE header is not a base64 JSON x402 payment payload (an object)",
        );
      if (payload.x402Version !== 2)
        throw await refuse(
          call,
          "unsupported_version",
          `x402Version ${JSON.stringify(payload.x402Version) ?? "(missing)"} is not accepted: send the number 2`,
        );
      const requirements = server.findMatchingRequirements([await requirementsFor(call.priceCents)], payload);
      if (!requirements)
        throw await refuse(
          call,
          "requirements_mismatch",
          `The payment does not match this call's requirements (scheme exact, network ${config.network}, asset ${config.asset}, amount ${amountOf(call.priceCents)}, pay to ${config.payTo}): ask again without PAYMENT-SIGNATURE for the current ones`,
        );
      // The signed EIP-3009 authorization, checked for its shape here: a malformed one is the
      // client's mistake (402 naming the field), never sent on to the facilitator, which may fail
      // on it as if it were down (a 503 that SDKs would retry).
      const problem = eip3009Problem(payload.payload);
      if (problem) throw await refuse(call, "invalid_payment", problem);
      const { authorization } = payload.payload as unknown as Eip3009Payload;
      return {
        payload,
        requirements,
        identity: {
          network: requirements.network,
          payer: authorization.from.toLowerCase(),
          nonce: authorization.nonce.toLowerCase(),
        },
        amountMicros: Number(requirements.amount),
      };
    },
    async verify({ payload, requirements }) {
      const result = await server.verifyPayment(payload, requirements).catch((error: Error) => {
        throw new AppError(
          "unavailable",
          `x402 payments are unavailable: the facilitator did not verify (${error.message})`,
        );
      });
      if (!result.isValid)
        return {
          valid: false,
          reason: [result.invalidReason, result.invalidMessage].filter(Boolean).join(": ") || "invalid",
        };
      const payer =
        result.payer ?? (payload.payload as { authorization?: { from?: string } }).authorization?.from;
      if (!payer) return { valid: false, reason: "the facilitator named no payer" };
      return { valid: true, payer: payer.toLowerCase() };
    },
    async settle({ payload, requirements }) {
      let response: SettleResponse;
      try {
        response = await server.settlePayment(payload, requirements);
      } catch (error) {
        // A facilitator's answer that it failed is a refusal; no answer at all is not.
        if (error instanceof SettleError) return { kind: "refused", reason: error.message };
        return { kind: "unknown", reason: (error as Error).message };
      }
      if (!response.success)
        return {
          kind: "refused",
          reason: [response.errorReason, response.errorMessage].filter(Boolean).join(": ") || "refused",
        };
      return {
        kind: "settled",
        transaction: response.transaction,
        header: encodePaymentResponseHeader(response),
        response,
      };
    },
  };
}

/** The `exact` scheme's EIP-3009 payload: a transferWithAuthorization and its signature. */
interface Eip3009Payload {
  signature: string;
  authorization: {
    from: string;
    to: string;
    value: string;
    validAfter: string;
    validBefore: string;
    nonce: string;
  };
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^[0-9]{1,78}$/;
const FIELDS: [keyof Eip3009Payload["authorization"], RegExp, string][] = [
  ["from", ADDRESS, "an address (0x and 40 hex digits)"],
  ["to", ADDRESS, "an address (0x and 40 hex digits)"],
  ["value", UINT, "a whole number of atomic units, as a string"],
  ["validAfter", UINT, "a Unix time in seconds, as a string"],
  ["validBefore", UINT, "a Unix time in seconds, as a string"],
  ["nonce", /^0x[0-9a-fA-F]{64}$/, "32 bytes (0x and 64 hex digits)"],
];

/** What is wrong with an `exact` EVM payload's shape (`payload.authorization.from`…), or undefined. */
export function eip3009Problem(payload: unknown): string | undefined {
  const { authorization, signature } = (payload ?? {}) as Partial<Record<keyof Eip3009Payload, unknown>>;
  if (typeof authorization !== "object" || authorization === null || Array.isArray(authorization))
    return "The payment has no EIP-3009 authorization (payload.authorization)";
  for (const [field, pattern, what] of FIELDS) {
    const value = (authorization as Record<string, unknown>)[field];
    if (typeof value !== "string" || !pattern.test(value))
      return `payload.authorization.${field} must be ${what}`;
  }
  if (typeof signature !== "string" || !/^0x(?:[0-9a-fA-F]{2})+$/.test(signature))
    return "payload.signature must be a hex signature (0x and an even number of hex digits)";
  return undefined;
}
