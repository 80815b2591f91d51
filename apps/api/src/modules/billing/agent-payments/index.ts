import type { FastifyBaseLogger } from "fastify";
import type { X402Config } from "../../../config.ts";
import type { Database } from "../../../db/client.ts";
import type { AppError } from "../../../lib/errors.ts";
import type { X402Offer } from "../../../lib/payment-remedy.ts";
import type { InvocationRecord } from "../../analytics/call-records.ts";
import { admitX402Payment, endX402Payment, sweepX402Payments, type X402Charge } from "./x402-payments.ts";
import { createX402Rail, type PaidResource, type X402Rail } from "./x402-rail.ts";

export type { PaidResource } from "./x402-rail.ts";

/**
 * Payment by an agent without an account (issue 30, docs/decisions/052): a call paid on its own,
 * by a payment protocol, rather than from a wallet or a plan. x402 is the one rail today; the
 * surface is the rail's, not x402's, so that a second (Stripe's MPP) is another implementation of
 * `challenge` / `admit` / `end` beside it (the decision says what that takes).
 *
 * The gateway asks for a challenge when a call comes without credentials (the 402 and its
 * headers), admits the payment the caller retries with (verified before the call runs, under the
 * payer's account-less user), and hands the admitted payment to the call's payment
 * (call-payment/index.ts), which ends it once with the call's record.
 */
export interface AgentPayments {
  /** What a 402's remedy says of the agent rails for a call at this price. */
  offer(priceCents: number): X402Offer;
  /** Whether the request carries a payment of some rail (`PAYMENT-SIGNATURE`). */
  paymentHeaderOf(headers: Record<string, unknown>): string | undefined;
  /** The 402 of a call without credentials or payment: the rails' challenges (`PAYMENT-REQUIRED`). */
  challenge(call: PaidResource): Promise<AppError>;
  /** Verifies the payment for this call and writes it down (402 with the reason when it cannot pay). */
  admit(header: string, call: PaidResource & { applicationId: string }): Promise<AdmittedAgentPayment>;
  /** The background sweep: stale verified payments fail, settlements without an answer are retried. */
  sweep(log: FastifyBaseLogger): Promise<number>;
}

/** A payment verified for one call, open until the call's payment ends it. */
export interface AdmittedAgentPayment {
  rail: "x402";
  /** The payer's account-less user: the call's caller and its invocation's. */
  payerUserId: string;
  /** The price the payment authorizes (the app's price when it was admitted). */
  priceCents: number;
  /**
   * Whether the caller has gone (set by the gateway): a payment settled for a caller who left
   * before its answer could be sent is kept for the payer, not charged (decision 064).
   */
  callerLeft?: () => boolean;
  /**
   * Ends it with the call's record, once: an answered call is settled, recorded and posted (402
   * when the rail refuses to settle, 503 while the settlement is not confirmed: the answer must
   * not be given); any other is never settled.
   */
  end(
    record: InvocationRecord | null,
    options: {
      feePercent: number;
      recordFailed(record: InvocationRecord): Promise<void>;
      log: FastifyBaseLogger;
    },
  ): Promise<X402Charge>;
}

export function createAgentPayments(
  db: Database,
  config: X402Config | undefined,
  options: { rail?: X402Rail } = {},
): AgentPayments | undefined {
  if (!config) return undefined;
  const rail = options.rail ?? createX402Rail(config);
  return {
    offer: (priceCents) => rail.offer(priceCents),
    paymentHeaderOf(headers) {
      const header = headers["payment-signature"];
      return typeof header === "string" && header.trim() !== "" ? header.trim() : undefined;
    },
    challenge: (call) => rail.refuse(call),
    async admit(header, call) {
      const payment = await admitX402Payment(db, rail, header, call);
      const admitted: AdmittedAgentPayment = {
        rail: "x402",
        payerUserId: payment.payerUserId,
        priceCents: payment.priceCents,
        end: (record, endOptions) =>
          endX402Payment(db, rail, { ...payment, callerLeft: admitted.callerLeft }, record, endOptions),
      };
      return admitted;
    },
    sweep: (log) => sweepX402Payments(db, rail, log),
  };
}
