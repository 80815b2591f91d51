import { randomUUID } from "node:crypto";
import { and, eq, isNotNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  invocations,
  memberSpend,
  memberSpendReservations,
  organizationMembers,
} from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { actingFor, insertOrganization, setMember } from "../../test/organizations.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import type { TestServer } from "../../test/server.ts";
import { reserveMemberSpend, sweepMemberReservations } from "../billing/call-payment/member-budgets.ts";
import { PRICE, startKeyWorld } from "../keys/key-world.ts";

// Members' monthly budgets (issue 43, decision 084): a member's calls paid by the organization's
// wallet reserve their price against the member's spend this UTC month, as keys' limits do
// (decision 035), on the real server and database (PGlite, and PostgreSQL when set).

const MICROS = 10_000;

let world: Awaited<ReturnType<typeof startKeyWorld>>;
let server: TestServer;
let owner: Caller;
let org: string;
let orgName: string;
const db = () => server.database.db;

beforeAll(async () => {
  world = await startKeyWorld();
  server = world.server;
  owner = await createCaller(server.baseUrl, "Budget Owner");
  orgName = `Budget Co ${randomUUID().slice(0, 4)}`;
  org = await insertOrganization(db(), owner, orgName);
  await fundWallet(actingFor(owner, org), 5_000);
});
afterAll(async () => {
  await world?.stop();
});

