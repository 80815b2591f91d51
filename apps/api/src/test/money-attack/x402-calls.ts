import { sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import { type Database, queryRows } from "../../db/client.ts";
import { sweepX402Payments } from "../../modules/billing/agent-payments/x402-payments.ts";
import type { ReceivedTransfer } from "../../modules/billing/agent-payments/x402-rail.ts";
import { createX402Rail } from "../../modules/billing/agent-payments/x402-rail.ts";
import type { X402Facilitator } from "../x402-facilitator.ts";

/**
 * The x402 rail's chain in the money attack (issue 30, decision 064; the agents themselves are in
 * agent-calls.ts): the sweep of the settlements the facilitator's failures and the kills left
 * open, the transfers the chain shows to the receiving address, and x402_clearing.
 */

/** The attack's rail, as the servers have it (the loopback facilitator and its chain). */
function attackRail(facilitator: X402Facilitator) {
  const env = facilitator.env();
  return createX402Rail({
    payTo: env.X402_PAY_TO as `0x${string}`,
    facilitatorUrl: env.X402_FACILITATOR_URL ?? "",
    network: env.X402_NETWORK as `${string}:${string}`,
    asset: env.X402_ASSET as `0x${string}`,
    assetName: "USDC",
    assetVersion: "2",
    maxTimeoutSeconds: 300,
    rpcUrl: env.X402_RPC_URL,
  });
}

/**
 * After the servers stopped: what the facilitator broadcast is mined (or reverts), and what their
 * kills and the facilitator's failures left verified or settling is ended by the sweep. Nothing is
 * broadcast any more, so an authorization the chain shows unused now never moves money: the sweep
 * may take it as expired.
 */
export async function sweepAfterAttack(db: Database, facilitator: X402Facilitator): Promise<number> {
  facilitator.mine();
  const rail = attackRail(facilitator);
  const log = pino({ level: "silent" }) as unknown as FastifyBaseLogger;
  let ended = 0;
  for (let round = 0; round < 5; round++) {
    const n = await sweepX402Payments(db, rail, log, {
      verifiedTtlSeconds: 0,
      settlingAfterSeconds: 0,
      expiryMarginSeconds: -86_400,
    });
    ended += n;
    if (n === 0) break;
  }
  return ended;
}

/** What the chain moved to the receiving address (for reconcile's comparison with x402_clearing). */
export async function x402TransfersAfterAttack(facilitator: X402Facilitator): Promise<ReceivedTransfer[]> {
  return (await attackRail(facilitator).transfersToPayTo()) ?? [];
}

/** What x402_clearing says came in, in micro-dollars (minus its balance). */
export async function x402Cleared(db: Database): Promise<number> {
  const [row] = await queryRows<{ balance: string }>(
    db,
    sql`select coalesce(sum(balance_micros), 0)::text as balance from ledger_accounts where kind = 'x402_clearing'`,
  );
  return 0 - Number(row?.balance ?? 0) || 0;
}

export interface X402PaymentRow {
  id: string;
  status: string;
  tx_hash: string | null;
  payer_user_id: string;
  payer: string;
  nonce: string;
  amount_micros: string;
}

export async function loadX402Payments(db: Database): Promise<X402PaymentRow[]> {
  return queryRows<X402PaymentRow>(
    db,
    sql`select x.id::text, x.status, x.tx_hash, x.payer_user_id::text, x.payer, x.nonce, x.amount_micros::text
        from x402_payments x`,
  );
}
