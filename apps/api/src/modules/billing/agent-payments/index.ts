import type { FastifyBaseLogger } from "fastify";
import type { MppConfig, X402Config } from "../../../config.ts";
import type { Database } from "../../../db/client.ts";
import { AppError } from "../../../lib/errors.ts";
import type { PaymentRemedy } from "../../../lib/payment-remedy.ts";
import {
  type AgentPaid,
  type PaymentBook,
  payIntoBalance,
  type RefundResult,
  refundBalance,
  retryOwedRefunds,
} from "./balances.ts";
import { mppPaymentBook } from "./mpp-payments.ts";
import { createMppRail } from "./mpp-rail.ts";
import type { PaidResource, PaymentRail, RailName } from "./rail.ts";
import { x402PaymentBook, x402PaymentRail } from "./x402-payments.ts";
import { createX402Rail, type X402Rail } from "./x402-rail.ts";

export type { AgentPaid, RefundResult } from "./balances.ts";
export type { PaidResource, RailName } from "./rail.ts";

/**
 * Payment by agents without an account (issues 30 and 40, docs/decisions/052, 070): every enabled
 * rail (x402, MPP) is offered on one 402, the credential a retry carries is paid into its payer's
 * balance (balances.ts), and the call then runs as an ordinary wallet call of the payer's
 * account-less user. The gateway sees rails by name only: nothing here is x402's.
 */
export interface AgentPayments {
  /** The enabled rails' names, in the order they are offered. */
  readonly rails: readonly RailName[];
  /** The credential the request carries, and its rail (none: the request pays with nothing). */
  credentialOf(headers: Record<string, unknown>): { rail: RailName; credential: string } | undefined;
  /** The 402 of a paid call without credentials: every rail's challenge at once, and their offers in the remedy. */
  challenge(resource: PaidResource): Promise<AppError>;
  /** What a 402's remedy says of the rails for a call at this price. */
  offers(priceCents: number): Pick<PaymentRemedy, "x402" | "mpp">;
  /** Verifies, settles and credits a payment to its payer's balance (402 / 503 when it cannot). */
  pay(
    paid: { rail: RailName; credential: string },
    resource: PaidResource & { applicationId: string },
  ): Promise<AgentPaid>;
  /** Gives an account-less payer's balance back on its rail, or records it owed. */
  refund(payerUserId: string, log: FastifyBaseLogger): Promise<RefundResult>;
  /** The background sweep: settlements whose outcome was unknown are resolved. */
  sweep(log: FastifyBaseLogger): Promise<number>;
}

export function createAgentPayments(
  db: Database,
  config: { x402?: X402Config; mpp?: MppConfig },
  options: { x402Rail?: X402Rail; mppRail?: PaymentRail } = {},
): AgentPayments | undefined {
  const enabled = new Map<RailName, { rail: PaymentRail; book: PaymentBook }>();
  if (config.x402) {
    const x402 = options.x402Rail ?? createX402Rail(config.x402);
    enabled.set("x402", { rail: x402PaymentRail(x402), book: x402PaymentBook(db, x402) });
  }
  if (config.mpp) {
    const mpp = options.mppRail ?? createMppRail(config.mpp);
    enabled.set("mpp", { rail: mpp, book: mppPaymentBook(db, mpp) });
  }
  if (enabled.size === 0) return undefined;
  const entryOf = (name: RailName) => {
    const entry = enabled.get(name);
    if (!entry) throw new Error(`the ${name} rail is off`);
    return entry;
  };
  const offers = (priceCents: number) =>
    Object.fromEntries([...enabled].map(([name, { rail }]) => [name, rail.offer(priceCents)])) as Pick<
      PaymentRemedy,
      "x402" | "mpp"
    >;
  /**
   * Every rail's challenge headers but `except`'s (a `www-authenticate` of several rails is joined).
   * A rail that cannot make its challenge now (x402's facilitator unreachable) is left out while
   * another can be offered; when none can, the first failure is the answer (503).
   */
  const challengeHeaders = async (resource: PaidResource, except?: RailName) => {
    const headers: Record<string, string> = {};
    const failures: unknown[] = [];
    let offered = 0;
    for (const [name, { rail }] of enabled) {
      if (name === except) continue;
      const challenge = await rail.challenge(resource).catch((error: unknown) => {
        failures.push(error);
        return undefined;
      });
      if (!challenge) continue;
      offered += 1;
      for (const [header, value] of Object.entries(challenge))
        headers[header] = headers[header] ? `${headers[header]}, ${value}` : value;
    }
    if (offered === 0 && failures.length > 0) throw failures[0];
    return headers;
  };
  const names = [...enabled.keys()];
  return {
    rails: names,
    credentialOf(headers) {
      for (const [name, { rail }] of enabled) {
        const credential = rail.credentialOf(headers);
        if (credential) return { rail: name, credential };
      }
      return undefined;
    },
    async challenge(resource) {
      return new AppError(
        "payment_required",
        `This call costs ${resource.priceCents} cents: call it with an API key, or pay for it without an account (${names.join(" or ")}; the 402's headers hold the requirements). What you pay goes to your balance, and the call is paid from it.`,
        {
          headers: await challengeHeaders(resource),
          remedy: { missing: "payment", price_cents: resource.priceCents, ...offers(resource.priceCents) },
        },
      );
    },
    offers,
    async pay(paid, resource) {
      const { rail, book } = entryOf(paid.rail);
      try {
        return await payIntoBalance(db, rail, book, paid.credential, resource);
      } catch (error) {
        // A refusal offers the other rails too: the agent may hold a way to pay by one of them.
        if (error instanceof AppError && error.code === "payment_required" && enabled.size > 1) {
          const others = await challengeHeaders(resource, paid.rail);
          for (const [header, value] of Object.entries(others)) {
            const current = error.headers?.[header];
            error.headers = { ...error.headers, [header]: current ? `${current}, ${value}` : value };
          }
        }
        throw error;
      }
    },
    refund: (payerUserId, log) => refundBalance(db, enabled, payerUserId, log),
    async sweep(log) {
      let ended = 0;
      for (const { book } of enabled.values()) ended += await book.sweep(log);
      // Refunds whose rail's answer was lost are asked again with the same key.
      ended += await retryOwedRefunds(db, enabled, log);
      return ended;
    },
  };
}