/** A new developer of the organization with this budget, and a key they made for it. */
async function developerWithKey(budgetCents: number | null) {
  const person = await createCaller(server.baseUrl, `Developer ${randomUUID().slice(0, 4)}`);
  const userId = await setMember(db(), org, person, "developer", budgetCents);
  const made = await actingFor(person, org).api("POST", "/api/keys/", { body: { name: "ci" } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return { person, userId, key: made.body.key as string, keyId: made.body.id as string };
}

const callWithKey = (key: string, body: Record<string, unknown> = {}) =>
  owner.api("POST", `/api/app/${world.appA}/completion-messages`, {
    auth: key,
    body: { inputs: { query: "hi" }, response_mode: "blocking", ...body },
  });
const callAsMember = (person: Caller) =>
  actingFor(person, org).api("POST", `/api/app/${world.appA}/completion-messages`, {
    body: { inputs: { query: "hi" }, response_mode: "blocking" },
  });

const setBudget = (userId: string, cents: number | null) =>
  db()
    .update(organizationMembers)
    .set({ monthlyBudgetCents: cents })
    .where(and(eq(organizationMembers.organizationId, org), eq(organizationMembers.userId, userId)));

async function monthSpend(userId: string): Promise<number> {
  const rows = await db()
    .select({ micros: memberSpend.spentMicros })
    .from(memberSpend)
    .where(and(eq(memberSpend.organizationId, org), eq(memberSpend.userId, userId)));
  return rows.reduce((sum, row) => sum + Number(row.micros), 0);
}

async function chargedCalls(userId: string) {
  return db()
    .select({ id: invocations.id, charged: invocations.chargedCents, caller: invocations.callerUserId })
    .from(invocations)
    .where(and(eq(invocations.memberId, userId), isNotNull(invocations.holdId)));
}

const nextMonth = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
};

describe("a member's monthly budget", () => {
  it("refuses the call that would pass it with 402 member_budget_reached naming it, and charges nothing", async () => {
    const { userId, key } = await developerWithKey(2 * PRICE);
    expect((await callWithKey(key)).status).toBe(200);
    expect((await callWithKey(key)).status).toBe(200);
    const before = await settledWallet(actingFor(owner, org));
    const refused = await callWithKey(key);
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe("member_budget_reached");
    expect(refused.body.message).toBe(
      `Your monthly budget in ${orgName} of $0.60 is reached: you have spent $0.60 of it this month (UTC), and this call costs $0.30. You were not charged. The budget resets at ${nextMonth()} (the first of next month, UTC); an owner or admin of ${orgName} may raise it.`,
    );
    expect(refused.body.remedy).toMatchObject({
      missing: "spend_limit_reached",
      price_cents: PRICE,
      limit: { kind: "member_budget", limit_cents: 60, spent_micros: 60 * MICROS, period: "monthly" },
    });
    expect(refused.body.remedy.keys_url).toBeUndefined();
    const after = await settledWallet(actingFor(owner, org));
    expect(after.balance_micros + after.held_micros).toBe(before.balance_micros + before.held_micros);
    expect(await chargedCalls(userId)).toHaveLength(2);
    expect(await monthSpend(userId)).toBe(2 * PRICE * MICROS);
  });

  it("applies a budget lowered below the month's spend to the next call, and none once it is lifted", async () => {
    const { userId, key } = await developerWithKey(null);
    expect((await callWithKey(key)).status).toBe(200);
    expect((await callWithKey(key)).status).toBe(200);
    await setBudget(userId, PRICE);
    const refused = await callWithKey(key);
    expect(refused.status).toBe(402);
    expect(refused.body.message).toContain("of $0.30 is reached: you have spent $0.60 of it this month");
    await setBudget(userId, null);
    expect((await callWithKey(key)).status).toBe(200);
    expect(await monthSpend(userId)).toBe(3 * PRICE * MICROS);
  });

  it("counts what was spent this month before a budget was set", async () => {
    const { person, userId } = await developerWithKey(null);
    expect((await callAsMember(person)).status).toBe(200);
    expect((await callAsMember(person)).status).toBe(200);
    await setBudget(userId, 3 * PRICE);
    expect((await callAsMember(person)).status).toBe(200);
    const refused = await callAsMember(person);
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe("member_budget_reached");
    expect(await chargedCalls(userId)).toHaveLength(3);
  });

  it("lets exactly 3 of 10 calls at once through a budget of 3 calls", async () => {
    const { person, userId, key } = await developerWithKey(3 * PRICE);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? callWithKey(key) : callAsMember(person))),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 402).map((a) => a.body.code)).toEqual(
      Array(7).fill("member_budget_reached"),
    );
    const charged = await chargedCalls(userId);
    expect(charged).toHaveLength(3);
    expect(charged.every((call) => call.caller === org && call.charged === PRICE)).toBe(true);
    expect(await monthSpend(userId)).toBe(3 * PRICE * MICROS);
    await expectReconciled(db());
  });

  it("refuses at once a member removed, or lowered to a role that may not call, after their credentials were read", async () => {
    const { userId } = await developerWithKey(null);
    const call = { callId: randomUUID(), priceCents: PRICE, ttlSeconds: 60 };
    await db()
      .update(organizationMembers)
      .set({ role: "billing" })
      .where(and(eq(organizationMembers.organizationId, org), eq(organizationMembers.userId, userId)));
    await expect(
      reserveMemberSpend(db(), { organizationId: org, userId, viaKey: true }, call),
    ).rejects.toMatchObject({
      code: "organization_role",
      message: `This key's maker is now billing in ${orgName}: a billing may not call apps or manage API keys for the organization. Ask an owner or admin of ${orgName} for a role that may.`,
    });
    await db()
      .delete(organizationMembers)
      .where(and(eq(organizationMembers.organizationId, org), eq(organizationMembers.userId, userId)));
    await expect(
      reserveMemberSpend(db(), { organizationId: org, userId, viaKey: true }, call),
    ).rejects.toMatchObject({ code: "unauthorized" });
    await expect(
      reserveMemberSpend(db(), { organizationId: org, userId, viaKey: false }, call),
    ).rejects.toMatchObject({ code: "not_found", message: "Organization not found" });
  });

  it("settles the reservation of a member removed while their call was in flight; the sweep gives back an unrecorded call's", async () => {
    const { userId } = await developerWithKey(null);
    const kept = await reserveMemberSpend(
      db(),
      { organizationId: org, userId, viaKey: false },
      { callId: randomUUID(), priceCents: PRICE, ttlSeconds: 60 },
    );
    const lost = randomUUID();
    await reserveMemberSpend(
      db(),
      { organizationId: org, userId, viaKey: false },
      { callId: lost, priceCents: PRICE, ttlSeconds: -1 },
    );
    expect(await monthSpend(userId)).toBe(2 * PRICE * MICROS);
    await db()
      .delete(organizationMembers)
      .where(and(eq(organizationMembers.organizationId, org), eq(organizationMembers.userId, userId)));
    await kept.settle(0);
    expect(await monthSpend(userId)).toBe(PRICE * MICROS);
    await sweepMemberReservations(db());
    expect(await monthSpend(userId)).toBe(0);
    expect(
      await db().select().from(memberSpendReservations).where(eq(memberSpendReservations.userId, userId)),
    ).toEqual([]);
  });
});

