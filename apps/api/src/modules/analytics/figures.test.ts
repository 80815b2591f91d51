import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useTestServer } from "../../test/use-test-server.ts";

/**
 * One set of figures (decision 029): each app's usage analytics and the creator's total give
 * gross, platform fee, model cost and net from the same rollups, for the same period, exact below
 * a cent; the net of paid calls is what the creator's earnings received for them.
 */
const server = useTestServer({
  env: { GATEWAY_RATE_LIMIT_PER_MINUTE: "1000", PLATFORM_FEE_PERCENT: "10" },
});

// The sandbox model costs nothing: any price covers it (decision 026).
const liveApp = async (creator: Caller, name: string, priceCents: number) =>
  (await createLiveApp(creator, { name, price_cents: priceCents }, { model: "sandbox" })).slug;
const call = (caller: Caller, slug: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, { body: { inputs: { query: "hi" } } });

describe("the creator's money figures", () => {
  it("are exact below a cent, the same per app and in total, and the net is what earnings received", async () => {
    const creator = await createCaller(server.baseUrl, "Figures Creator");
    const haiku = await liveApp(creator, "Haiku Writer", 5);
    const ode = await liveApp(creator, "Ode Maker", 7);
    const consumer = await createCaller(server.baseUrl, "Figures Consumer");
    await fundWallet(consumer, 1000);
    const earningsBefore = (await settledWallet(creator)).earnings_micros;

    // One 5¢ call: a fee of half a cent, not a cent.
    expect((await call(consumer, haiku)).status).toBe(200);
    const one = (await creator.api("GET", `/api/app/${haiku}/analytics/usage/?days=30`)).body;
    expect(one.figures).toEqual({
      period_days: 30,
      period: "Last 30 days",
      gross_micros: 50_000,
      fee_micros: 5_000,
      model_cost_micros: 0,
      net_micros: 45_000,
    });
    expect(one.total_revenue).toBe(0.05);

    for (let i = 0; i < 11; i++) expect((await call(consumer, haiku)).status).toBe(200);
    await Promise.all(
      Array.from({ length: 3 }, async () => expect((await call(consumer, ode)).status).toBe(200)),
    );

    const haikuFigures = (await creator.api("GET", `/api/app/${haiku}/analytics/usage/?days=30`)).body
      .figures;
    const odeFigures = (await creator.api("GET", `/api/app/${ode}/analytics/usage/?days=30`)).body.figures;
    expect(haikuFigures).toMatchObject({ gross_micros: 600_000, fee_micros: 60_000, net_micros: 540_000 });
    // 7¢ at 10%: 0.7¢ a call, exactly.
    expect(odeFigures).toMatchObject({ gross_micros: 210_000, fee_micros: 21_000, net_micros: 189_000 });
    const total = (await creator.api("GET", "/api/analytics/figures/?days=30")).body;
    for (const key of ["gross_micros", "fee_micros", "model_cost_micros", "net_micros"] as const)
      expect(total[key]).toBe(haikuFigures[key] + odeFigures[key]);
    expect(total.period).toBe("Last 30 days");
    // The 7-day window covers today too: the same figures.
    expect((await creator.api("GET", "/api/analytics/figures/?days=7")).body).toMatchObject({
      period: "Last 7 days",
      net_micros: total.net_micros,
    });

    // What the calls' net says is what the creator's earnings received for them.
    const earningsAfter = (await settledWallet(creator)).earnings_micros;
    expect(earningsAfter - earningsBefore).toBe(total.net_micros);

    // Nobody else's apps count, and another creator sees none of these.
    const other = await createCaller(server.baseUrl, "Other Creator");
    expect((await other.api("GET", "/api/analytics/figures/?days=30")).body).toMatchObject({
      gross_micros: 0,
      net_micros: 0,
    });
    expect((await other.api("GET", `/api/app/${haiku}/analytics/usage/?days=30`)).status).toBe(404);
  });

  it("takes the model cost off the net, the same in the app's and the total figures", async () => {
    const creator = await createCaller(server.baseUrl, "Costly Creator");
    const slug = await liveApp(creator, "Costly", 10);
    const consumer = await createCaller(server.baseUrl, "Costly Consumer");
    await fundWallet(consumer, 100);
    expect((await call(consumer, slug)).status).toBe(200);
    // A model cost recorded on the rollup, as a platform-keys call records it (a third of a cent).
    await server.database.db.execute(sql`
      update app_daily_stats set model_cost_micros = model_cost_micros + 3333
      where application_id = (select id from applications where slug = ${slug})
        and ctid = (select ctid from app_daily_stats where application_id =
                     (select id from applications where slug = ${slug}) limit 1)`);
    const app = (await creator.api("GET", `/api/app/${slug}/analytics/usage/?days=30`)).body.figures;
    expect(app).toMatchObject({
      gross_micros: 100_000,
      fee_micros: 10_000,
      model_cost_micros: 3_333,
      net_micros: 86_667,
    });
    expect((await creator.api("GET", "/api/analytics/figures/?days=30")).body).toMatchObject(app);
  });

  it("refuses a window it does not offer, naming the field", async () => {
    const creator = await createCaller(server.baseUrl, "Window Shopper");
    const answer = await creator.api("GET", "/api/analytics/figures/?days=12");
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/days/);
    expect((await creator.api("GET", "/api/analytics/figures/", { auth: "" })).status).toBe(401);
  });
});
