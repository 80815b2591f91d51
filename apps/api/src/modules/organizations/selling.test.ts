import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { startFakeOpenAi } from "../../test/fake-openai.ts";
import { actingFor } from "../../test/organizations.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";
import { reconcile } from "../billing/reconcile.ts";

// Selling as an organization (issue 43, decision 084): its developers build and publish apps that
// belong to it, consumers pay it, its members see its analytics and earnings by role, and its
// payouts go to the connected account a billing member sets up for it. On the real server.

const PRICE = 40;
let testDb: TestDatabase;
let vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
let server: TestServer;
let owner: Caller;
let developer: Caller;
let billing: Caller;
let viewer: Caller;
let consumer: Caller;
let org: string;
let slug: string;

beforeAll(async () => {
  vendor = await startFakeOpenAi();
  testDb = await createTestDatabase();
  server = await startTestServer(testDb, {
    env: { OPENAI_API_KEY: "sk-vendor", OPENAI_BASE_URL: vendor.baseUrl },
  });
  owner = await createCaller(server.baseUrl, "Studio Owner");
  developer = await createCaller(server.baseUrl, "Studio Developer");
  billing = await createCaller(server.baseUrl, "Studio Billing", { verified: true });
  viewer = await createCaller(server.baseUrl, "Studio Viewer");
  consumer = await createCaller(server.baseUrl, "Studio Customer");
  const created = await owner.api("POST", "/api/organizations/", { body: { name: "Haiku Studio" } });
  expect(created.status).toBe(201);
  org = created.body.id;
  for (const [person, role] of [
    [developer, "developer"],
    [billing, "billing"],
    [viewer, "viewer"],
  ] as const) {
    const invited = await owner.api("POST", `/api/organizations/${org}/invitations/`, {
      body: { email: person.email, role },
    });
    expect(invited.status).toBe(201);
  }
  for (const person of [developer, billing, viewer]) {
    const mails = (await fetch(`${server.baseUrl}/oidc/dev/outbox.json`).then((r) => r.json())) as {
      messages: { to: string; links: { url: string }[] }[];
    };
    const link = mails.messages.find((mail) => mail.to === person.email.toLowerCase())?.links[0]?.url;
    const accepted = await person.api("POST", `/api/invitations/${link?.split("/invitations/")[1]}/accept/`);
    expect(accepted.status).toBe(200);
  }
});
afterAll(async () => {
  await server?.stop();
  await vendor?.stop();
  await testDb?.destroy();
});

describe("an organization's app", () => {
  it("is built and published by its developer, belongs to it, and is paid for to it", async () => {
    const asDeveloper = actingFor(developer, org);
    const made = await asDeveloper.api("POST", "/api/app/", {
      body: { name: "Studio Haiku", visibility: "public", price_cents: PRICE },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    slug = made.body.slug;
    await asDeveloper.api("PATCH", `/api/app/${slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
    expect(
      (await asDeveloper.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } }))
        .status,
    ).toBe(200);
    // The organization's app, not the developer's own.
    expect((await developer.api("GET", `/api/app/${slug}/`)).status).toBe(404);
    expect((await actingFor(viewer, org).api("GET", `/api/app/${slug}/`)).status).toBe(200);
    // A viewer reads it but may not change it.
    const renamed = await actingFor(viewer, org).api("PATCH", `/api/app/${slug}/`, {
      body: { name: "Mine" },
    });
    expect(renamed.status).toBe(403);
    expect(renamed.body.code).toBe("organization_role");

    await fundWallet(consumer, 500);
    const key = (await consumer.api("POST", "/api/keys/", { body: { name: "buyer" } })).body.key;
    for (let i = 0; i < 3; i++) {
      const answered = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
        auth: key,
        body: { inputs: { query: `haiku ${i}` }, response_mode: "blocking" },
      });
      expect(answered.status).toBe(200);
    }
    await settledWallet(consumer);
    // Its analytics are every member's to read; its earnings only money roles'.
    const usage = await actingFor(viewer, org).api("GET", `/api/app/${slug}/analytics/usage/?days=7`);
    expect(usage.status).toBe(200);
    expect(usage.body.total_invocations).toBe(3);
    const earnings = await actingFor(billing, org).api("GET", "/api/wallet/earnings/");
    expect(earnings.status).toBe(200);
    expect((await actingFor(developer, org).api("GET", "/api/wallet/earnings/")).status).toBe(403);
    // The creator's share of 3 × $0.40 is the organization's, not any member's.
    const orgWallet = await settledWallet(actingFor(owner, org));
    expect(orgWallet.earnings_micros).toBeGreaterThan(0);
    for (const person of [owner, developer, billing])
      expect((await settledWallet(person)).earnings_micros).toBe(0);
    expect((await reconcile(server.database.db)).ok).toBe(true);
  });

  it("pays out to the connected account a verified billing member sets up for the organization", async () => {
    const asBilling = actingFor(billing, org);
    // A developer may not move its money; the owner's address is unverified here, and is named.
    expect((await actingFor(developer, org).api("POST", "/api/payouts/onboarding")).status).toBe(403);
    const unverified = await actingFor(owner, org).api("POST", "/api/payouts/onboarding");
    expect(unverified.status).toBe(403);
    expect(unverified.body.message).toContain(owner.email);
    const link = await asBilling.api("POST", "/api/payouts/onboarding");
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    const done = await fetch(link.body.url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "bank=succeeds",
      redirect: "manual",
    });
    expect(done.status).toBe(303);
    const summary = await asBilling.api("GET", "/api/payouts/");
    expect(summary.status).toBe(200);
    expect(summary.body.balance_micros).toBeGreaterThan(0);
    // The billing member's own payouts are untouched: their account has no connected account.
    const own = await billing.api("GET", "/api/payouts/");
    expect(own.body.balance_micros ?? 0).toBe(0);
    expect(JSON.stringify(own.body)).not.toEqual(JSON.stringify(summary.body));
  });
});
