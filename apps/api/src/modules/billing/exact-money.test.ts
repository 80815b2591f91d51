import { sql } from "drizzle-orm";
import { beforeAll, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { postOutstandingModelCosts } from "./model-costs.ts";
import { centsToMicros } from "./money.ts";

// Issue 17: a 10% fee on a 5¢ call is half a cent, exactly; the model cost of each call comes out
// of the creator's share, exactly as recorded; the ledger sums to zero at the micro-dollar.

const CALLS = 1_000;
const PRICE = 5;

const { server } = useVendorServer({
  PLATFORM_FEE_PERCENT: "10",
  GATEWAY_RATE_LIMIT_PER_MINUTE: "100000",
});
const creator = useCaller(server, "Exact Creator");
const consumer = useCaller(server, "Exact Consumer");

beforeAll(async () => {
  await fundWallet(consumer, 6_000);
});

const totals = async () => {
  const [row] = await queryRows<Record<string, string>>(
    server.database.db,
    sql`select
          (select coalesce(sum(balance_micros), 0) from ledger_accounts where kind = 'platform_fee')::text as fee,
          (select coalesce(sum(balance_micros), 0) from ledger_accounts where kind = 'model_cost')::text as model,
          (select coalesce(sum(balance_micros), 0) from ledger_accounts)::text as everything,
          (select coalesce(sum(amount_micros), 0) from ledger_entries)::text as entries`,
  );
  return {
    fee: Number(row?.fee),
    model: Number(row?.model),
    everything: Number(row?.everything),
    entries: Number(row?.entries),
  };
};

it("pays the platform exactly $5.00 and the creator exactly $45.00 minus the recorded model cost for 1,000 calls of a 5¢ app", async () => {
  // A model the platform pays for, with few enough tokens that 5¢ covers its worst case.
  const { slug } = await createPromptApp(
    creator,
    { name: "Half-cent Fee", visibility: "public", price_cents: PRICE },
    { model: "gpt-4o-mini", max_tokens: 64 },
  );
  expect(
    (await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } })).status,
  ).toBe(200);
  const creatorId = (await creator.api("GET", "/api/auth/profile/")).body.user.id as string;
  const before = await settledWallet(creator);

  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < CALLS) {
        next += 1;
        const answer = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
          body: { inputs: { query: `Call ${next}` }, response_mode: "blocking", user: "exact" },
        });
        statuses.push(answer.status);
      }
    }),
  );
  expect(statuses.filter((s) => s === 200)).toHaveLength(CALLS);

  const consumerAfter = await settledWallet(consumer);
  expect(consumerAfter).toMatchObject({
    balance_micros: centsToMicros(6_000 - CALLS * PRICE),
    held_micros: 0,
  });
  const [calls] = await queryRows<{ n: number; gross: string; fee: string; cost: string; deducted: string }>(
    server.database.db,
    sql`select count(*)::int as n, sum(charged_cents)::text as gross, sum(fee_micros)::text as fee,
          sum(model_cost_micros)::text as cost, sum(model_cost_deducted_micros)::text as deducted
        from invocations where caller_user_id <> ${creatorId}`,
  );
  const modelCost = Number(calls?.cost);
  expect(calls).toMatchObject({ n: CALLS, gross: String(CALLS * PRICE), fee: "5000000" });
  // Every call cost something at the vendor, and each was far below its creator's share.
  expect(modelCost).toBeGreaterThan(0);
  expect(Number(calls?.deducted)).toBe(modelCost);

  const money = await totals();
  expect(money.fee).toBe(5_000_000); // $5.00
  expect(money.model).toBe(modelCost);
  const creatorAfter = await settledWallet(creator);
  expect(creatorAfter.earnings_micros - before.earnings_micros).toBe(45_000_000 - modelCost);
  expect(money.everything).toBe(0);
  expect(money.entries).toBe(0);

  // The dashboards read the same figures from the rollups.
  const [rolled] = await queryRows<{ gross: string; fee: string; cost: string }>(
    server.database.db,
    sql`select sum(revenue_cents)::text as gross, sum(fee_micros)::text as fee, sum(model_cost_micros)::text as cost
        from app_daily_stats s join applications a on a.id = s.application_id where a.slug = ${slug}`,
  );
  expect(rolled).toEqual({ gross: String(CALLS * PRICE), fee: "5000000", cost: String(modelCost) });
  await expectReconciled(server.database.db);
}, 180_000);

it("takes the model cost of calls no price paid (the owner's own) from the creator's wallet exactly, never as debt", async () => {
  const { slug } = await createPromptApp(
    creator,
    { name: "Owner Tries It", visibility: "public", price_cents: PRICE },
    { model: "gpt-4o-mini", max_tokens: 64 },
  );
  await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  const creatorId = (await creator.api("GET", "/api/auth/profile/")).body.user.id as string;
  // Decision 062: each call holds its worst case from the wallet, and takes what it cost.
  await fundWallet(creator, 100);
  // Sweep what the first test left, so this one sees only its own calls.
  await postOutstandingModelCosts(server.database.db);
  const before = await settledWallet(creator);
  const modelBefore = (await totals()).model;

  for (let i = 0; i < 3; i++) {
    const own = await creator.api("POST", `/api/app/${slug}/completion-messages`, {
      body: { inputs: { query: `Mine ${i}` }, response_mode: "blocking" },
    });
    expect(own.status).toBe(200);
  }
  const [owed] = await queryRows<{ cost: string }>(
    server.database.db,
    sql`select sum(model_cost_micros - model_cost_deducted_micros)::text as cost from invocations i
        join applications a on a.id = i.application_id
        where a.slug = ${slug} and i.caller_user_id = ${creatorId}`,
  );
  const cost = Number(owed?.cost);
  expect(cost).toBeGreaterThan(0);
  const after = await settledWallet(creator);
  expect(after.balance_micros).toBe(before.balance_micros - cost);
  expect(after.earnings_micros).toBe(before.earnings_micros);
  expect((await totals()).model - modelBefore).toBe(cost);
  // Taken once: the sweep finds nothing of these calls.
  expect(await postOutstandingModelCosts(server.database.db)).toBe(0);

  // A creator with nothing in the wallet is refused before the vendor: no call, no debt.
  const newcomer = await createCaller(server.baseUrl, "Broke Creator");
  const mine = await createPromptApp(
    newcomer,
    { name: "Broke", visibility: "public", price_cents: PRICE },
    { model: "gpt-4o-mini", max_tokens: 64 },
  );
  await newcomer.api("PATCH", `/api/app/${mine.body.slug}/update_status/`, { body: { status: "live" } });
  expect(
    (
      await newcomer.api("POST", `/api/app/${mine.body.slug}/completion-messages`, {
        body: { inputs: { query: "hi" }, response_mode: "blocking" },
      })
    ).status,
  ).toBe(402);
  expect(await postOutstandingModelCosts(server.database.db)).toBe(0);
  const newcomerId = (await newcomer.api("GET", "/api/auth/profile/")).body.user.id as string;
  const [debt] = await queryRows<{ balance: string }>(
    server.database.db,
    sql`select coalesce(sum(balance_micros), 0)::text as balance from ledger_accounts where kind = 'debt' and owner_id = ${newcomerId}`,
  );
  expect(Number(debt?.balance)).toBe(0);
  expect((await totals()).everything).toBe(0);
  await expectReconciled(server.database.db);
});
