import { eq } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { invocations } from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { type EmbedWidget, embedWidget } from "../../test/embed-widget.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { reconcile } from "../billing/reconcile.ts";
import { createEmbedTokens } from "./embed.service.ts";

const SHOP = "https://shop.example";
const RATE_LIMIT = 4;

let widget: EmbedWidget;

const { server, vendor } = useVendorServer({
  GATEWAY_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
});
const creator = useCaller(server, "Embed Creator");
const stranger = useCaller(server, "Stranger");

beforeAll(async () => {
  await fundWallet(creator, 2_000);
  widget = embedWidget(server.baseUrl, SHOP);
});
beforeEach(() => vendor.set({ kind: "echo" }));

// The widget's calls as a browser on SHOP makes them (test/embed-widget.ts).
const createEmbedApp: EmbedWidget["createEmbedApp"] = (...args) => widget.createEmbedApp(...args);
const loadWidget: EmbedWidget["loadWidget"] = (...args) => widget.loadWidget(...args);
const sendMessage: EmbedWidget["sendMessage"] = (...args) => widget.sendMessage(...args);

async function wallet(caller: Caller) {
  return (await caller.api("GET", "/api/wallet/")).body as {
    balance_micros: number;
    held_micros: number;
    earnings_micros: number;
  };
}

