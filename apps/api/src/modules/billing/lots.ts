import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";

/**
 * Wallet lots (docs/decisions/045): what a top-up's money paid for, found when it is refunded or
 * disputed by replaying its payer's wallet first-in first-out. Nothing is recorded on the paid
 * path: the ledger already orders every movement of a wallet (each posting locks the wallet row
 * before its entries take their ids, so entry ids are in commit order), and each hold says which
 * creator its settled calls paid, with the platform's fee and the model cost.
 *
 * The replay, over the wallet's entries in id order:
 * - a credit (a top-up, a payment credited to the wallet, money given back) opens a lot, keyed by
 *   its transaction's reference (a payment's id for a card payment); money a won dispute gives
 *   back (`reversal`, reference `<payment id>:…`) goes back into that payment's lot;
 * - a hold takes from the oldest lots that still have money; its release returns the unspent
 *   tail to the lots it came from; what it settled is spent, by its creator;
 * - a reversal taking back a payment takes from that payment's lot first; any other debit (a
 *   debt settled from the wallet) takes from the oldest lots.
 * A hold still open has spent nothing yet on the ledger: its money is in flight.
 */

export interface LotSpend {
  creatorId: string;
  /** What the lot paid to this creator's calls: earnings + fee + model cost. */
  spent: number;
  earnings: number;
  fee: number;
  modelCost: number;
}

export interface Lot {
  /** Still in the wallet. */
  remaining: number;
  /** Set aside by holds still open (their calls are not posted yet). */
  inFlight: number;
  /** Spent on closed holds' calls, by creator (creator id order). */
  spends: LotSpend[];
}

type Slice = { lot: string; amount: number };

/** Replays the payer's wallet and answers the lot of this key (a payment's id). */
export async function replayLot(tx: Database, walletId: string, lotKey: string): Promise<Lot> {
  const rows = await queryRows<{ amount: string; kind: string; reference: string }>(
    tx,
    sql`select e.amount_micros::text as amount, t.kind, t.reference
        from ledger_entries e join ledger_transactions t on t.id = e.transaction_id
        where e.account_id = ${walletId}::uuid order by e.id`,
  );
  const order: string[] = [];
  const remaining = new Map<string, number>();
  const holdSlices = new Map<string, Slice[]>();
  const credit = (lot: string, amount: number) => {
    if (!remaining.has(lot)) order.push(lot);
    remaining.set(lot, (remaining.get(lot) ?? 0) + amount);
  };
  const takeOldest = (amount: number, into?: Slice[]) => {
    let left = amount;
    for (const lot of order) {
      if (left <= 0) break;
      const has = remaining.get(lot) ?? 0;
      if (has <= 0) continue;
      const taken = Math.min(has, left);
      remaining.set(lot, has - taken);
      into?.push({ lot, amount: taken });
      left -= taken;
    }
  };
  for (const row of rows) {
    const amount = Number(row.amount);
    if (row.kind === "hold" && amount < 0) {
      const slices: Slice[] = [];
      takeOldest(-amount, slices);
      holdSlices.set(row.reference, slices);
    } else if (row.kind === "release" && amount > 0) {
      // The unspent tail goes back where it came from, last slice first.
      const slices = holdSlices.get(row.reference) ?? [];
      let left = amount;
      for (let i = slices.length - 1; i >= 0 && left > 0; i--) {
        const slice = slices[i] as Slice;
        const back = Math.min(slice.amount, left);
        slice.amount -= back;
        remaining.set(slice.lot, (remaining.get(slice.lot) ?? 0) + back);
        left -= back;
      }
      if (left > 0) credit(`release:${row.reference}`, left);
    } else if (amount > 0) {
      const payment = row.kind === "reversal" ? row.reference.split(":")[0] : undefined;
      credit(payment && remaining.has(payment) ? payment : row.reference, amount);
    } else if (amount < 0) {
      let left = -amount;
      const payment = row.kind === "reversal" ? row.reference.split(":")[0] : undefined;
      if (payment && remaining.has(payment)) {
        const taken = Math.min(remaining.get(payment) ?? 0, left);
        remaining.set(payment, (remaining.get(payment) ?? 0) - taken);
        left -= taken;
      }
      takeOldest(left);
    }
  }

  // What the lot's holds became: open ones are in flight; closed ones spent what they settled.
  const fromLot = new Map<string, number>();
  for (const [holdId, slices] of holdSlices) {
    const amount = slices.filter((s) => s.lot === lotKey).reduce((sum, s) => sum + s.amount, 0);
    if (amount > 0) fromLot.set(holdId, amount);
  }
  const lot: Lot = { remaining: remaining.get(lotKey) ?? 0, inFlight: 0, spends: [] };
  if (fromLot.size === 0) return lot;
  const holdRows = await queryRows<{
    id: string;
    status: string;
    creator_id: string;
    settled: string;
    fee: string;
    model_cost: string;
  }>(
    tx,
    sql`select id::text, status, creator_id::text, settled_micros::text as settled, fee_micros::text as fee,
          model_cost_micros::text as model_cost
        from holds where id in (${sql.join(
          [...fromLot.keys()].map((id) => sql`${id}::uuid`),
          sql`, `,
        )})`,
  );
  const byCreator = new Map<string, LotSpend>();
  for (const hold of holdRows) {
    const amount = fromLot.get(hold.id) ?? 0;
    if (hold.status === "held") {
      lot.inFlight += amount;
      continue;
    }
    const settled = Number(hold.settled);
    if (settled <= 0) continue;
    // This lot's part of the hold's fee and model cost, in proportion (floored: the creator's
    // earnings part takes the sub-micro rest, so the three add up to what the lot paid).
    const fee = mulDiv(amount, Number(hold.fee), settled);
    const modelCost = mulDiv(amount, Number(hold.model_cost), settled);
    const spend = byCreator.get(hold.creator_id) ?? {
      creatorId: hold.creator_id,
      spent: 0,
      earnings: 0,
      fee: 0,
      modelCost: 0,
    };
    spend.spent += amount;
    spend.fee += fee;
    spend.modelCost += modelCost;
    spend.earnings += amount - fee - modelCost;
    byCreator.set(hold.creator_id, spend);
  }
  lot.spends = [...byCreator.values()].sort((a, b) => (a.creatorId < b.creatorId ? -1 : 1));
  return lot;
}

/**
 * Splits `total` across weights in proportion, exactly: each share floored, and the micros left
 * over given one each to the largest remainders (ties by position), so the shares add up to
 * `total` and the same inputs always give the same shares. Weights must be non-negative integers
 * (a zero sum gives all zeros).
 */
export function splitExactly(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum <= 0 || total <= 0) return weights.map(() => 0);
  const big = BigInt(total);
  const bigSum = BigInt(sum);
  const shares = weights.map((w) => Number((big * BigInt(w)) / bigSum));
  const rests = weights.map((w, i) => ({ i, rest: (big * BigInt(w)) % bigSum }));
  let left = total - shares.reduce((a, b) => a + b, 0);
  rests.sort((a, b) => (b.rest > a.rest ? 1 : b.rest < a.rest ? -1 : a.i - b.i));
  for (const { i } of rests) {
    if (left <= 0) break;
    shares[i] = (shares[i] ?? 0) + 1;
    left -= 1;
  }
  return shares;
}

/** floor(a × b / c) without losing precision past 2^53. */
export function mulDiv(a: number, b: number, c: number): number {
  return Number((BigInt(a) * BigInt(b)) / BigInt(c));
}
