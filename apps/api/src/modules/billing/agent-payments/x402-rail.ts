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
import { declarePaymentIdentifierExtension, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { decodeEventLog, encodeEventTopics, type Hex, parseAbi } from "viem";
import type { X402Config } from "../../../config.ts";
import { AppError } from "../../../lib/errors.ts";
import type { X402Offer } from "../../../lib/payment-remedy.ts";
import { MICROS_PER_CENT } from "../money.ts";
import type { PaidResource } from "./rail.ts";

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
  /**
   * What the chain says of one authorization (X402_RPC_URL; undefined without it, or when the chain
   * did not answer): its amount transferred to our receiving address, used by a transfer to anyone
   * else (the payer burnt it), or not used yet. `transaction` narrows the search to a known one.
   */
  lookup(
    payment: { identity: DecodedPayment["identity"]; amountMicros: number },
    transaction?: string,
  ): Promise<ChainState | undefined>;
  /**
   * Every transfer of the asset the chain shows to the receiving address (X402_RPC_URL), for
   * reconcile; undefined without a chain to ask.
   */
  transfersToPayTo(): Promise<ReceivedTransfer[] | undefined>;
}

/** One authorization on chain (X402Rail.lookup). */
export type ChainState =
  | { state: "transferred"; transaction: string }
  | { state: "elsewhere"; transaction: string }
  | { state: "unused" };

/** A transfer that reached the receiving address. */
export interface ReceivedTransfer {
  transaction: string;
  from: string;
  valueMicros: number;
}

/** A transaction hash as a chain writes it: 0x and 32 bytes. Nothing else is a settlement. */
export const TRANSACTION_HASH = /^0x[0-9a-fA-F]{64}$/;

/** One call of one app (or a budget), as the rails describe what is paid for (rail.ts). */
export type { PaidResource } from "./rail.ts";

export interface DecodedPayment {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  /** The payment's identity: the same authorization can never pay twice (x402_payments). */
  identity: { network: string; payer: string; nonce: string };
  amountMicros: number;
}

export type SettleOutcome =
  /** `success: true` with a well-formed transaction hash: the only answer that is a settlement. */
  | { kind: "settled"; transaction: string; header: string; response?: SettleResponse }
  /**
   * The facilitator said no before broadcasting anything: the authorization did not move money
   * (a bad signature, no funds, expired). Never a 5xx, never an answer that names a transaction.
   */
  | { kind: "refused"; reason: string }
  /**
   * Anything else (`settlement_pending`, a transaction without success, `success` without a
   * well-formed transaction, a 5xx, a timeout, a dropped connection, "nonce already used"): it may
   * or may not have moved money. It stays pending until the chain or the facilitator says which
   * (decision 064); `transaction` is the hash the facilitator named, if any.
   */
  | { kind: "pending"; reason: string; transaction?: string };

/**
 * Refusals that do not say the money did not move: the authorization's nonce is used (by our
 * settlement whose answer was lost, or by the payer's own transfer), or the facilitator lost track
 * of its transaction. Only the chain can tell.
 */
const AMBIGUOUS_REFUSAL =
  /settlement_pending|nonce_already_used|authorization is used|invalid_transaction_state/i;

