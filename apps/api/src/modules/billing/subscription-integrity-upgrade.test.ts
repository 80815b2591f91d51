import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { type Database, queryRows } from "../../db/client.ts";
import { legacyAccount, legacyPayerCreatorApp, legacyPost } from "../../test/legacy-ledger.ts";
import { useDatabaseBefore } from "../../test/upgrade-database.ts";
import { balancesOf } from "./balances.ts";
import { centsToMicros } from "./money.ts";
import { reconcile } from "./reconcile.ts";

// Migration 0018 (decision 023) on a database written by the previous version: concurrent
// subscribes left two live subscriptions of one consumer to one app (paid twice), and a plan
// payment was stranded by a plan withdrawn after it was paid.

const upgraded = useDatabaseBefore("0018_subscription_payment_integrity");

it("ends duplicate subscriptions with a refund, credits stranded plan payments, then enforces one per app", async () => {
  const { db } = upgraded;
  const { payer, creator, app } = await legacyPayerCreatorApp(db, 10);
  const [plan, withdrawn] = await queryRows<{ id: string }>(
    db,
    sql`insert into packages (application_id, name, price_cents, included_calls, is_active)
        values (${app.id}, 'Basic', 300, 5, true), (${app.id}, 'Gone', 300, 5, false) returning id`,
  );
  const wallet = await legacyAccount(db, "wallet", payer.id);
  const clearing = await legacyAccount(db, "clearing", null);
  const earnings = await legacyAccount(db, "earnings", creator.id);
  const platform = await legacyAccount(db, "platform_fee", null);
  await db.transaction((tx) =>
    legacyPost(tx as unknown as Database, {
      kind: "top_up",
      reference: "seed",
      description: "seed",
      entries: [
        { accountId: clearing, cents: -600 },
        { accountId: wallet, cents: 600 },
      ],
    }),
  );
  // The race: two subscribes, each paying from the wallet in the transaction creating its row.
  const subscribeOnce = () =>
    db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      await legacyPost(t, {
        kind: "subscription",
        reference: crypto.randomUUID(),
        description: "Plan 'Basic' for Old",
        entries: [
          { accountId: wallet, cents: -300 },
          { accountId: earnings, cents: 270 },
          { accountId: platform, cents: 30 },
        ],
      });
      const [row] = await queryRows<{ id: string }>(
        t,
        sql`insert into subscriptions (package_id, application_id, subscriber_id, status, current_period_start,
              current_period_end, calls_included)
            values (${plan?.id}, ${app.id}, ${payer.id}, 'active', now(), now() + interval '30 days', 5) returning id`,
      );
      return row?.id as string;
    });
  const older = await subscribeOnce();
  const newer = await subscribeOnce();
  await queryRows(
    db,
    sql`insert into payments (user_id, gateway, external_id, amount_cents, status, purpose, package_id)
        values (${payer.id}, 'sandbox', 'pi_stranded', 300, 'succeeded', 'subscription', ${withdrawn?.id})`,
  );

  await upgraded.upgrade();

  const rows = await queryRows<{ id: string; status: string; period_transaction_id: string | null }>(
    db,
    sql`select id, status, period_transaction_id from subscriptions order by created_at`,
  );
  expect(rows.map((row) => [row.id, row.status])).toEqual([
    [older, "canceled"],
    [newer, "active"],
  ]);
  expect(rows.every((row) => row.period_transaction_id !== null)).toBe(true);
  // The duplicate's 300 and the stranded 300 are back in the wallet; the creator keeps one period.
  expect(await balancesOf(db, payer.id)).toMatchObject({ wallet: centsToMicros(600) });
  expect(await balancesOf(db, creator.id)).toMatchObject({ earnings: centsToMicros(270) });
  const [stranded] = await queryRows<{ consumed_kind: string }>(
    db,
    sql`select consumed_kind from payments where external_id = 'pi_stranded'`,
  );
  expect(stranded?.consumed_kind).toBe("wallet");
  expect((await reconcile(db)).ok).toBe(true);
  await expect(
    queryRows(db, sql`update subscriptions set status = 'active' where id = ${older}`),
  ).rejects.toThrow();
});
