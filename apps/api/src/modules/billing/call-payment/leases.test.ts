import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { afterEach, expect, it } from "vitest";
import { holds, invocations, ledgerTransactions } from "../../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../../test/caller.ts";
import { createTestDatabase } from "../../../test/database.ts";
import { modelCostTaken } from "../../../test/model-cost.ts";
import { expectReconciled } from "../../../test/reconciled.ts";
import { startTestServer } from "../../../test/server.ts";
import { useCaller, useVendorServer } from "../../../test/use-test-server.ts";
import { balancesOf, walletBalances } from "../balances.ts";
import { centsToMicros } from "../money.ts";
import { accountFor } from "../postings.ts";
import { reconcile } from "../reconcile.ts";
import { LEASE_CALLS, LeaseBook } from "./leases.ts";

/**
 * Wallet leases (leases.ts, docs/decisions/018) through the real HTTP path and database: a
 * lease's calls are each charged exactly once, the unspent rest goes back to the wallet, a plan
 * takes over from a lease at once, and a closing server gives its leases back, even one it was
 * still taking.
 */

const PRICE = 10;
const env = {
  OPENAI_API_KEY: "sk-test",
  GATEWAY_RATE_LIMIT_PER_MINUTE: "100000",
  PLATFORM_FEE_PERCENT: "10",
};
const { server, vendor } = useVendorServer(env);
const creator = useCaller(server, "Seller");
afterEach(async () => {
  vendor.set({ kind: "echo" });
  await expectReconciled(server.database.db);
});

