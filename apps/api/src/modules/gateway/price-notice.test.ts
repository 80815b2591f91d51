import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { applications, invocations } from "../../db/schema/index.ts";
import { forgetLookups } from "../../lib/lookup-cache.ts";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";

// Decision 021: a consumer is never charged more than a price they could see.

const DAY_MS = 86_400_000;

const { server, vendor } = useVendorServer({
  GATEWAY_RATE_LIMIT_PER_MINUTE: "100000",
  PRICE_INCREASE_NOTICE_DAYS: "7",
});
const creator = useCaller(server, "Price Setter");
const consumer = useCaller(server, "Price Watcher");

beforeAll(async () => {
  await fundWallet(consumer, 100_000);
});

async function liveApp(priceCents: number): Promise<string> {
  const created = await creator.api("POST", "/api/app/", {
    body: {
      name: `Priced ${Math.random().toString(36).slice(2, 7)}`,
      visibility: "public",
      price_cents: priceCents,
    },
  });
  expect(created.status).toBe(201);
  const slug = created.body.slug as string;
  await creator.api("PATCH", `/api/app/${slug}/prompt/`, { body: { model: "gpt-4-turbo", max_tokens: 64 } });
  await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  return slug;
}

const call = (
  caller: Caller,
  slug: string,
  options: { body?: object; headers?: Record<string, string> } = {},
) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, {
    body: { inputs: { query: "hi" }, ...options.body },
    headers: options.headers,
  });

/** The prices charged for the app's calls, oldest first. */
async function charges(slug: string): Promise<number[]> {
  const db = server.database.db;
  const [app] = await db
    .select({ id: applications.id })
    .from(applications)
    .where(eq(applications.slug, slug));
  const rows = await db
    .select({ charged: invocations.chargedCents, at: invocations.createdAt })
    .from(invocations)
    .where(eq(invocations.applicationId, app?.id ?? ""));
  return rows.sort((a, b) => a.at.getTime() - b.at.getTime()).map((row) => row.charged);
}

/** Moves an announced increase's moment, as if the notice had been given long ago. */
async function announceFor(slug: string, at: Date) {
  await server.database.db
    .update(applications)
    .set({ pendingPriceAt: at })
    .where(eq(applications.slug, slug));
  forgetLookups(server.database.db, "applications");
}

describe("a price increase", () => {
  it("raised mid-burst is charged only from its announced moment, even by a process holding the row in its cache", async () => {
    const slug = await liveApp(10);
    const burst = () => Promise.all(Array.from({ length: 5 }, () => call(consumer, slug)));
    const [first, raised, second] = await Promise.all([
      burst(),
      creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 5000 } }),
      burst(),
    ]);
    for (const answer of [...first, ...second]) expect(answer.status).toBe(200);
    expect(raised.body).toMatchObject({ price_cents: 10, pending_price_cents: 5000 });
    const announcedAt = Date.parse(raised.body.pending_price_at);
    expect(Math.abs(announcedAt - (Date.now() + 7 * DAY_MS))).toBeLessThan(60_000);
    expect((await call(consumer, slug)).status).toBe(200);
    expect(await charges(slug)).toEqual(Array(11).fill(10));

    // The notice runs out in one second: the row cached by the next call switches price on time.
    const at = new Date(Date.now() + 1000);
    await announceFor(slug, at);
    expect((await call(consumer, slug)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, at.getTime() - Date.now() + 50));
    expect((await call(consumer, slug)).status).toBe(200);
    expect((await charges(slug)).slice(-2)).toEqual([10, 5000]);
    const shown = await creator.api("GET", `/api/app/${slug}/`);
    expect(shown.body).toMatchObject({
      price_cents: 5000,
      pending_price_cents: null,
      pending_price_at: null,
    });
  });

  it("is shown by /info, Explore and the creator's app until it applies; a decrease applies at once", async () => {
    const slug = await liveApp(20);
    const raised = await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 90 } });
    const notice = {
      price_cents: 20,
      pending_price_cents: 90,
      pending_price_at: raised.body.pending_price_at,
    };
    expect(notice.pending_price_at).toEqual(expect.any(String));
    const info = await consumer.api("GET", `/api/app/${slug}/info`);
    expect(info.body).toEqual({
      name: expect.any(String),
      description: "",
      tags: [],
      mode: "completion",
      ...notice,
    });
    expect((await consumer.api("GET", `/api/explore/apps/${slug}`)).body).toMatchObject(notice);
    const listed = await consumer.api("GET", `/api/explore/apps?max_price_cents=20&q=${slug.slice(7)}`);
    expect(listed.body.data).toEqual([expect.objectContaining({ slug, ...notice })]);

    const lowered = await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 3 } });
    expect(lowered.body).toMatchObject({ price_cents: 3, pending_price_cents: null, pending_price_at: null });
    expect((await call(consumer, slug)).status).toBe(200);
    expect(await charges(slug)).toEqual([3]);
    expect((await consumer.api("GET", `/api/app/${slug}/info`)).body).toMatchObject({
      price_cents: 3,
      pending_price_cents: null,
    });
  });
});

