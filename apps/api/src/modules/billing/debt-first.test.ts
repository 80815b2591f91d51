import { readFile } from "node:fs/promises";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Database, type DatabaseHandle, queryRows } from "../../db/client.ts";
import { applications, payments, users } from "../../db/schema/index.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { PROVIDER_ACTOR } from "../admin/audit.ts";
import { closeHold, placeHold, sweepExpiredHolds } from "./call-payment/holds.ts";
import { DEBT } from "./debts.ts";
import { creditPaymentToWallet } from "./plan-payments.ts";
import { accountFor, postTransaction } from "./postings.ts";
import { reconcile } from "./reconcile.ts";
import { applyReversal } from "./reversals.ts";

/**
 * Money into a wallet pays its owner's debt first (decision 028: "a top-up pays it first, the
 * rest goes to your balance"), whatever brings it: a top-up, a lease's unspent rest released
 * (closed by its process, recalled, or swept), or a reversal that leaves other top-ups' money in
 * the wallet beside the debt it makes. A payer is never refused as in debt with money in their
 * wallet (the money attack's "402 with the price in the wallet", issue 30).
 */

let testDb: TestDatabase;
let handle: DatabaseHandle;
let db: Database;
let creator: string;
let appId: string;
let people = 0;
let intents = 0;

const PRICE = 25;
const CENT = 10_000;

beforeAll(async () => {
  testDb = await createTestDatabase();
  handle = await testDb.open();
  db = handle.db;
  creator = await user();
  const [app] = await db
    .insert(applications)
    .values({ ownerId: creator, name: "Debts", slug: "debts", type: "prompt", priceCents: PRICE })
    .returning({ id: applications.id });
  appId = app?.id ?? "";
});
afterEach(async () => {
  await expectReconciled(db);
});
afterAll(async () => {
  await handle?.close();
  await testDb?.destroy();
});

async function user(): Promise<string> {
  const name = `debtor-${++people}`;
  const [row] = await db
    .insert(users)
    .values({ issuer: "test", subject: name, username: name, email: `${name}@example.com` })
    .returning({ id: users.id });
  return row?.id ?? "";
}

/** A sandbox card top-up credited to the wallet, as the gateway's confirm does; its intent id. */
async function topUp(userId: string, cents: number): Promise<string> {
  const externalId = `pi_debt_${++intents}`;
  const [payment] = await db
    .insert(payments)
    .values({ userId, gateway: "sandbox", externalId, amountCents: cents, status: "succeeded" })
    .returning();
  if (!payment) throw new Error("no payment");
  await db.transaction((tx) => creditPaymentToWallet(tx as unknown as Database, payment, "Top-up"));
  return externalId;
}

const refund = (intent: string, cents: number) =>
  db.transaction((tx) =>
    applyReversal(tx as unknown as Database, {
      gateway: "sandbox",
      paymentIntentId: intent,
      fact: { kind: "refund", externalId: `re_${intent}_${cents}`, amountCents: cents },
      actor: PROVIDER_ACTOR("sandbox"),
      payoutHoldMs: 0,
    }),
  );

const lease = (payerId: string, cents: number) =>
  placeHold(db, {
    payerId,
    applicationId: appId,
    creatorId: creator,
    amountCents: PRICE,
    leaseCents: cents,
    ttlSeconds: 60,
    topUpUrl: "/wallet",
  });

async function money(userId: string) {
  const rows = await queryRows<{ kind: string; balance: string }>(
    db,
    sql`select kind, balance_micros::text as balance from ledger_accounts
        where owner_id = ${userId}::uuid and kind in ('wallet', 'held', 'debt')`,
  );
  const of = (kind: string) => Number(rows.find((row) => row.kind === kind)?.balance ?? 0);
  return { wallet: of("wallet"), held: of("held"), debt: of("debt") };
}

