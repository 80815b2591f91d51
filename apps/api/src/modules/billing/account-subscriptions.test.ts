import { afterEach, describe, expect, it } from "vitest";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";

const server = useTestServer();
const creator = useCaller(server, "Plan Seller");
afterEach(async () => {
  await expectReconciled(server.database.db);
});

async function appWithPlan(name: string, planName: string) {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name, visibility: "public", price_cents: 20 },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  const plan = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
    body: { name: planName, price_cents: 300, included_calls: 5 },
  });
  expect(plan.status).toBe(201);
  return { slug: app.slug as string, planId: plan.body.id as string };
}

const subscribe = (caller: Caller, slug: string, planId: string) =>
  caller.api("POST", `/api/app/${slug}/subscriptions/`, { body: { package_id: planId } });

describe("GET /api/subscriptions/ (My subscriptions)", () => {
  it("lists the caller's subscriptions across apps with each app's name, and nobody else's", async () => {
    const writer = await appWithPlan("Essay Writer", "Writer Pro");
    const coder = await appWithPlan("Code Helper", "Coder Basic");
    const consumer = await createCaller(server.baseUrl, "Subscriber");
    await fundWallet(consumer, 1000);
    expect((await subscribe(consumer, writer.slug, writer.planId)).status).toBe(201);
    expect((await subscribe(consumer, coder.slug, coder.planId)).status).toBe(201);

    const mine = await consumer.api("GET", "/api/subscriptions/");
    expect(mine.status).toBe(200);
    expect(mine.body).toHaveLength(2);
    expect(mine.body).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          application_slug: writer.slug,
          application_name: "Essay Writer",
          package_name: "Writer Pro",
          status: "active",
          calls_used: 0,
          calls_included: 5,
          cancel_at_period_end: false,
        }),
        expect.objectContaining({ application_slug: coder.slug, application_name: "Code Helper" }),
      ]),
    );

    const stranger = await createCaller(server.baseUrl, "Stranger");
    expect((await stranger.api("GET", "/api/subscriptions/")).body).toEqual([]);
    expect((await creator.api("GET", "/api/subscriptions/")).body).toEqual([]);
  });

  it("cancels at period end and resumes, as the list then shows; still listed once the app goes private", async () => {
    const { slug, planId } = await appWithPlan("Summariser", "Monthly");
    const consumer = await createCaller(server.baseUrl);
    await fundWallet(consumer, 500);
    const { body: subscription } = await subscribe(consumer, slug, planId);
    const path = `/api/app/${slug}/subscriptions/${subscription.id}/`;

    expect((await consumer.api("POST", `${path}cancel/`)).body.cancel_at_period_end).toBe(true);
    const [canceling] = (await consumer.api("GET", "/api/subscriptions/")).body;
    expect(canceling).toMatchObject({ id: subscription.id, cancel_at_period_end: true, status: "active" });

    const resumed = await consumer.api("PATCH", path, { body: { cancel_at_period_end: false } });
    expect(resumed.status).toBe(200);
    expect(resumed.body.cancel_at_period_end).toBe(false);
    const [kept] = (await consumer.api("GET", "/api/subscriptions/")).body;
    expect(kept.cancel_at_period_end).toBe(false);

    expect(
      (await creator.api("PATCH", `/api/app/${slug}/`, { body: { visibility: "private" } })).status,
    ).toBe(200);
    const [stillListed] = (await consumer.api("GET", "/api/subscriptions/")).body;
    expect(stillListed).toMatchObject({ id: subscription.id, application_name: "Summariser" });
    // Its subscriber can still cancel it; anyone else is told the app is not found, as for no app.
    expect((await consumer.api("POST", `${path}cancel/`)).body.cancel_at_period_end).toBe(true);
    const stranger = await createCaller(server.baseUrl);
    const refused = await stranger.api("POST", `${path}cancel/`);
    const missing = await stranger.api(
      "POST",
      `/api/app/no-such-app/subscriptions/${subscription.id}/cancel/`,
    );
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual(missing.body);
  });

  it("refuses to resume a subscription whose plan was withdrawn, naming why (409)", async () => {
    const { slug, planId } = await appWithPlan("Translator", "Yearly");
    const consumer = await createCaller(server.baseUrl);
    await fundWallet(consumer, 500);
    const { body: subscription } = await subscribe(consumer, slug, planId);
    expect((await creator.api("DELETE", `/api/app/${slug}/packages/${planId}/`)).status).toBe(204);

    const [ending] = (await consumer.api("GET", "/api/subscriptions/")).body;
    expect(ending.cancel_at_period_end).toBe(true);
    const resumed = await consumer.api("PATCH", `/api/app/${slug}/subscriptions/${subscription.id}/`, {
      body: { cancel_at_period_end: false },
    });
    expect(resumed.status).toBe(409);
    expect(resumed.body.message).toMatch(/withdrawn from sale/);
  });

  it("answers 401 without a token", async () => {
    const response = await fetch(`${server.baseUrl}/api/subscriptions/`);
    expect(response.status).toBe(401);
  });
});
