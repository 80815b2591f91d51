import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ledgerAccounts, users } from "../../db/schema/index.ts";
import { type Caller, fundWallet } from "../../test/caller.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { postOutstandingModelCosts } from "../billing/model-costs.ts";

// Usage never makes debt (issue 37, docs/decisions/062): a plan's included calls are paid for when
// the plan is bought, but their model cost is taken from the creator's earnings only when each call
// is made (billing/model-costs.ts). Had those earnings been paid out meanwhile, the calls would have
// left the creator in debt. A payout keeps back the share of each current period's earnings that
// its unused included calls stand for (payouts/payout-postings.ts, includedCallsReserve).

const { server, vendor } = useVendorServer();
const creator = useCaller(server, "Plan Seller", { verified: true });
const consumer = useCaller(server, "Plan Buyer");

async function userIdOf(caller: Caller): Promise<string> {
  const [row] = await server.database.db.select().from(users).where(eq(users.email, caller.email));
  if (!row) throw new Error("no user");
  return row.id;
}

async function balanceOf(ownerId: string, kind: "earnings" | "debt"): Promise<number> {
  const [row] = await server.database.db
    .select({ balance: ledgerAccounts.balanceMicros })
    .from(ledgerAccounts)
    .where(and(eq(ledgerAccounts.kind, kind), eq(ledgerAccounts.ownerId, ownerId)));
  return row?.balance ?? 0;
}

/** Through the sandbox's onboarding page, as a browser submits its form. */
async function onboard(caller: Caller): Promise<void> {
  const link = await caller.api("POST", "/api/payouts/onboarding");
  expect(link.status).toBe(200);
  const done = await fetch(link.body.url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "bank=succeeds",
    redirect: "manual",
  });
  expect(done.status).toBe(303);
}

describe("a plan's unused included calls", () => {
  it("keep their share of its earnings out of payouts, so the calls' model cost never becomes the creator's debt", async () => {
    const creatorId = await userIdOf(creator);
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name: "Reserved plan", visibility: "public", price_cents: 10 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { model: "gpt-4-turbo", max_tokens: 64 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    // $60 for 4 calls: the creator earns $54 after the 10% fee, $13.50 per included call.
    const plan = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
      body: { name: "Four", price_cents: 6000, description: "four calls", features: {}, included_calls: 4 },
    });
    expect(plan.status).toBe(201);
    await fundWallet(consumer, 6500);
    const subscribed = await consumer.api("POST", `/api/app/${app.slug}/subscriptions/`, {
      body: { package_id: plan.body.id },
    });
    expect(subscribed.status).toBe(201);
    expect(await balanceOf(creatorId, "earnings")).toBe(54_000_000);

    // Past the payout hold (the creator's sandbox clock), every cent has matured: all is reserved.
    await onboard(creator);
    expect(
      (await creator.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: 8 } })).status,
    ).toBe(200);
    const before = await creator.api("GET", "/api/payouts/");
    expect(before.body.balance_micros).toBe(54_000_000);
    expect(before.body.reserved_micros).toBe(54_000_000);
    expect(before.body.available_micros).toBe(0);

    // One included call made: a quarter of the period's earnings is released to pay out.
    const call = (query: string) =>
      fetch(`${server.baseUrl}/api/app/${app.slug}/completion-messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${consumer.token}`, "content-type": "application/json" },
        body: JSON.stringify({ inputs: { query }, response_mode: "blocking", user: "buyer" }),
      });
    expect((await call("first")).status).toBe(200);
    const after = await creator.api("GET", "/api/payouts/");
    expect(after.body.reserved_micros).toBe(40_500_000);
    expect(after.body.available_micros).toBe(13_500_000);

    // The creator withdraws everything they may; the remaining included calls are made and their
    // model cost swept from the earnings: no debt, and the earnings never go below zero.
    const paid = await creator.api("POST", "/api/payouts/", { body: {} });
    expect(paid.status).toBe(201);
    expect(paid.body.amount_cents).toBe(1350);
    const vendorCalls = vendor.requests.length;
    for (const query of ["second", "third", "fourth"]) expect((await call(query)).status).toBe(200);
    expect(vendor.requests.length).toBe(vendorCalls + 3);
    while ((await postOutstandingModelCosts(server.database.db)) > 0);
    expect(await balanceOf(creatorId, "debt")).toBe(0);
    expect(await balanceOf(creatorId, "earnings")).toBeGreaterThan(0);
    // The period's included calls are all used: nothing is reserved any more.
    expect((await creator.api("GET", "/api/payouts/")).body.reserved_micros).toBe(0);
    await expectReconciled(server.database.db);
  });
});