async function paidApp(owner = creator, price = PRICE) {
  const { body: app } = await owner.api("POST", "/api/app/", {
    body: { name: "Leased", visibility: "public", price_cents: price },
  });
  await owner.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  await owner.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  return app as { slug: string; id: string };
}
const call = (caller: Caller, slug: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, { body: { inputs: { query: "hi" } } });
const userIdOf = async (caller: Caller) =>
  (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;

/** An app's holds, their amounts in cents (a hold is a whole number of prices). */
const holdsOf = (applicationId: string) =>
  server.database.db
    .select({
      amount: sql<number>`(${holds.amountMicros} / 10000)::int`,
      settled: sql<number>`(${holds.settledMicros} / 10000)::int`,
      status: holds.status,
    })
    .from(holds)
    .where(eq(holds.applicationId, applicationId))
    // Oldest first: PostgreSQL returns rows in no set order once they were updated.
    .orderBy(holds.createdAt);

it("pays a run of calls from a few growing leases, charges each call once, and gives the rest back when the calls stop", async () => {
  const app = await paidApp();
  const consumer = await createCaller(server.baseUrl, "Regular");
  await fundWallet(consumer, 5_000);
  const consumerId = await userIdOf(consumer);

  const CALLS = 40;
  for (let i = 0; i < CALLS; i++) expect((await call(consumer, app.slug)).status).toBe(200);
  // Mid-run some money may be held by the current lease; none of it is lost.
  const during = await walletBalances(server.database.db, consumerId);
  expect(during.wallet + during.held).toBe(centsToMicros(5_000 - CALLS * PRICE));

  expect(await settledWallet(consumer)).toMatchObject({
    balance_micros: (5_000 - CALLS * PRICE) * 10_000,
    held_micros: 0,
  });
  // One hold of one call, then leases of 2, 4, 8, 16, 32 calls: far fewer holds than calls. The
  // last one closes once its calls stop (its rest back, its calls posted).
  await expect.poll(async () => (await holdsOf(app.id)).filter((l) => l.status === "held")).toEqual([]);
  const leases = await holdsOf(app.id);
  expect(leases.length).toBeLessThanOrEqual(Math.ceil(Math.log2(CALLS)) + 1);
  expect(leases[0]).toMatchObject({ amount: PRICE, settled: PRICE, status: "settled" });
  expect(Math.max(...leases.map((l) => l.amount))).toBeGreaterThan(PRICE);
  expect(Math.max(...leases.map((l) => l.amount))).toBeLessThanOrEqual(LEASE_CALLS * PRICE);
  expect(leases.reduce((sum, l) => sum + l.settled, 0)).toBe(CALLS * PRICE);
  // A large lease's successor is taken ahead, while a quarter of it is left: the lease of 32
  // calls existed before the calls had spent the 1 + 2 + 4 + 8 + 16 = 31 prices before it.
  const [ahead] = await server.database.db
    .select({ created: holds.createdAt })
    .from(holds)
    .where(sql`${holds.applicationId} = ${app.id} and ${holds.amountMicros} = ${centsToMicros(32 * PRICE)}`);
  if (!ahead) throw new Error("expected a lease of 32 calls");
  const [before] = await server.database.db
    .select({ n: sql<number>`count(*)::int` })
    .from(invocations)
    .where(sql`${invocations.applicationId} = ${app.id} and ${invocations.createdAt} < ${ahead.created}`);
  expect(before?.n).toBeLessThan(31);
  expect(before?.n).toBeGreaterThanOrEqual(24);

  // Each call names the lease it was paid from; each lease's close posted one settle transaction
  // of exactly its calls, and the creator earned them.
  const paid = await server.database.db
    .select({ holdId: invocations.holdId, charged: invocations.chargedCents })
    .from(invocations)
    .where(eq(invocations.applicationId, app.id));
  expect(paid.every((p) => p.charged === PRICE && p.holdId !== null)).toBe(true);
  const settles = await server.database.db
    .select({ description: ledgerTransactions.description, calls: holds.calls })
    .from(ledgerTransactions)
    .innerJoin(holds, sql`${holds.id}::text = ${ledgerTransactions.reference}`)
    .where(and(eq(holds.applicationId, app.id), eq(ledgerTransactions.kind, "settle")));
  expect(settles).toHaveLength(leases.filter((l) => l.settled > 0).length);
  expect(settles.reduce((sum, s) => sum + s.calls, 0)).toBe(CALLS);
  expect(settles.every((s) => s.description === described(s.calls))).toBe(true);
  expect((await reconcile(server.database.db)).mismatchedHolds).toEqual([]);
  const creatorId = await userIdOf(creator);
  expect((await balancesOf(server.database.db, creatorId)).earnings).toBeGreaterThanOrEqual(
    centsToMicros(CALLS * (PRICE - 1)) - (await modelCostTaken(server.database.db, creatorId)),
  );
});

it("never lets a lease outspend a small wallet, and answers 402 once the wallet is spent", async () => {
  const app = await paidApp(creator, 25);
  const consumer = await createCaller(server.baseUrl, "Thrifty");
  await fundWallet(consumer, 180);

  const statuses: number[] = [];
  for (let i = 0; i < 10; i++) statuses.push((await call(consumer, app.slug)).status);
  expect(statuses).toEqual([...Array(7).fill(200), 402, 402, 402]);
  const refused = await call(consumer, app.slug);
  expect(refused.body.message).toContain("your wallet has $0.05 available");
  expect(await settledWallet(consumer)).toMatchObject({ balance_micros: 50_000, held_micros: 0 });
});

it("gives a failed call's price back, and charges nothing for it", async () => {
  const app = await paidApp();
  const consumer = await createCaller(server.baseUrl, "Unlucky");
  await fundWallet(consumer, 1_000);
  for (let i = 0; i < 5; i++) expect((await call(consumer, app.slug)).status).toBe(200);
  vendor.set({ kind: "status", status: 500, message: "vendor down" });
  for (let i = 0; i < 3; i++) expect((await call(consumer, app.slug)).status).toBe(502);
  vendor.set({ kind: "echo" });
  expect((await call(consumer, app.slug)).status).toBe(200);
  expect(await settledWallet(consumer)).toMatchObject({
    balance_micros: (1_000 - 6 * PRICE) * 10_000,
    held_micros: 0,
  });
  const [row] = await server.database.db
    .select({ charged: sql<number>`sum(${invocations.chargedCents})::int`, n: sql<number>`count(*)::int` })
    .from(invocations)
    .where(eq(invocations.applicationId, app.id));
  expect(row).toEqual({ charged: 6 * PRICE, n: 9 });
});

it("switches to a new plan's included calls at once, though a lease of the wallet is open", async () => {
  const app = await paidApp();
  const plan = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
    body: { name: "Pro", price_cents: 100, description: "Regulars", features: {}, included_calls: 5 },
  });
  expect(plan.status).toBe(201);
  const consumer = await createCaller(server.baseUrl, "Convert");
  await fundWallet(consumer, 2_000);
  const consumerId = await userIdOf(consumer);
  // A run of calls leaves a lease with money unspent.
  for (let i = 0; i < 12; i++) expect((await call(consumer, app.slug)).status).toBe(200);
  const open = (await holdsOf(app.id)).filter((h) => h.status === "held");
  expect(open).toHaveLength(1);
  expect(open[0]?.amount).toBeGreaterThan(open[0]?.settled ?? 0);

  const subscribed = await consumer.api("POST", `/api/app/${app.slug}/subscriptions/`, {
    body: { package_id: plan.body.id },
  });
  expect(subscribed.status).toBe(201);
  const walletAfterPlan = await walletBalances(server.database.db, consumerId);

  // The next calls are the plan's, not the wallet's: a call that sets off on the lease is counted
  // against the plan when it is recorded (decision 025), its price goes back to the lease.
  for (let i = 0; i < 3; i++) expect((await call(consumer, app.slug)).status).toBe(200);
  const [sub] = (await consumer.api("GET", `/api/app/${app.slug}/subscriptions/`)).body;
  expect(sub.calls_used).toBe(3);
  const now = await walletBalances(server.database.db, consumerId);
  expect(now.wallet + now.held).toBe(walletAfterPlan.wallet + walletAfterPlan.held);
  const [charged] = await server.database.db
    .select({ n: sql<number>`count(*)::int` })
    .from(invocations)
    .where(sql`${invocations.applicationId} = ${app.id} and ${invocations.chargedCents} > 0`);
  expect(charged?.n).toBe(12);
  // The lease stayed open under the plan and closes when it idles, giving its rest back.
  expect(await settledWallet(consumer)).toMatchObject({
    balance_micros: (2_000 - 100 - 12 * PRICE) * 10_000,
    held_micros: 0,
  });
});