describe("a price increase without notice", () => {
  it("applies at once to a draft no one else has called, but not to one taken offline after paid calls", async () => {
    const { body: draft } = await creator.api("POST", "/api/app/", {
      body: { name: "Draft", price_cents: 100 },
    });
    const prepared = await creator.api("PATCH", `/api/app/${draft.slug}/`, { body: { price_cents: 400 } });
    expect(prepared.body).toMatchObject({ price_cents: 400, pending_price_cents: null });

    const slug = await liveApp(10);
    expect((await call(consumer, slug)).status).toBe(200);
    await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "draft" } });
    const raised = await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 5000 } });
    expect(raised.body).toMatchObject({ price_cents: 10, pending_price_cents: 5000 });
    await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
    expect((await call(consumer, slug)).status).toBe(200);
    expect(await charges(slug)).toEqual([10, 10]);
  });
});

describe("a caller's maximum price", () => {
  it("refuses a call priced above it with 412 before any payment or upstream call", async () => {
    const slug = await liveApp(10);
    const careful = await createCaller(server.baseUrl, "Careful");
    await fundWallet(careful, 1000);
    const upstreamCalls = vendor.requests.length;
    const refusals = [
      await call(careful, slug, { headers: { "Promptmint-Max-Price-Cents": "9" } }),
      await call(careful, slug, { headers: { "X-Max-Price-Cents": "9" } }),
      await call(careful, slug, { body: { max_price_cents: 9 } }),
      // The lowest cap wins when several are sent.
      await call(careful, slug, { body: { max_price_cents: 50 }, headers: { "X-Max-Price-Cents": "9" } }),
      await call(careful, slug, { body: { max_price_cents: 9, response_mode: "streaming" } }),
      await careful.api("POST", `/api/explore/apps/${slug}/try`, {
        body: { inputs: { query: "hi" }, max_price_cents: 9 },
      }),
    ];
    for (const refused of refusals) {
      expect(refused.status).toBe(412);
      expect(refused.body).toEqual({
        code: "price_above_maximum",
        status: 412,
        message:
          "This call costs 10 cents ($0.10), above your maximum of 9 cents ($0.09); nothing was charged",
      });
    }
    const openAi = await careful.api("POST", "/api/v1/chat/completions", {
      body: { model: slug, messages: [{ role: "user", content: "hi" }], max_price_cents: 9 },
    });
    expect(openAi.status).toBe(412);
    expect(openAi.body.error).toMatchObject({ code: "price_above_maximum", type: "invalid_request_error" });

    expect(vendor.requests.length).toBe(upstreamCalls);
    expect(await charges(slug)).toEqual([]);
    expect(await settledWallet(careful)).toMatchObject({ balance_micros: 10_000_000, held_micros: 0 });

    const atMaximum = await call(careful, slug, { headers: { "Promptmint-Max-Price-Cents": "10" } });
    expect(atMaximum.status).toBe(200);
    expect(await charges(slug)).toEqual([10]);
  });

  it("compares with the price charged now, not an announced increase", async () => {
    const slug = await liveApp(10);
    await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 500 } });
    expect((await call(consumer, slug, { body: { max_price_cents: 10 } })).status).toBe(200);
    await announceFor(slug, new Date(Date.now() - 1000));
    expect((await call(consumer, slug, { body: { max_price_cents: 10 } })).status).toBe(412);
    expect(await charges(slug)).toEqual([10]);
  });

  it("answers 400 naming the header or field when the maximum is not a whole number of cents", async () => {
    const slug = await liveApp(10);
    for (const value of ["abc", "-1", "1.5", ""]) {
      const answer = await call(consumer, slug, { headers: { "Promptmint-Max-Price-Cents": value } });
      expect(answer.status).toBe(400);
      expect(answer.body.fields).toEqual({
        "Promptmint-Max-Price-Cents": "must be a whole number of cents, 0 or more",
      });
    }
    const header = await call(consumer, slug, { headers: { "X-Max-Price-Cents": "ten" } });
    expect(header.body.fields).toEqual({ "X-Max-Price-Cents": "must be a whole number of cents, 0 or more" });
    for (const value of ["5", -1, 1.5, null]) {
      const answer = await call(consumer, slug, { body: { max_price_cents: value } });
      expect(answer.status).toBe(400);
      expect(Object.keys(answer.body.fields)).toEqual(["max_price_cents"]);
    }
    const openAi = await consumer.api("POST", "/api/v1/chat/completions", {
      body: { model: slug, messages: [{ role: "user", content: "hi" }], max_price_cents: -5 },
    });
    expect(openAi.status).toBe(400);
    expect(openAi.body.error.message).toMatch(/max_price_cents/);
    expect(await charges(slug)).toEqual([]);
  });
});
