import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { fundWallet, settledWallet } from "../../test/caller.ts";
import { type EmbedWidget, embedWidget } from "../../test/embed-widget.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { reconcile } from "../billing/reconcile.ts";

const SHOP = "https://shop.example";
const PRICE = 25;

let other: TestServer;
let widget: EmbedWidget;
let otherWidget: EmbedWidget;

// Nobody's X-Forwarded-For is believed: the visitor's address is the connection's.
const env = { OPENAI_API_KEY: "sk-vendor-test", TRUST_PROXY: "false" };
const { server, vendor } = useVendorServer(env);
const creator = useCaller(server, "Capped Creator");

beforeAll(async () => {
  // A second API server on the same database (its own connections on PostgreSQL; PGlite data can
  // only be opened once, so there it shares the first one's), for the cap across processes.
  const shared = { ...server.database, close: async () => {} };
  const testDb = server.testDb;
  const second = testDb.kind === "postgres" ? testDb : { ...testDb, open: async () => shared };
  other = await startTestServer(second, {
    env: {
      ...env,
      OPENAI_BASE_URL: vendor.baseUrl,
      GATEWAY_RATE_LIMIT_PER_MINUTE: "1000",
      PUBLIC_URL: server.baseUrl,
    },
  });
  await fundWallet(creator, 5_000);
  widget = embedWidget(server.baseUrl, SHOP);
  const otherUrl = `http://127.0.0.1:${(other.app.server.address() as AddressInfo).port}`;
  otherWidget = embedWidget(otherUrl, SHOP, server.baseUrl);
});
afterAll(async () => {
  await other?.stop();
});
beforeEach(() => vendor.set({ kind: "echo" }));

async function embedApp(limits: Record<string, number>) {
  const app = await widget.createEmbedApp(creator);
  const saved = await creator.api("PUT", `/api/app/${app.slug}/embed`, { body: limits });
  expect(saved.status).toBe(200);
  return { ...app, settings: saved.body };
}

describe("the daily spending cap of embedded traffic", () => {
  it("has a safe default, shown with today's spend in the embed settings", async () => {
    const { slug } = await widget.createEmbedApp(creator);
    const settings = await creator.api("GET", `/api/app/${slug}/embed`);
    expect(settings.body).toMatchObject({
      daily_cap_cents: 500,
      spent_today_cents: 0,
      visitor_calls_per_hour: 20,
      visitor_calls_per_day: 100,
      allowed_origins: [SHOP],
    });
  });

  it("refuses the call that would pass it, on every API process, and charges the wallet exactly the cap", async () => {
    const { slug } = await embedApp({ daily_cap_cents: 3 * PRICE + 10 });
    const before = await settledWallet(creator);
    // Twelve visitors at once, half on each process: only three calls fit under the cap.
    const answers = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const client = i % 2 === 0 ? widget : otherWidget;
        const { token } = await client.loadWidget(slug, `${SHOP}/`);
        return client.sendMessage(slug, token);
      }),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 200, 200, ...Array(9).fill(429)]);
    const refused = answers.find((answer) => answer.status === 429);
    expect(refused?.body).toMatchObject({ code: "rate_limited", status: 429 });
    expect(refused?.body.message).toBe(
      "This app's daily spending cap for embedded use ($0.85) is reached; it resets at 00:00 UTC",
    );
    expect(Number(refused?.headers.get("retry-after"))).toBeGreaterThan(0);

    const after = await settledWallet(creator);
    // The three prices, and beside them the three calls' model costs (decision 062), which the cap does not count.
    const [spent] = await queryRows<{ cost: number }>(
      server.database.db,
      sql`select coalesce(sum(i.model_cost_micros), 0)::int as cost from invocations i
          join applications a on a.id = i.application_id where a.slug = ${slug}`,
    );
    const cost = spent?.cost ?? 0;
    expect(cost).toBeGreaterThan(0);
    expect(before.balance_micros - after.balance_micros).toBe(3 * PRICE * 10_000 + cost);
    const settings = await creator.api("GET", `/api/app/${slug}/embed`);
    expect(settings.body.spent_today_cents).toBe(3 * PRICE);
    expect((await reconcile(server.database.db)).ok).toBe(true);
  });

  it("gives the price back when a call is not charged, and 0 turns embedded calls off", async () => {
    const { slug } = await embedApp({ daily_cap_cents: PRICE });
    const { token } = await widget.loadWidget(slug, `${SHOP}/`);
    vendor.set({ kind: "status", status: 500, message: "boom" });
    expect((await widget.sendMessage(slug, token)).status).toBe(502);
    vendor.set({ kind: "echo" });
    expect((await creator.api("GET", `/api/app/${slug}/embed`)).body.spent_today_cents).toBe(0);
    expect((await widget.sendMessage(slug, token)).status).toBe(200);
    expect((await widget.sendMessage(slug, token)).status).toBe(429);

    await creator.api("PUT", `/api/app/${slug}/embed`, { body: { daily_cap_cents: 0 } });
    const off = await embedApp({ daily_cap_cents: 0 });
    const offToken = (await widget.loadWidget(off.slug, `${SHOP}/`)).token;
    expect((await widget.sendMessage(off.slug, offToken)).status).toBe(429);
  });

  it("refuses bad limits naming the field, and keeps the settings it was not given", async () => {
    const { slug, settings } = await embedApp({ daily_cap_cents: 1234 });
    expect(settings.daily_cap_cents).toBe(1234);
    for (const [body, field] of [
      [{ daily_cap_cents: -1 }, "daily_cap_cents"],
      [{ daily_cap_cents: 1.5 }, "daily_cap_cents"],
      [{ visitor_calls_per_hour: 0 }, "visitor_calls_per_hour"],
      [{ visitor_calls_per_day: "many" }, "visitor_calls_per_day"],
    ] as const) {
      const refused = await creator.api("PUT", `/api/app/${slug}/embed`, { body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.fields).toHaveProperty([field]);
    }
    const kept = await creator.api("PUT", `/api/app/${slug}/embed`, { body: { visitor_calls_per_hour: 7 } });
    expect(kept.body).toMatchObject({
      daily_cap_cents: 1234,
      visitor_calls_per_hour: 7,
      allowed_origins: [SHOP],
    });
  });
});

describe("per-visitor limits of embedded traffic", () => {
  it("are not multiplied by rotating X-Forwarded-For when no proxy is trusted", async () => {
    const { slug } = await embedApp({ visitor_calls_per_hour: 2 });
    const { token } = await widget.loadWidget(slug, `${SHOP}/`);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await widget.sendMessage(slug, token, { ip: `203.0.113.${i}` })).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
  });

  it("count every widget load from one address together, and each widget load on its own", async () => {
    const { slug } = await embedApp({ visitor_calls_per_hour: 2 });
    const first = await widget.loadWidget(slug, `${SHOP}/`);
    expect((await widget.sendMessage(slug, first.token)).status).toBe(200);
    const second = await widget.loadWidget(slug, `${SHOP}/`);
    expect((await widget.sendMessage(slug, second.token)).status).toBe(200);
    const third = await widget.loadWidget(slug, `${SHOP}/`);
    const limited = await widget.sendMessage(slug, third.token);
    expect(limited.status).toBe(429);
    expect(limited.body.message).toBe(
      "Too many messages from this visitor: at most 2 an hour; try again later",
    );
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
