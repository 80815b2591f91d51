import { describe, expect, it } from "vitest";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";

/** Decision 081: only people who paid for an app review it; one review each; the creator replies once. */
const server = useTestServer({ env: { GATEWAY_RATE_LIMIT_PER_MINUTE: "1000" } });
const creator = useCaller(server, "Ada Creator");
const callBuyer = useCaller(server, "Call Buyer");
const planBuyer = useCaller(server, "Plan Buyer");
const browser = useCaller(server, "Just Browsing");

const prompt = {
  model: "sandbox",
  prompt_template: "Say hello to {{name}}.",
  input_schema: {
    type: "object",
    properties: { name: { type: "string", maxLength: 40 } },
    required: ["name"],
    additionalProperties: false,
  },
  changelog: "test setup",
};

let slug = "";
const reviews = (path = "") => `/api/explore/apps/${slug}/reviews${path}`;
const tryApp = (caller: Caller) =>
  caller.api("POST", `/api/explore/apps/${slug}/try`, { body: { inputs: { name: "Ada" } } });

describe("reviews of an app (decision 081)", () => {
  it("refuses everyone who has not paid, naming why, and the creator too", async () => {
    ({ slug } = await createLiveApp(creator, { name: "Greeter", price_cents: 5 }, prompt));
    const refused = await browser.api("PUT", reviews("/mine"), { body: { rating: 5 } });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe("Only buyers who have paid for this app can review it");
    expect((await browser.api("GET", reviews("/mine"))).body).toEqual({
      review: null,
      can_review: false,
      reason: "Only buyers who have paid for this app can review it",
      can_reply: false,
    });
    // The creator's own calls are free: they never make the creator a buyer.
    expect((await tryApp(creator)).status).toBe(200);
    expect((await creator.api("GET", reviews("/mine"))).body).toMatchObject({
      can_review: false,
      can_reply: true,
    });
    const own = await creator.api("PUT", reviews("/mine"), { body: { rating: 5 } });
    expect(own.status).toBe(403);
    expect(own.body.message).toBe("Creators cannot review their own app");
    // Signed out, or with an API key: 401.
    expect((await browser.api("PUT", reviews("/mine"), { body: { rating: 5 }, auth: "" })).status).toBe(401);
  });

  it("lets a buyer of one charged call rate and review, once, and edit it", async () => {
    await fundWallet(callBuyer, 100);
    expect((await callBuyer.api("GET", reviews("/mine"))).body.can_review).toBe(false);
    expect((await tryApp(callBuyer)).status).toBe(200);
    expect((await callBuyer.api("GET", reviews("/mine"))).body).toEqual({
      review: null,
      can_review: true,
      reason: null,
      can_reply: false,
    });
    const written = await callBuyer.api("PUT", reviews("/mine"), {
      body: { rating: 4, body: "  Friendly and quick.  " },
    });
    expect(written.status).toBe(200);
    expect(written.body).toMatchObject({
      rating: 4,
      body: "Friendly and quick.",
      author_name: "Call Buyer",
      reply: null,
    });
    const edited = await callBuyer.api("PUT", reviews("/mine"), { body: { rating: 2 } });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ id: written.body.id, rating: 2, body: "" });
    const list = await browser.api("GET", reviews(), { auth: "" });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 1, rating: { average: 2, count: 1 } });
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([written.body.id]);
    for (const leaked of ["author_id", "email", "application_id"])
      expect(list.body.data[0]).not.toHaveProperty(leaked);
  });

  it("lets a subscriber who paid for a plan review, and shows the average on Explore", async () => {
    const plan = await creator.api("POST", `/api/app/${slug}/packages/`, {
      body: { name: "Pro", price_cents: 300, included_calls: 10 },
    });
    expect(plan.status).toBe(201);
    await fundWallet(planBuyer, 1_000);
    const subscribed = await planBuyer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: plan.body.id },
    });
    expect(subscribed.status).toBe(201);
    const written = await planBuyer.api("PUT", reviews("/mine"), {
      body: { rating: 5, body: "Worth the plan." },
    });
    expect(written.status).toBe(200);

    const detail = await browser.api("GET", `/api/explore/apps/${slug}`, { auth: "" });
    expect(detail.body.rating).toEqual({ average: 3.5, count: 2 });
    const listed = await browser.api("GET", "/api/explore/apps?q=Greeter", { auth: "" });
    expect(listed.body.data[0].rating).toEqual({ average: 3.5, count: 2 });
  });

  it("refuses a rating outside 1-5, a fractional one and an over-long text with a 400 naming the field", async () => {
    for (const [body, field] of [
      [{ rating: 0 }, "rating"],
      [{ rating: 6 }, "rating"],
      [{ rating: 4.5 }, "rating"],
      [{ rating: "5" }, "rating"],
      [{}, "rating"],
      [{ rating: 5, body: "x".repeat(2001) }, "body"],
      [{ rating: 5, stars: 5 }, "stars"],
    ] as const) {
      const answer = await planBuyer.api("PUT", reviews("/mine"), { body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(answer.body.fields)).toEqual([field]);
    }
  });

  it("lets the creator reply once, and nobody else", async () => {
    const { data } = (await browser.api("GET", reviews(), { auth: "" })).body;
    const target = data.find((r: { author_name: string }) => r.author_name === "Plan Buyer");
    const path = reviews(`/${target.id}/reply`);
    expect((await planBuyer.api("PUT", path, { body: { reply: "Me again" } })).status).toBe(404);
    const replied = await creator.api("PUT", path, { body: { reply: "Thank you!" } });
    expect(replied.status).toBe(200);
    expect(replied.body).toMatchObject({
      id: target.id,
      reply: "Thank you!",
      replied_at: expect.any(String),
    });
    const again = await creator.api("PUT", path, { body: { reply: "Thanks twice" } });
    expect(again.status).toBe(409);
    expect(
      (
        await creator.api("PUT", reviews("/00000000-0000-4000-8000-000000000000/reply"), {
          body: { reply: "?" },
        })
      ).status,
    ).toBe(404);
    expect((await creator.api("PUT", reviews("/not-a-uuid/reply"), { body: { reply: "?" } })).status).toBe(
      400,
    );
  });

  it("lets only the author delete their review; a second delete is a 404", async () => {
    expect((await browser.api("DELETE", reviews("/mine"))).status).toBe(404);
    expect((await callBuyer.api("DELETE", reviews("/mine"))).status).toBe(204);
    expect((await callBuyer.api("DELETE", reviews("/mine"))).status).toBe(404);
    const list = await browser.api("GET", reviews(), { auth: "" });
    expect(list.body).toMatchObject({ total: 1, rating: { average: 5, count: 1 } });
    expect(list.body.data[0].author_name).toBe("Plan Buyer");
  });

  it("answers 404 for reviews of an app that is not listed", async () => {
    const hidden = await createCaller(server.baseUrl, "Hidden");
    const draft = await hidden.api("POST", "/api/app/", {
      body: { name: "Hidden Draft", type: "prompt", interaction_mode: "completion", visibility: "public" },
    });
    expect(draft.status).toBe(201);
    expect(
      (await browser.api("GET", `/api/explore/apps/${draft.body.slug}/reviews`, { auth: "" })).status,
    ).toBe(404);
    expect((await hidden.api("GET", `/api/explore/apps/${draft.body.slug}/reviews/mine`)).status).toBe(404);
  });
});
