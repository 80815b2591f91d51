import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { payouts, users } from "../../db/schema/index.ts";
import { MICROS_PER_CENT } from "../../lib/money.ts";
import { type Caller, createCaller } from "../../test/caller.ts";
import { type SeenRequest, type StripeTestServer, startStripeTestServer } from "../../test/fake-stripe.ts";
import { reconcile } from "../billing/reconcile.ts";
import { type PayoutDeps, retryPayouts, runPayoutSchedule } from "./payouts.service.ts";
import { creditEarnings, daysAgo } from "./payouts-test-helpers.ts";
import { createStripeConnect } from "./stripe-connect.ts";

let stripe: StripeTestServer;
let seen: SeenRequest[];
let deps: PayoutDeps;

beforeAll(async () => {
  stripe = await startStripeTestServer();
  seen = stripe.fake.seen;
  const { db } = stripe.server.database;
  deps = { db, config: stripe.server.config, connect: createStripeConnect(stripe.server.config) };
});
afterEach(async () => {
  stripe.fake.connect.fault = undefined;
  expect((await reconcile(stripe.server.database.db)).ok).toBe(true);
});
afterAll(() => stripe?.stop());

const cents = (n: number) => n * MICROS_PER_CENT;

async function userIdOf(caller: Caller): Promise<string> {
  const [row] = await stripe.server.database.db.select().from(users).where(eq(users.email, caller.email));
  if (!row) throw new Error("no user");
  return row.id;
}

/** Stripe's `account.updated` event (id `eventId`) for a connected account that can now be paid. */
function accountReady(eventId: string, account: string | undefined) {
  return {
    id: eventId,
    object: "event",
    type: "account.updated",
    account,
    data: {
      object: {
        id: account,
        object: "account",
        details_submitted: true,
        payouts_enabled: true,
        requirements: { currently_due: [], disabled_reason: null },
      },
    },
  };
}

/** A creator through Stripe's onboarding, enabled by `account.updated`, as Stripe would report it. */
async function onboardedCreator(name: string): Promise<{ caller: Caller; id: string; account: string }> {
  const caller = await createCaller(stripe.server.baseUrl, name, { verified: true });
  const link = await caller.api("POST", "/api/payouts/onboarding");
  expect(link.status).toBe(200);
  const account = /setup\/e\/(acct_\d+)\//.exec(link.body.url)?.[1] ?? "";
  const state = stripe.fake.connect.accounts.get(account);
  if (!state) throw new Error("no account");
  state.details_submitted = true;
  state.payouts_enabled = true;
  const updated = await stripe.deliver(accountReady(`evt_acct_${account}`, account));
  expect(updated.status).toBe(200);
  return { caller, id: await userIdOf(caller), account };
}

const payoutEvent = (
  id: string,
  type: "payout.paid" | "payout.failed",
  payout: { id: string; amount: number; account: string; payoutId: string },
  failure?: { code: string; message: string },
) => ({
  id,
  object: "event",
  type,
  account: payout.account,
  data: {
    object: {
      id: payout.id,
      object: "payout",
      amount: payout.amount,
      currency: "usd",
      status: type === "payout.paid" ? "paid" : "failed",
      failure_code: failure?.code ?? null,
      failure_message: failure?.message ?? null,
      metadata: { payout_id: payout.payoutId },
    },
  },
});

async function stored(payoutId: string) {
  const [row] = await stripe.server.database.db.select().from(payouts).where(eq(payouts.id, payoutId));
  if (!row) throw new Error("no payout");
  return row;
}

