import { eq, sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { type Database, queryRows } from "../../db/client.ts";
import { holds } from "../../db/schema/index.ts";
import { legacyAccount, legacyPayerCreatorApp, legacyPost, legacyTopUp } from "../../test/legacy-ledger.ts";
import { useDatabaseBefore } from "../../test/upgrade-database.ts";
import { balancesOf } from "./balances.ts";
import { closeHold } from "./call-payment/holds.ts";
import { centsToMicros } from "./money.ts";
import { reconcile } from "./reconcile.ts";

// Migration 0015 (decision 020) on a database written by the previous version: a lease still open
// at the upgrade had its calls posted one by one already, so its close must not post them again.

const PRICE = 10;
const FEE = 1;

const upgraded = useDatabaseBefore("0015_lease_capture");

it("shrinks a lease open at the upgrade to its unspent rest, so its close posts no call twice", async () => {
  const { db } = upgraded;
  // The previous version's state: a lease of 10 calls, 3 of them settled one by one.
  const { payer, creator, app } = await legacyPayerCreatorApp(db, PRICE);
  await legacyTopUp(db, payer.id, 1_000, "upgrade");
  const wallet = await legacyAccount(db, "wallet", payer.id);
  const held = await legacyAccount(db, "held", payer.id);
  const earnings = await legacyAccount(db, "earnings", creator.id);
  const platform = await legacyAccount(db, "platform_fee", null);
  const [lease] = await queryRows<{ id: string }>(
    db,
    sql`insert into holds (payer_id, application_id, creator_id, amount_cents, settled_cents, expires_at)
        values (${payer.id}, ${app.id}, ${creator.id}, ${10 * PRICE}, ${3 * PRICE}, now() + interval '1 hour')
        returning id`,
  );
  if (!lease) throw new Error("expected a hold");
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await legacyPost(t, {
      kind: "hold",
      reference: lease.id,
      description: "Held for paid calls",
      entries: [
        { accountId: wallet, cents: -10 * PRICE },
        { accountId: held, cents: 10 * PRICE },
      ],
    });
    for (let call = 0; call < 3; call++)
      await legacyPost(t, {
        kind: "settle",
        reference: `invocation-${call}`,
        description: "Paid call",
        entries: [
          { accountId: held, cents: -PRICE },
          { accountId: earnings, cents: PRICE - FEE },
          { accountId: platform, cents: FEE },
        ],
      });
  });

  await upgraded.upgrade();

  const [migrated] = await db.select().from(holds).where(eq(holds.id, lease.id));
  // Migration 0015 shrank it to its unspent rest; 0020 counts it in micro-dollars.
  expect(migrated).toMatchObject({
    amountMicros: centsToMicros(7 * PRICE),
    settledMicros: 0,
    feeMicros: 0,
    calls: 0,
    status: "held",
  });
  expect((await reconcile(db)).ok).toBe(true);
  // Closed with nothing more spent: the 7 unspent prices go back, the 3 settled calls stay paid once.
  expect(await closeHold(db, lease.id)).toBe(true);
  expect(await balancesOf(db, payer.id)).toMatchObject({ wallet: centsToMicros(970), held: 0 });
  expect((await balancesOf(db, creator.id)).earnings).toBe(centsToMicros(3 * (PRICE - FEE)));
  const report = await reconcile(db);
  expect(report.mismatchedHolds).toEqual([]);
  expect(report.ok).toBe(true);
});