describe("allowed origins", () => {
  it("are managed by the owner, normalised, and give the snippet; other people get 404", async () => {
    const { slug } = await createEmbedApp(creator, { origins: [] });
    const initial = await creator.api("GET", `/api/app/${slug}/embed`);
    expect(initial.body).toEqual({
      allowed_origins: [],
      snippet: `<script src="${server.baseUrl}/embed.js" data-app="${slug}" async></script>`,
      price_cents: 25,
      pending_price_cents: null,
      pending_price_at: null,
      daily_cap_cents: 500,
      spent_today_cents: 0,
      visitor_calls_per_hour: 20,
      visitor_calls_per_day: 100,
    });
    const saved = await creator.api("PUT", `/api/app/${slug}/embed`, {
      body: { allowed_origins: ["https://Shop.example/", SHOP, "http://localhost:8080"] },
    });
    expect(saved.body.allowed_origins).toEqual(["http://localhost:8080", SHOP]);
    expect((await creator.api("GET", `/api/app/${slug}/embed`)).body.allowed_origins).toEqual([
      "http://localhost:8080",
      SHOP,
    ]);

    expect((await stranger.api("GET", `/api/app/${slug}/embed`)).status).toBe(404);
    const hijack = await stranger.api("PUT", `/api/app/${slug}/embed`, {
      body: { allowed_origins: ["https://evil.example"] },
    });
    expect(hijack.status).toBe(404);
    expect((await creator.api("GET", `/api/app/${slug}/embed`, { auth: "" })).status).toBe(401);
    expect((await creator.api("GET", `/api/app/${slug}/embed`)).body.allowed_origins).not.toContain(
      "https://evil.example",
    );
  });

  it.each([
    ["a path", "https://shop.example/store"],
    ["a wildcard", "https://*.example.com"],
    ["another scheme", "ftp://shop.example"],
    ["no scheme", "shop.example"],
  ])("refuses an origin with %s (400 naming the field)", async (_what, origin) => {
    const { slug } = await createEmbedApp(creator, { origins: [] });
    const refused = await creator.api("PUT", `/api/app/${slug}/embed`, {
      body: { allowed_origins: [SHOP, origin] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.fields).toEqual({
      "allowed_origins.1": "must be an origin like https://example.com (scheme, host and port; no path)",
    });
  });

  it("refuses more than 20 origins", async () => {
    const { slug } = await createEmbedApp(creator, { origins: [] });
    const origins = Array.from({ length: 21 }, (_, i) => `https://site${i}.example`);
    const refused = await creator.api("PUT", `/api/app/${slug}/embed`, {
      body: { allowed_origins: origins },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.fields).toEqual({ allowed_origins: "may list at most 20 origins" });
  });
});

describe("the widget page", () => {
  it("is issued a token only when framed by an allowed origin, and may only be framed by those", async () => {
    const { slug } = await createEmbedApp(creator, { origins: [SHOP, "http://localhost:8080"] });
    const allowed = await loadWidget(slug, `${SHOP}/products/tea`);
    expect(allowed.status).toBe(200);
    expect(allowed.token).toMatch(/^ey/);
    expect(allowed.csp).toContain(`frame-ancestors http://localhost:8080 ${SHOP}`);
    expect(allowed.html).toContain('aria-label="Conversation"');
    // A visitor can reach the app's plans on Promptmint, in a new tab (issue 42).
    expect(allowed.html).toMatch(
      new RegExp(`<a href="[^"]*/explore/${slug}#plans" target="_blank" rel="noopener">Plans</a>`),
    );

    for (const hostPage of ["https://evil.example/", undefined]) {
      const refused = await loadWidget(slug, hostPage);
      expect(refused.status).toBe(403);
      expect(refused.token).toBeUndefined();
      expect(refused.html).toContain("only be shown on the sites its creator allowed");
    }
  });

  it("is not served for apps that are not live embed apps", async () => {
    const { slug } = await createEmbedApp(creator, { visibility: "public" });
    const page = await loadWidget(slug, `${SHOP}/`);
    expect(page.status).toBe(404);
    expect(page.token).toBeUndefined();
    expect(page.csp).toContain("frame-ancestors 'none'");
  });

  it("is added to a page by /embed.js", async () => {
    const response = await fetch(`${server.baseUrl}/embed.js`);
    expect(response.headers.get("content-type")).toContain("javascript");
    const loader = await response.text();
    expect(loader).toContain("document.currentScript");
    expect(loader).toContain('frame.referrerPolicy = "origin"');
  });
});

describe("widget calls", () => {
  it("are answered, recorded for the visitor, and charged once to the creator's wallet (the price to the platform, the model cost beside it)", async () => {
    const { slug, id } = await createEmbedApp(creator);
    const { token } = await loadWidget(slug, `${SHOP}/`);
    const before = await settledWallet(creator);

    const first = await sendMessage(slug, token, { body: { query: "What is green tea?" } });
    expect(first.status).toBe(200);
    expect(first.body.answer).toContain("What is green tea?");
    expect(first.headers.get("ratelimit-limit")).toBe(String(RATE_LIMIT));
    // The host page itself may call too, and is allowed to read the answer.
    const second = await sendMessage(slug, token, {
      origin: SHOP,
      body: { query: "And oolong?", conversation_id: first.body.conversation_id },
    });
    expect(second.status).toBe(200);
    expect(second.body.conversation_id).toBe(first.body.conversation_id);
    expect(second.headers.get("access-control-allow-origin")).toBe(SHOP);

    const after = await settledWallet(creator);
    const rows = await server.database.db.select().from(invocations).where(eq(invocations.applicationId, id));
    // Two prices to the platform, and each call's model cost from the same wallet (decision 062).
    const modelCost = rows.reduce((sum, row) => sum + row.modelCostMicros, 0);
    expect(modelCost).toBeGreaterThan(0);
    expect(after.balance_micros).toBe(before.balance_micros - 500_000 - modelCost);
    expect(after.held_micros / 10_000).toBe(0);
    expect(after.earnings_micros / 10_000).toBe(before.earnings_micros / 10_000);
    expect(rows).toHaveLength(2);
    expect(rows.every((row) => row.status === "success" && row.endUser?.startsWith("embed:"))).toBe(true);
    expect(rows.every((row) => row.chargedCents === 0)).toBe(true);
    expect((await reconcile(server.database.db)).ok).toBe(true);
  });

  it("are not charged when the model fails", async () => {
    const { slug } = await createEmbedApp(creator);
    const { token } = await loadWidget(slug, `${SHOP}/`);
    const before = await settledWallet(creator);
    vendor.set({ kind: "status", status: 500, message: "boom" });
    const failed = await sendMessage(slug, token);
    expect(failed.status).toBe(502);
    const after = await wallet(creator);
    expect(after.balance_micros / 10_000).toBe(before.balance_micros / 10_000);
    expect(after.held_micros / 10_000).toBe(0);
  });

  it("answer 402 without the creator's balance when the creator's wallet is empty", async () => {
    const broke = await createCaller(server.baseUrl, "Broke Creator");
    const { slug, id } = await createEmbedApp(broke);
    const { token } = await loadWidget(slug, `${SHOP}/`);
    const refused = await sendMessage(slug, token);
    expect(refused.status).toBe(402);
    expect(refused.body.message).toBe("This assistant is unavailable right now");
    const rows = await server.database.db.select().from(invocations).where(eq(invocations.applicationId, id));
    expect(rows).toHaveLength(0);
  });

  it("refuse bad input with 400 and charge nothing", async () => {
    const { slug } = await createEmbedApp(creator);
    const { token } = await loadWidget(slug, `${SHOP}/`);
    const before = await wallet(creator);
    const refused = await sendMessage(slug, token, { body: { query: "   " } });
    expect(refused.status).toBe(400);
    expect(refused.body.fields).toEqual({ query: "is required" });
    expect((await wallet(creator)).balance_micros / 10_000).toBe(before.balance_micros / 10_000);
  });

  it("are rate limited per visitor", async () => {
    const { slug } = await createEmbedApp(creator);
    const { token } = await loadWidget(slug, `${SHOP}/`);
    for (let call = 0; call < RATE_LIMIT; call++)
      expect((await sendMessage(slug, token, { ip: "10.9.9.1" })).status).toBe(200);
    const limited = await sendMessage(slug, token, { ip: "10.9.9.1" });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await sendMessage(slug, token, { ip: "10.9.9.2" })).status).toBe(200);
  });

  it("of a completion app ask for the prompt's inputs and fill them in", async () => {
    const { slug } = await createEmbedApp(creator, {
      mode: "completion",
      prompt: {
        prompt_template: "Write about {{topic}}: {{query}}",
        input_schema: {
          type: "object",
          properties: {
            topic: { type: "string", description: "Topic" },
            query: { type: "string" },
          },
          required: ["topic"],
        },
      },
    });
    const { html, token } = await loadWidget(slug, `${SHOP}/`);
    expect(html).toMatch(/<label>Topic\s*<input name="topic" data-input="text" type="text" required>/);
    expect(html).not.toContain('name="query" data-input');

    const missing = await sendMessage(slug, token, { body: { query: "in two lines" } });
    expect(missing.status).toBe(400);
    expect(missing.body.fields).toHaveProperty(["inputs.topic"]);
    const answered = await sendMessage(slug, token, {
      body: { query: "in two lines", inputs: { topic: "matcha" } },
    });
    expect(answered.status).toBe(200);
    expect(answered.body.answer).toContain("Write about matcha: in two lines");
    expect(answered.body.conversation_id).toBeUndefined();
  });
});

describe("embed tokens", () => {
  it("are refused without, forged, expired or for another app", async () => {
    const app = await createEmbedApp(creator);
    const other = await createEmbedApp(creator);
    const { token } = await loadWidget(app.slug, `${SHOP}/`);
    const otherToken = (await loadWidget(other.slug, `${SHOP}/`)).token;
    const tokens = createEmbedTokens(server.config.secretKey, () => Date.now() - 11 * 60_000);
    const expired = await tokens.issue(app.id, SHOP);
    const forged = await createEmbedTokens("another-secret-key-that-is-long-enough-000").issue(app.id, SHOP);

    expect(await sendMessage(app.slug, undefined)).toMatchObject({ status: 401 });
    expect(await sendMessage(app.slug, forged)).toMatchObject({
      status: 401,
      body: { message: "Invalid embed token" },
    });
    expect(await sendMessage(app.slug, expired)).toMatchObject({
      status: 401,
      body: { message: "The embed token has expired; reload the widget" },
    });
    expect(await sendMessage(app.slug, otherToken)).toMatchObject({
      status: 403,
      body: { message: "This embed token was issued for another app" },
    });
    expect((await sendMessage(app.slug, token)).status).toBe(200);
  });

  it("are refused from any origin but the widget's and the site they were issued to", async () => {
    const { slug } = await createEmbedApp(creator, { origins: [SHOP, "https://blog.example"] });
    const { token } = await loadWidget(slug, `${SHOP}/`);
    const before = await wallet(creator);

    for (const origin of ["https://evil.example", "https://blog.example", null]) {
      const refused = await sendMessage(slug, token, { origin });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toMatch(/may not use this embed token$/);
    }
    const preflight = await sendMessage(slug, token, { origin: "https://evil.example", method: "OPTIONS" });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    const allowedPreflight = await sendMessage(slug, token, { origin: SHOP, method: "OPTIONS" });
    expect(allowedPreflight.status).toBe(204);
    expect(allowedPreflight.headers.get("access-control-allow-origin")).toBe(SHOP);
    expect((await wallet(creator)).balance_micros / 10_000).toBe(before.balance_micros / 10_000);
  });

  it("stop working when their site is removed from the allowed origins", async () => {
    const { slug } = await createEmbedApp(creator);
    const { token } = await loadWidget(slug, `${SHOP}/`);
    await creator.api("PUT", `/api/app/${slug}/embed`, {
      body: { allowed_origins: ["https://new.example"] },
    });
    const refused = await sendMessage(slug, token);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe(`${SHOP} is no longer allowed to embed this app`);
  });
});
