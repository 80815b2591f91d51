import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import { DEBT, lockAccounts, lockedBalance } from "./debts.ts";
import { accountFor, postTransaction } from "./postings.ts";

/** The most calls one sweep takes the model cost of (the rest wait for the next sweep). */
const SWEEP_CALLS = 5_000;

/**
 * Takes from creators' earnings the model cost their calls' prices did not pay (issue 17,
 * docs/decisions/026): since decision 062 only a call a plan covered, the part of a paid call's
 * cost above its creator's share, and calls recorded before 062. The owner's own calls, Test
 * Prompt, evals and embedded calls prepay their model cost from the creator's wallet instead
 * (call-payment/model-cost-holds.ts), which marks their invocations posted, so they never come
 * here. A paid call's cost comes out of its price when its hold settles (holds.ts). One
 * transaction marks the calls and posts, per creator, earnings → model_cost; what the earnings
 * cannot cover becomes the creator's debt (their paid calls are refused until a top-up settles
 * it: debts.ts). A call is marked and posted together, so a crash or a second process (the calls
 * are locked, others skip them) never takes a cost twice nor loses one. Answers how many calls.
 */
export async function postOutstandingModelCosts(db: Database): Promise<number> {
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    const owed = await queryRows<{ owner_id: string; amount: string; calls: number }>(
      t,
      sql`with due as (
            select i.id, i.created_at, a.owner_id, i.model_cost_micros - i.model_cost_deducted_micros as amount
            from invocations i join applications a on a.id = i.application_id
            where i.model_cost_micros > i.model_cost_deducted_micros and i.model_cost_posted_at is null
            order by i.id limit ${SWEEP_CALLS}
            for update of i skip locked
          ), marked as (
            update invocations set model_cost_posted_at = now() from due
            where invocations.id = due.id and invocations.created_at = due.created_at
            returning due.owner_id, due.amount
          )
          select owner_id, sum(amount)::text as amount, count(*)::int as calls
          from marked group by owner_id order by owner_id`,
    );
    let calls = 0;
    for (const creator of owed) {
      calls += creator.calls;
      await takeFromEarnings(t, creator.owner_id, Number(creator.amount), creator.calls);
    }
    return calls;
  });
}

async function takeFromEarnings(tx: Database, creatorId: string, amount: number, calls: number) {
  const [earnings, debt, modelCost] = await Promise.all([
    accountFor(tx, "earnings", creatorId),
    accountFor(tx, DEBT, creatorId),
    accountFor(tx, "model_cost", null),
  ]);
  await lockAccounts(tx, [earnings, debt, modelCost]);
  const fromEarnings = Math.min(amount, Math.max(0, await lockedBalance(tx, earnings)));
  await postTransaction(tx, {
    kind: "model_cost",
    reference: randomUUID(),
    description: `Model cost of ${calls === 1 ? "1 call" : `${calls} calls`} not paid by a price`,
    entries: [
      { accountId: earnings, amountMicros: -fromEarnings },
      { accountId: debt, amountMicros: fromEarnings - amount },
      { accountId: modelCost, amountMicros: amount },
    ].filter((entry) => entry.amountMicros !== 0),
  });
}