/** What a facilitator's settle answer is (SettleOutcome); `status` is the HTTP status of a non-2xx. */
export function settleOutcomeOf(response: SettleResponse, status = 200): SettleOutcome {
  const reason = [response.errorReason, response.errorMessage].filter(Boolean).join(": ");
  const transaction = typeof response.transaction === "string" ? response.transaction : "";
  const named = TRANSACTION_HASH.test(transaction) ? transaction : undefined;
  if (response.success === true && named && status < 300)
    return { kind: "settled", transaction: named, header: encodePaymentResponseHeader(response), response };
  if (response.success === true)
    return { kind: "pending", reason: `success without a transaction hash (${JSON.stringify(transaction)})` };
  if (status >= 500 || transaction !== "" || AMBIGUOUS_REFUSAL.test(reason))
    return { kind: "pending", reason: reason || `the facilitator answered ${status}`, transaction: named };
  return { kind: "refused", reason: reason || "refused" };
}

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
      // A payer's own id for its payment makes a retry idempotent (issue 40, decision 070), and
      // the endpoint's bazaar discovery (decision 073) when the gateway describes it.
      { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false), ...call.discovery },
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
        // A facilitator's non-2xx answer in the protocol's shape: a refusal only when it is
        // definitive (a 4xx naming no transaction); no answer at all is pending.
        if (error instanceof SettleError)
          return settleOutcomeOf(
            {
              success: false,
              errorReason: error.errorReason,
              errorMessage: error.errorMessage,
              transaction: error.transaction ?? "",
              network: requirements.network,
            } as SettleResponse,
            error.statusCode,
          );
        return { kind: "pending", reason: (error as Error).message };
      }
      return settleOutcomeOf(response);
    },
    lookup: (payment, transaction) =>
      config.rpcUrl
        ? chainLookup(config, config.rpcUrl, payment, transaction).catch(() => undefined)
        : Promise.resolve(undefined),
    async transfersToPayTo() {
      if (!config.rpcUrl) return undefined;
      const logs = await rpc<RpcLog[]>(config.rpcUrl, "eth_getLogs", [
        {
          address: config.asset,
          fromBlock: "earliest",
          toBlock: "latest",
          topics: encodeEventTopics({ abi: TOKEN_EVENTS, eventName: "Transfer", args: { to: config.payTo } }),
        },
      ]);
      return logs.flatMap((log) => {
        const event = transferOf(log);
        return event
          ? [
              {
                transaction: log.transactionHash,
                from: event.from.toLowerCase(),
                valueMicros: Number(event.value),
              },
            ]
          : [];
      });
    },
  };
}

/** The EIP-3009 token's events a settlement leaves on chain. */
const TOKEN_EVENTS = parseAbi([
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
]);

interface RpcLog {
  address: string;
  topics: Hex[];
  data: Hex;
  transactionHash: string;
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { result?: T; error?: { message?: string } };
  if (!response.ok || body.error || body.result === undefined)
    throw new Error(`the chain's ${method} failed: ${body.error?.message ?? response.status}`);
  return body.result;
}

function transferOf(log: RpcLog): { from: string; to: string; value: bigint } | undefined {
  try {
    const event = decodeEventLog({
      abi: TOKEN_EVENTS,
      topics: log.topics as [Hex, ...Hex[]],
      data: log.data,
    });
    return event.eventName === "Transfer" ? event.args : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The chain's word on one authorization: the transaction that used its nonce (the token's
 * `AuthorizationUsed` event, or the one the facilitator named), and whether that transaction
 * moved exactly its amount from the payer to our receiving address. A nonce used by anything
 * else (the payer's own transfer) is `elsewhere`: nothing reached us, and nothing ever will.
 */
async function chainLookup(
  config: X402Config,
  url: string,
  payment: { identity: DecodedPayment["identity"]; amountMicros: number },
  named?: string,
): Promise<ChainState> {
  const { payer, nonce } = payment.identity;
  const used = await rpc<RpcLog[]>(url, "eth_getLogs", [
    {
      address: config.asset,
      fromBlock: "earliest",
      toBlock: "latest",
      topics: encodeEventTopics({
        abi: TOKEN_EVENTS,
        eventName: "AuthorizationUsed",
        args: { authorizer: payer as Hex, nonce: nonce as Hex },
      }),
    },
  ]);
  const transaction = used[0]?.transactionHash ?? named;
  if (!transaction || !TRANSACTION_HASH.test(transaction)) return { state: "unused" };
  const receipt = await rpc<{ status: string; logs: RpcLog[] } | null>(url, "eth_getTransactionReceipt", [
    transaction,
  ]);
  // The named transaction not mined (or reverted) and no use of the nonce seen: not used yet.
  if (receipt?.status !== "0x1") return used[0] ? { state: "elsewhere", transaction } : { state: "unused" };
  const paid = receipt.logs.some((log) => {
    if (log.address.toLowerCase() !== config.asset.toLowerCase()) return false;
    const event = transferOf(log);
    return (
      event !== undefined &&
      event.from.toLowerCase() === payer &&
      event.to.toLowerCase() === config.payTo.toLowerCase() &&
      event.value === BigInt(payment.amountMicros)
    );
  });
  if (paid) return { state: "transferred", transaction };
  return used[0] ? { state: "elsewhere", transaction } : { state: "unused" };
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
