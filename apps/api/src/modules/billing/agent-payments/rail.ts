import type { AppError } from "../../../lib/errors.ts";

/**
 * A payment rail (issue 40, docs/decisions/070): a protocol by which an agent without an account pays
 * Promptmint (x402 today, Stripe and Tempo's MPP beside it). A rail only speaks its protocol: it
 * offers a payment, verifies the credential a caller sends, settles it (the money moves to us) and
 * gives money back where its network allows. It writes no table and moves nothing in the ledger:
 * `agent-payments/balances.ts` credits a settled payment to its payer's balance (an account-less
 * wallet), and the call is then held, charged and recorded as any wallet call is
 * (call-payment/index.ts and record.ts). One money path for every rail.
 */
export type RailName = "x402" | "mpp";

/** What an agent pays for: an amount (a call's price, or a budget the agent asked for) at a URL. */
export interface PaidResource {
  /** What the payment must carry, in cents (the call's price, or the prepaid budget asked for). */
  priceCents: number;
  /** The absolute URL of the endpoint. */
  url: string;
  description: string;
  /**
   * The 402's declared extensions (`PaymentRequired.extensions`): the `bazaar` discovery of the
   * endpoint's input and output (gateway/agent-discovery.ts, docs/decisions/073), if any.
   */
  discovery?: Record<string, unknown>;
}

/** A payer as a rail names it: one account-less user per (rail, subject). */
export interface RailPayer {
  rail: RailName;
  /** x402: `network:address`; MPP: the credential's `source` (a DID) or the method's payer id. */
  subject: string;
  /** A short label for screens ("0x12ab…cdef"). */
  label: string;
}

/** A credential read and matched against one resource, not yet checked with the rail's service. */
export type DecodedCredential = Omit<VerifiedPayment, "payer">;

/** A credential verified for one resource, ready to settle. `identity` is unique per payment. */
export interface VerifiedPayment {
  rail: RailName;
  /** The payment's identity: the same credential can never pay twice (a unique key in the table). */
  identity: string;
  payer: RailPayer;
  amountMicros: number;
  /**
   * The payer's own id for this payment, when its rail carries one (x402's `payment-identifier`
   * extension): a retry naming it again is not paid again, and its call is answered once.
   */
  idempotencyId?: string;
  /** The rail's own state between verify and settle (the decoded payload, the challenge). */
  state: unknown;
}

export type RailSettlement =
  /** The money moved to us: `reference` names it on the rail (a transaction hash, a PaymentIntent). */
  | { kind: "settled"; reference: string; headers: Record<string, string> }
  /** Definitively not moved (a bad credential, no funds, expired). */
  | { kind: "refused"; reason: string }
  /** Maybe moved: the rail's sweep resolves it later; the caller is told to retry (503). */
  | { kind: "pending"; reason: string; reference?: string };

export type RailRefund =
  /** Given back on the rail's own network (a Stripe refund). */
  | { kind: "refunded"; reference: string }
  /** The network cannot give money back by itself (x402): recorded as owed to the payer. */
  | { kind: "owed"; reason: string };

export interface PaymentRail {
  readonly name: RailName;
  /** The credential a request carries for this rail, if any (x402: `PAYMENT-SIGNATURE`; MPP: `Authorization: Payment …`). */
  credentialOf(headers: Record<string, unknown>): string | undefined;
  /** This rail's part of a 402: its headers (x402: `PAYMENT-REQUIRED`; MPP: `WWW-Authenticate: Payment …`). */
  challenge(resource: PaidResource, error?: string): Promise<Record<string, string>>;
  /** What a 402's remedy says of this rail for a call at this price (JSON, shown to agents). */
  offer(priceCents: number): Record<string, unknown>;
  /**
   * Reads the credential and matches it against the resource, without asking anyone (402 AppError
   * when it cannot be read or pays for something else): its identity is known before any network
   * call, so a replay is refused before the rail's service is asked.
   */
  decode(credential: string, resource: PaidResource): Promise<DecodedCredential>;
  /** Checks a decoded credential with the rail's service (signature, funds, expiry) and names its payer: 402 when it cannot pay. */
  verify(decoded: DecodedCredential, resource: PaidResource): Promise<VerifiedPayment>;
  /** Moves the money. */
  settle(payment: VerifiedPayment): Promise<RailSettlement>;
  /**
   * Gives `amountMicros` of what `payments` paid back to their payer. `key` names the refund: asked
   * again with the same key (a retry after a lost answer), the rail gives the money back once.
   */
  refund(
    payer: RailPayer,
    amountMicros: number,
    payments: { reference: string; amountMicros: number }[],
    key: string,
  ): Promise<RailRefund>;
  /** A 402 refusing a credential for `reason`, with this rail's fresh challenge (the other rails' are added by the caller). */
  refuse(resource: PaidResource, reason: string, message: string): Promise<AppError>;
}