it("gives every lease back when the server closes", async () => {
  // A server of its own on a database of its own, reopened after the close (as a restart would).
  const ownDb = await createTestDatabase();
  const own = await startTestServer(ownDb, { env: { ...env, OPENAI_BASE_URL: vendor.baseUrl } });
  try {
    const seller = await createCaller(own.baseUrl, "Closing Seller");
    const app = await paidApp(seller);
    const consumer = await createCaller(own.baseUrl, "Closing Buyer");
    await fundWallet(consumer, 3_000);
    const consumerId = await userIdOf(consumer);
    const burst = await Promise.all(Array.from({ length: 20 }, () => call(consumer, app.slug)));
    expect(burst.every((answer) => answer.status === 200)).toBe(true);
    // The burst's last lease has money left (leases of 1, 2, 4, 8, 16 calls cover 31).
    const before = await walletBalances(own.database.db, consumerId);
    expect(before.held).toBeGreaterThan(0);
    expect(before.wallet + before.held).toBe(centsToMicros(3_000 - 20 * PRICE));
    await own.stop();
    const reopened = await ownDb.open();
    try {
      // The ledger itself: every lease closed and posted, nothing left held.
      expect(await balancesOf(reopened.db, consumerId)).toMatchObject({
        wallet: centsToMicros(3_000 - 20 * PRICE),
        held: 0,
      });
      await expectReconciled(reopened.db);
    } finally {
      await reopened.close();
    }
  } finally {
    await own.stop().catch(() => {});
    await ownDb.destroy();
  }
});

it("closes a lease still being taken ahead when its book closes", async () => {
  const app = await paidApp();
  const consumer = await createCaller(server.baseUrl, "Last Minute");
  await fundWallet(consumer, 1_000);
  const db = server.database.db;
  const payerId = await userIdOf(consumer);
  const book = new LeaseBook(db);
  const request = {
    payerId,
    applicationId: app.id,
    creatorId: await userIdOf(creator),
    priceCents: PRICE,
    deadlineSeconds: 60,
    topUpUrl: "http://example.test/wallet",
    tryIncluded: true,
    callId: randomUUID(),
    accounts: {
      wallet: await accountFor(db, "wallet", payerId),
      held: await accountFor(db, "held", payerId),
    },
  };
  // Leases of 1, 2 and 4 calls used up, then 6 calls from the lease of 8: a quarter of it is
  // left, so the lease of 16 is being taken ahead when the book closes.
  for (let i = 0; i < 1 + 2 + 4 + 5; i++) await (await book.pay(request)).end?.("charged");
  const sixth = await book.pay(request);
  await sixth.end?.("charged");
  await book.close();

  const open = await db
    .select({ amount: holds.amountMicros })
    .from(holds)
    .where(and(eq(holds.applicationId, app.id), eq(holds.status, "held")));
  expect(open).toEqual([]);
  expect(
    await db.select({ amount: holds.amountMicros }).from(holds).where(eq(holds.applicationId, app.id)),
  ).toContainEqual({
    amount: centsToMicros(16 * PRICE),
  });
  expect(await balancesOf(db, payerId)).toMatchObject({ wallet: centsToMicros(1_000), held: 0 });
});

/** A lease's settle transaction, as its close describes it. */
function described(calls: number) {
  return calls === 1 ? "1 paid call" : `${calls} paid calls`;
}