describe("the member recorded on the organization's calls", () => {
  it("names the key's maker, the signed-in member, and a streaming call's member; a person's own call names none", async () => {
    const { person, userId, key, keyId } = await developerWithKey(null);
    expect((await callWithKey(key)).status).toBe(200);
    expect((await callAsMember(person)).status).toBe(200);
    const streamed = await callWithKey(key, { response_mode: "streaming" });
    expect(streamed.status).toBe(200);
    const rows = await db()
      .select({ member: invocations.memberId, key: invocations.apiKeyId, caller: invocations.callerUserId })
      .from(invocations)
      .where(eq(invocations.memberId, userId));
    expect(rows).toHaveLength(3);
    expect(rows.filter((row) => row.key === keyId)).toHaveLength(2);
    expect(rows.every((row) => row.caller === org)).toBe(true);
    expect(await monthSpend(userId)).toBe(3 * PRICE * MICROS);

    await fundWallet(person, 100);
    expect(
      (
        await person.api("POST", `/api/app/${world.appA}/completion-messages`, {
          body: { inputs: { query: "mine" }, response_mode: "blocking" },
        })
      ).status,
    ).toBe(200);
    expect(await db().select().from(invocations).where(eq(invocations.memberId, userId))).toHaveLength(3);
  });
});

describe("GET /api/organizations/{id}/usage/", () => {
  it("sums the organization's charged calls by member, key and app, as the invocations have them", async () => {
    const { person, userId, key, keyId } = await developerWithKey(null);
    expect((await callWithKey(key)).status).toBe(200);
    expect((await callAsMember(person)).status).toBe(200);
    const usage = await owner.api("GET", `/api/organizations/${org}/usage/`);
    expect(usage.status, JSON.stringify(usage.body)).toBe(200);
    expect(usage.body.month).toBe(new Date().toISOString().slice(0, 7));
    const rows = await db()
      .select({
        member: invocations.memberId,
        key: invocations.apiKeyId,
        charged: invocations.chargedCents,
      })
      .from(invocations)
      .where(
        and(
          eq(invocations.callerUserId, org),
          eq(invocations.purpose, "customer"),
          eq(invocations.status, "success"),
        ),
      );
    const sum = (list: typeof rows) => ({
      calls: list.length,
      charged_cents: list.reduce((total, row) => total + Number(row.charged), 0),
    });
    expect(usage.body.total).toEqual(sum(rows));
    expect(usage.body.total.calls).toBeGreaterThan(10);
    for (const line of usage.body.by_member)
      expect(line).toMatchObject(sum(rows.filter((row) => row.member === line.user_id)));
    expect(usage.body.by_member.find((line: { user_id: string }) => line.user_id === userId)).toMatchObject({
      calls: 2,
      charged_cents: 2 * PRICE,
    });
    expect(usage.body.by_key.find((line: { key_id: string }) => line.key_id === keyId)).toEqual({
      key_id: keyId,
      name: "ci",
      calls: 1,
      charged_cents: PRICE,
    });
    expect(usage.body.by_key.find((line: { key_id: string | null }) => line.key_id === null)).toMatchObject({
      name: "Signed-in calls",
      ...sum(rows.filter((row) => row.key === null)),
    });
    expect(usage.body.by_app).toEqual([expect.objectContaining({ slug: world.appA, ...sum(rows) })]);
    const lastYear = await owner.api("GET", `/api/organizations/${org}/usage/?month=2020-01`);
    expect(lastYear.body.total).toEqual({ calls: 0, charged_cents: 0 });
  });

  it("is for members who see the organization's money: 403 naming a developer's role, 404 to others, 400 naming a bad month", async () => {
    const { person } = await developerWithKey(null);
    const refused = await person.api("GET", `/api/organizations/${org}/usage/`);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      code: "organization_role",
      message: `Your role in ${orgName} is developer: a developer may not see the organization's money (wallet, receipts, payment methods, payouts). Ask an owner or admin of ${orgName} for a role that may.`,
    });
    const outsider = await createCaller(server.baseUrl, "Usage Outsider");
    const hidden = await outsider.api("GET", `/api/organizations/${org}/usage/`);
    expect(hidden.status).toBe(404);
    expect(hidden.body.message).toBe("Organization not found");
    const bad = await owner.api("GET", `/api/organizations/${org}/usage/?month=2024-13`);
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toHaveProperty("month");
  });
});