describe("payouts through Stripe Connect (loopback Stripe, official SDK)", () => {
  it("onboards a creator: an Express account with manual payouts once, an account link, account.updated keeps the flags", async () => {
    const creator = await createCaller(stripe.server.baseUrl, "Onboarding Creator", { verified: true });
    const before = await creator.api("GET", "/api/payouts/");
    expect(before.body.account).toMatchObject({ state: "not_started", payouts_enabled: false });
    const refused = await creator.api("POST", "/api/payouts/", { body: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/Set up payouts first/);

    const first = await creator.api("POST", "/api/payouts/onboarding");
    const second = await creator.api("POST", "/api/payouts/onboarding");
    expect(first.status).toBe(200);
    expect(first.body.url).toMatch(/^https:\/\/connect\.stripe\.com\/setup\/e\/acct_\d+\//);
    const creatorId = await userIdOf(creator);
    const mine = seen.filter(
      (r) => r.path === "/v1/accounts" && r.form.get("metadata[promptmint_user_id]") === creatorId,
    );
    expect(mine).toHaveLength(1);
    const created = mine[0];
    expect(created?.form.get("type")).toBe("express");
    expect(created?.form.get("capabilities[transfers][requested]")).toBe("true");
    expect(created?.form.get("settings[payouts][schedule][interval]")).toBe("manual");
    expect(created?.headers["idempotency-key"]).toMatch(/^connect-account-/);
    const account = /setup\/e\/(acct_\d+)\//.exec(first.body.url)?.[1];
    expect(/setup\/e\/(acct_\d+)\//.exec(second.body.url)?.[1]).toBe(account);
    const link = seen.filter((r) => r.path === "/v1/account_links").at(-1);
    expect(link?.form.get("account")).toBe(account);
    expect(link?.form.get("type")).toBe("account_onboarding");
    expect(link?.form.get("return_url")).toBe(`${stripe.server.baseUrl}/earnings?onboarding=return`);
    expect(link?.form.get("refresh_url")).toBe(`${stripe.server.baseUrl}/earnings?onboarding=refresh`);

    // Back from Stripe before the webhook: the summary reads the account (still incomplete).
    const incomplete = await creator.api("GET", "/api/payouts/");
    expect(incomplete.body.account).toMatchObject({
      state: "incomplete",
      disabled_reason: "requirements.past_due",
    });
    expect(incomplete.body.account.requirements_due).toEqual(["external_account"]);

    const event = accountReady("evt_account_updated_1", account);
    expect((await stripe.deliver(event)).body).toEqual({ received: true, duplicate: false });
    expect((await stripe.deliver(event)).body).toEqual({ received: true, duplicate: true });
    const enabled = await creator.api("GET", "/api/payouts/");
    expect(enabled.body.account).toMatchObject({
      state: "enabled",
      payouts_enabled: true,
      disabled_reason: null,
    });
  });

  it("pays exactly the available amount: pending money stays, with the date it becomes available", async () => {
    const { caller, id, account } = await onboardedCreator("Exact Creator");
    // $23.45 and 0.6789 of a cent: only whole cents leave; the rest stays, available.
    await creditEarnings(deps.db, id, cents(2345) + 6789, daysAgo(10));
    const recent = daysAgo(1);
    await creditEarnings(deps.db, id, cents(700), recent);
    const summary = await caller.api("GET", "/api/payouts/");
    expect(summary.body).toMatchObject({
      available_micros: 23_456_789,
      withdrawable_cents: 2345,
      hold_days: 7,
    });
    expect(summary.body.pending).toHaveLength(1);
    expect(summary.body.pending[0].amount_micros).toBe(7_000_000);
    expect(Date.parse(summary.body.pending[0].available_at)).toBe(recent.getTime() + 7 * 86_400_000);

    const made = await caller.api("POST", "/api/payouts/", {
      body: {},
      headers: { "idempotency-key": "exact-1" },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ amount_cents: 2345, status: "in_transit" });
    const transfer = seen.filter((r) => r.path === "/v1/transfers").at(-1);
    expect(transfer?.form.get("amount")).toBe("2345");
    expect(transfer?.form.get("destination")).toBe(account);
    expect(transfer?.form.get("metadata[payout_id]")).toBe(made.body.id);
    expect(transfer?.headers["idempotency-key"]).toBe(`payout-${made.body.id}-transfer`);
    const payout = seen.filter((r) => r.path === "/v1/payouts").at(-1);
    expect(payout?.headers["stripe-account"]).toBe(account);
    expect(payout?.headers["idempotency-key"]).toBe(`payout-${made.body.id}-payout`);
    expect(payout?.form.get("amount")).toBe("2345");
    expect(payout?.form.get("metadata[payout_id]")).toBe(made.body.id);

    const after = await caller.api("GET", "/api/payouts/");
    expect(after.body).toMatchObject({
      available_micros: 6789,
      withdrawable_cents: 0,
      in_transit_cents: 2345,
      balance_micros: 7_006_789,
    });
    const nothing = await caller.api("POST", "/api/payouts/", { body: {} });
    expect(nothing.status).toBe(409);
    expect(nothing.body.message).toMatch(/Nothing is available to pay out yet/);
  });

  it("pays a repeated request once: the same Idempotency-Key, and two different requests at once", async () => {
    const { caller, id } = await onboardedCreator("Repeat Creator");
    await creditEarnings(deps.db, id, cents(5000), daysAgo(8));
    const transfersBefore = stripe.fake.connect.transfers.size;
    const same = await Promise.all(
      [1, 2, 3].map(() =>
        caller.api("POST", "/api/payouts/", {
          body: { amount_cents: 2000 },
          headers: { "idempotency-key": "same-key" },
        }),
      ),
    );
    expect(new Set(same.map((r) => r.body.id)).size).toBe(1);
    expect(same.map((r) => r.status).sort()).toEqual([200, 200, 201]);
    expect(same.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(2);
    const reused = await caller.api("POST", "/api/payouts/", {
      body: { amount_cents: 2500 },
      headers: { "idempotency-key": "same-key" },
    });
    expect(reused.status).toBe(409);

    // 3000 left: two different requests for all of it at once pay it once.
    const racing = await Promise.all([
      caller.api("POST", "/api/payouts/", { body: {}, headers: { "idempotency-key": "race-a" } }),
      caller.api("POST", "/api/payouts/", { body: {}, headers: { "idempotency-key": "race-b" } }),
    ]);
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(racing.find((r) => r.status === 201)?.body.amount_cents).toBe(3000);
    expect(stripe.fake.connect.transfers.size - transfersBefore).toBe(2);
    const summary = await caller.api("GET", "/api/payouts/");
    expect(summary.body).toMatchObject({ in_transit_cents: 5000, balance_micros: 0 });
  });

  it("refuses bad amounts by name: below the minimum, above what is available, not a number", async () => {
    const { caller, id } = await onboardedCreator("Amount Creator");
    await creditEarnings(deps.db, id, cents(1500), daysAgo(9));
    const small = await caller.api("POST", "/api/payouts/", { body: { amount_cents: 999 } });
    expect(small.status).toBe(400);
    expect(small.body.fields).toEqual({ amount_cents: "must be at least the minimum payout, 1000 cents" });
    const large = await caller.api("POST", "/api/payouts/", { body: { amount_cents: 1501 } });
    expect(large.status).toBe(409);
    expect(large.body.message).toMatch(/more than the \$15\.00 available/);
    const text = await caller.api("POST", "/api/payouts/", { body: { amount_cents: "ten" } });
    expect(text.status).toBe(400);
    expect(text.body.fields).toHaveProperty("amount_cents");
    const clock = await caller.api("POST", "/api/payouts/sandbox/clock", { body: { advance_days: 8 } });
    expect(clock.status).toBe(400);
    expect(clock.body.message).toMatch(/Stripe Connect/);
  });

  it("applies payout.paid once per event id, and a paid payout that later fails returns its money once", async () => {
    const { caller, id, account } = await onboardedCreator("Paid Creator");
    await creditEarnings(deps.db, id, cents(1200), daysAgo(8));
    const made = await caller.api("POST", "/api/payouts/", { body: {} });
    const row = await stored(made.body.id);
    const ref = { id: row.stripePayoutId ?? "", amount: 1200, account, payoutId: row.id };
    const paid = payoutEvent("evt_paid_1", "payout.paid", ref);
    expect((await stripe.deliver(paid)).body.duplicate).toBe(false);
    expect((await stripe.deliver(paid)).body.duplicate).toBe(true);
    expect((await stripe.deliver({ ...paid, id: "evt_paid_1b" })).body.duplicate).toBe(false);
    let summary = await caller.api("GET", "/api/payouts/");
    expect(summary.body).toMatchObject({ paid_out_cents: 1200, in_transit_cents: 0 });
    expect(summary.body.payouts[0]).toMatchObject({ status: "paid" });

    // An event for this payout from another connected account is not ours to apply.
    const forged = payoutEvent(
      "evt_failed_other",
      "payout.failed",
      { ...ref, account: "acct_someone_else" },
      {
        code: "account_closed",
        message: "The bank account has been closed",
      },
    );
    expect((await stripe.deliver(forged)).status).toBe(200);
    expect((await stored(row.id)).status).toBe("paid");

    const failed = payoutEvent("evt_failed_late", "payout.failed", ref, {
      code: "account_closed",
      message: "The bank account has been closed",
    });
    expect((await stripe.deliver(failed)).status).toBe(200);
    expect((await stripe.deliver({ ...failed, id: "evt_failed_late_again" })).status).toBe(200);
    summary = await caller.api("GET", "/api/payouts/");
    expect(summary.body).toMatchObject({
      paid_out_cents: 0,
      available_micros: 12_000_000,
      withdrawable_cents: 1200,
    });
    expect(summary.body.payouts[0]).toMatchObject({
      status: "failed",
      failure_reason: "The bank account has been closed",
    });
    // An old payout.paid delivered after the failure changes nothing.
    await stripe.deliver({ ...paid, id: "evt_paid_out_of_order" });
    expect((await stored(row.id)).status).toBe("failed");
  });

  it("a failed payout returns the money at once and reverses the transfer; transfer.reversed does not return it twice", async () => {
    const { caller, id, account } = await onboardedCreator("Failed Creator");
    await creditEarnings(deps.db, id, cents(1800), daysAgo(8));
    const made = await caller.api("POST", "/api/payouts/", { body: {} });
    const row = await stored(made.body.id);
    const failed = payoutEvent(
      "evt_fail_1",
      "payout.failed",
      { id: row.stripePayoutId ?? "", amount: 1800, account, payoutId: row.id },
      { code: "no_account", message: "The bank account details on file are probably incorrect" },
    );
    expect((await stripe.deliver(failed)).body.duplicate).toBe(false);
    expect((await stripe.deliver(failed)).body.duplicate).toBe(true);
    const reversal = seen.filter((r) => r.path === `/v1/transfers/${row.transferId}/reversals`);
    expect(reversal).toHaveLength(1);
    expect(reversal[0]?.headers["idempotency-key"]).toBe(`payout-${row.id}-reversal`);
    expect((await stored(row.id)).reversalId).toMatch(/^trr_/);

    const reversed = {
      id: "evt_transfer_reversed_1",
      object: "event",
      type: "transfer.reversed",
      data: {
        object: {
          id: row.transferId,
          object: "transfer",
          amount: 1800,
          amount_reversed: 1800,
          reversed: true,
          metadata: { payout_id: row.id },
          reversals: { object: "list", data: [] },
        },
      },
    };
    expect((await stripe.deliver(reversed)).status).toBe(200);
    const summary = await caller.api("GET", "/api/payouts/");
    expect(summary.body).toMatchObject({
      available_micros: 18_000_000,
      in_transit_cents: 0,
      paid_out_cents: 0,
    });
    expect(summary.body.payouts[0]).toMatchObject({
      status: "failed",
      failure_code: "no_account",
      failure_reason: "The bank account details on file are probably incorrect",
    });
    // The returned money is available again at once, and can be withdrawn.
    const again = await caller.api("POST", "/api/payouts/", { body: {} });
    expect(again.status).toBe(201);
    expect(again.body.amount_cents).toBe(1800);
  });

  it("transfer.reversed on a payout in transit returns the money once, whatever the redeliveries", async () => {
    const { caller, id } = await onboardedCreator("Reversed Creator");
    await creditEarnings(deps.db, id, cents(1100), daysAgo(8));
    const made = await caller.api("POST", "/api/payouts/", { body: {} });
    const row = await stored(made.body.id);
    const event = (eventId: string) => ({
      id: eventId,
      object: "event",
      type: "transfer.reversed",
      data: {
        object: {
          id: row.transferId,
          object: "transfer",
          amount: 1100,
          amount_reversed: 1100,
          reversed: true,
          metadata: { payout_id: row.id },
          reversals: { object: "list", data: [{ id: "trr_dashboard" }] },
        },
      },
    });
    await stripe.deliver(event("evt_rev_a"));
    await stripe.deliver(event("evt_rev_a"));
    await stripe.deliver(event("evt_rev_b"));
    const summary = await caller.api("GET", "/api/payouts/");
    expect(summary.body).toMatchObject({ available_micros: 11_000_000, in_transit_cents: 0 });
    expect(summary.body.payouts[0]).toMatchObject({ status: "reversed" });
    expect((await stored(row.id)).reversalId).toBe("trr_dashboard");
  });

  it("a Stripe failure leaves the payout pending; the retrier finishes it with the same keys, one transfer and one payout", async () => {
    const { caller, id } = await onboardedCreator("Retry Creator");
    await creditEarnings(deps.db, id, cents(1300), daysAgo(8));
    // Stripe makes the transfer but the answer is lost; then the payout call fails outright.
    stripe.fake.connect.fault = (path) =>
      path === "/v1/transfers" ? "lose-answer" : path === "/v1/payouts" ? "fail" : undefined;
    const made = await caller.api("POST", "/api/payouts/", { body: {} });
    expect(made.status).toBe(201);
    expect(made.body.status).toBe("pending");
    const transfers = () =>
      [...stripe.fake.connect.transfers.values()].filter((t) => t.metadata.payout_id === made.body.id);
    expect(transfers()).toHaveLength(1);
    const pending = await caller.api("GET", "/api/payouts/");
    expect(pending.body).toMatchObject({ in_transit_cents: 1300, available_micros: 0 });

    stripe.fake.connect.fault = undefined;
    expect(await retryPayouts(deps, 0)).toBeGreaterThanOrEqual(1);
    const row = await stored(made.body.id);
    expect(row.status).toBe("in_transit");
    expect(transfers()).toHaveLength(1);
    expect(row.transferId).toBe(transfers()[0]?.id);
    const payoutsMade = [...stripe.fake.connect.payouts.values()].filter(
      (p) => p.metadata.payout_id === row.id,
    );
    expect(payoutsMade).toHaveLength(1);
    const keys = seen
      .filter((r) => r.path === "/v1/transfers" && r.form.get("metadata[payout_id]") === row.id)
      .map((r) => r.headers["idempotency-key"]);
    expect(new Set(keys)).toEqual(new Set([`payout-${row.id}-transfer`]));
    expect(await retryPayouts(deps, 0)).toBe(0);
  });

  it("rejects Connect events with a bad signature without applying them", async () => {
    const { caller, id, account } = await onboardedCreator("Signature Creator");
    await creditEarnings(deps.db, id, cents(1000), daysAgo(8));
    const made = await caller.api("POST", "/api/payouts/", { body: {} });
    const row = await stored(made.body.id);
    const paid = payoutEvent("evt_sig_paid", "payout.paid", {
      id: row.stripePayoutId ?? "",
      amount: 1000,
      account,
      payoutId: row.id,
    });
    const forged = await stripe.deliver(paid, { secret: "whsec_attacker" });
    expect(forged.status).toBe(400);
    expect((await stored(row.id)).status).toBe("in_transit");
    expect((await stripe.deliver(paid)).body.duplicate).toBe(false);
    expect((await stored(row.id)).status).toBe("paid");
  });

  it("the weekly schedule pays each onboarded creator above the minimum once, however many processes run it", async () => {
    const { caller, id } = await onboardedCreator("Scheduled Creator");
    await creditEarnings(deps.db, id, cents(2500), daysAgo(8));
    const small = await onboardedCreator("Small Creator");
    await creditEarnings(deps.db, small.id, cents(900), daysAgo(8));
    await Promise.all([runPayoutSchedule(deps), runPayoutSchedule(deps), runPayoutSchedule(deps)]);
    await runPayoutSchedule(deps);
    const mine = (await caller.api("GET", "/api/payouts/")).body.payouts;
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ automatic: true, amount_cents: 2500 });
    expect((await small.caller.api("GET", "/api/payouts/")).body.payouts).toHaveLength(0);
  });
});
