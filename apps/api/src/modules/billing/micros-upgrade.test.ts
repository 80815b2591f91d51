import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { legacyAccount, legacyPayerCreatorApp, legacyPost, legacyTopUp } from "../../test/legacy-ledger.ts";
import { useDatabaseBefore } from "../../test/upgrade-database.ts";
import { balancesOf } from "./balances.ts";
import { closeHold } from "./call-payment/holds.ts";
import { centsToMicros } from "./money.ts";
import { reconcile } from "./reconcile.ts";

// Migration 0020 (issue 17) on a database the previous version wrote in cents: every balance,
// entry and hold is the same money in micro-dollars, each call's fee adds up to its hold's, and a
// lease open at the upgrade closes exactly.

const upgraded = useDatabaseBefore("0020_ledger_micros");

it("converts balances, entries, holds and calls' fees exactly, and the ledger still reconciles", async () => {
  const { db } = upgraded;
  const { payer, creator, app } = await legacyPayerCreatorApp(db, 7);
  await legacyTopUp(db, payer.id, 1_000, "before-0020");
  const wallet = await legacyAccount(db, "wallet", payer.id);
  const held = await legacyAccount(db, "held", payer.id);
  // An open lease of 10 calls at 7 cents, 3 of them spent with a fee of 1 cent each (7 × 10%,
  // rounded per call as the previous version did), and their invocations.
  const [lease] = await queryRows<{ id: string }>(
    db,
    sql`insert into holds (payer_id, application_id, creator_id, amount_cents, settled_cents, fee_cents, calls, expires_at)
        values (${payer.id}, ${app.id}, ${creator.id}, 70, 21, 3, 3, now() + interval '1 hour') returning id`,
  );
  if (!lease) throw new Error("expected a hold");
  await legacyPost(db, {
    kind: "hold",
    reference: lease.id,
    description: "Held for paid calls",
    entries: [
      { accountId: wallet, cents: -70 },
      { accountId: held, cents: 70 },
    ],
  });
  await queryRows(
    db,
    sql`insert into invocations (application_id, caller_user_id, mode, status, latency_ms, charged_cents, hold_id)
        select ${app.id}, ${payer.id}, 'completion', 'success', 10, 7, ${lease.id} from generate_series(1, 3)`,
  );

  await upgraded.upgrade();

  expect(await balancesOf(db, payer.id)).toEqual({
    wallet: centsToMicros(930),
    held: centsToMicros(70),
    earnings: 0,
  });
  const [hold] = await queryRows<{ amount: string; settled: string; fee: string }>(
    db,
    sql`select amount_micros::text as amount, settled_micros::text as settled, fee_micros::text as fee
        from holds where id = ${lease.id}`,
  );
  expect(hold).toEqual({ amount: "700000", settled: "210000", fee: "30000" });
  const [fees] = await queryRows<{ total: string }>(
    db,
    sql`select sum(fee_micros)::text as total from invocations where hold_id = ${lease.id}`,
  );
  expect(fees?.total).toBe("30000");
  const [entries] = await queryRows<{ total: string; wallet: string }>(
    db,
    sql`select sum(amount_micros)::text as total,
          sum(amount_micros) filter (where account_id = ${wallet})::text as wallet from ledger_entries`,
  );
  expect(entries).toEqual({ total: "0", wallet: String(centsToMicros(930)) });
  expect((await reconcile(db)).ok).toBe(true);

  // The lease closes in the new unit: 21 cents spent, 3 of them the fee, the rest back.
  expect(await closeHold(db, lease.id)).toBe(true);
  expect(await balancesOf(db, payer.id)).toEqual({ wallet: centsToMicros(979), held: 0, earnings: 0 });
  expect((await balancesOf(db, creator.id)).earnings).toBe(centsToMicros(18));
  expect((await reconcile(db)).ok).toBe(true);
});