describe("money into the wallet of a payer in debt", () => {
  it("a lease's unspent rest, released when its process closes it, pays the debt before the wallet", async () => {
    const payer = await user();
    const intent = await topUp(payer, 100);
    const hold = await lease(payer, 100);
    expect(await money(payer)).toEqual({ wallet: 50 * CENT, held: 50 * CENT, debt: 0 });
    // The whole top-up refunded: its 50¢ still in the wallet, the 50¢ the lease holds is a debt.
    await refund(intent, 100);
    expect(await money(payer)).toEqual({ wallet: 0, held: 50 * CENT, debt: -50 * CENT });
    expect(await closeHold(db, hold)).toBe(true);
    expect(await money(payer)).toEqual({ wallet: 0, held: 0, debt: 0 });
  });

  it("a release larger than the debt pays it and leaves the rest in the wallet", async () => {
    const payer = await user();
    const intent = await topUp(payer, 100);
    const hold = await lease(payer, 100);
    await refund(intent, 70);
    // 50¢ from the wallet, 20¢ of the lease's 50¢ is owed.
    expect(await money(payer)).toEqual({ wallet: 0, held: 50 * CENT, debt: -20 * CENT });
    expect(await closeHold(db, hold)).toBe(true);
    expect(await money(payer)).toEqual({ wallet: 30 * CENT, held: 0, debt: 0 });
  });

  it("an expired lease the sweeper closes pays the debt first too", async () => {
    const payer = await user();
    const intent = await topUp(payer, 100);
    const hold = await lease(payer, 100);
    await refund(intent, 100);
    await db.execute(sql`update holds set expires_at = now() - interval '1 second' where id = ${hold}::uuid`);
    expect(await sweepExpiredHolds(db)).toBeGreaterThanOrEqual(1);
    expect(await money(payer)).toEqual({ wallet: 0, held: 0, debt: 0 });
  });

  it("a reversal that makes a debt while another top-up's money is in the wallet pays it from that money at once", async () => {
    const payer = await user();
    const first = await topUp(payer, 100);
    const hold = await lease(payer, 100);
    await topUp(payer, 40);
    expect(await money(payer)).toEqual({ wallet: 90 * CENT, held: 50 * CENT, debt: 0 });
    // The first top-up refunded: its 50¢ left in the wallet is taken back, its 50¢ in the lease
    // becomes a debt, which the second top-up's 40¢ pays as far as it goes.
    await refund(first, 100);
    expect(await money(payer)).toEqual({ wallet: 0, held: 50 * CENT, debt: -10 * CENT });
    expect(await closeHold(db, hold)).toBe(true);
    expect(await money(payer)).toEqual({ wallet: 40 * CENT, held: 0, debt: 0 });
  });

  it("the reconcile names a wallet holding money beside its owner's debt; the upgrade (0039) pays it from the wallet", async () => {
    const payer = await user();
    await topUp(payer, 100);
    const [debt, clearing] = [await accountFor(db, DEBT, payer), await accountFor(db, "clearing", null)];
    // Posted by hand, as no money path does any more: a debt of 10¢ beside the 100¢ in the wallet.
    await postTransaction(db, {
      kind: "reversal",
      reference: "test-debt",
      description: "test",
      entries: [
        { accountId: debt, amountMicros: -10 * CENT },
        { accountId: clearing, amountMicros: 10 * CENT },
      ],
    });
    const report = await reconcile(db);
    expect(report.walletsBesideDebts).toEqual([
      { ownerId: payer, walletMicros: 100 * CENT, debtMicros: -10 * CENT },
    ]);
    expect(report.ok).toBe(false);
    const upgrade = await readFile(
      new URL("../../db/migrations/0039_debts_paid_from_wallets.sql", import.meta.url),
      "utf8",
    );
    await db.execute(sql.raw(upgrade));
    expect(await money(payer)).toEqual({ wallet: 90 * CENT, held: 0, debt: 0 });
    // Run again (nothing beside a debt any more), it moves nothing.
    await db.execute(sql.raw(upgrade));
    expect(await money(payer)).toEqual({ wallet: 90 * CENT, held: 0, debt: 0 });
  });
});
