import { beforeAll, describe, expect, it } from "vitest";
import { fundWallet, settledWallet } from "../../test/caller.ts";
import { embedWidget } from "../../test/embed-widget.ts";
import { useCaller, useX402Server } from "../../test/use-test-server.ts";
import { x402Wallet } from "../../test/x402-facilitator.ts";

// A call's input is bounded by what it pays (docs/decisions/063), for the payers without a
// consumer's wallet: an agent paying with x402 (its payment is never settled) and an embedded
// widget (its owner pays the whole price; the day's cap gets it back).

const { server, vendor, facilitator } = useX402Server();
const creator = useCaller(server, "Bound Agent Seller");
const SHOP = "https://shop.example";
const agent = x402Wallet();

beforeAll(async () => {
  facilitator.mint(agent.address, 1_000_000n);
  await fundWallet(creator, 2_000);
});

describe("a call's input is bounded by what it pays", () => {
  it("x402: an agent's oversized call is refused with 413 and its payment is never settled", async () => {
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name: "Bounded for agents", visibility: "public", price_cents: 7 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { model: "gpt-4-turbo", max_tokens: 512 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    const url = `${server.baseUrl}/api/app/${app.slug}/completion-messages`;
    const send = (query: string) =>
      agent.fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ inputs: {}, query, response_mode: "blocking" }),
      });
    const transfers = facilitator.transfers.length;
    const vendorCalls = vendor.requests.length;
    // 7¢ less 10% = 63,000 micros: (63,000 − 512 × 30) / 10 = 4,764 input tokens.
    const refused = await send("q".repeat(6_000));
    expect(refused.status).toBe(413);
    const body = await refused.json();
    expect(body).toMatchObject({ code: "input_too_large", status: 413 });
    expect(body.message).toContain("4,764 input tokens");
    expect(facilitator.transfers.length).toBe(transfers);
    expect(vendor.requests.length).toBe(vendorCalls);
    const answered = await send("a haiku about rain");
    expect(answered.status).toBe(200);
    expect((await answered.json()).metadata.usage).toMatchObject({ charged_cents: 7, paid_by: "x402" });
    expect(facilitator.transfers.length).toBe(transfers + 1);
  });

  it("embed: a visitor's oversized message is refused with 413; the owner pays nothing and the day's cap is untouched", async () => {
    const widget = embedWidget(server.baseUrl, SHOP);
    // A widget's query is at most 4,000 characters: gpt-4 with 3,700 tokens out leaves less room.
    const { slug } = await widget.createEmbedApp(creator, { prompt: { model: "gpt-4", max_tokens: 3_700 } });
    const { token } = await widget.loadWidget(slug, `${SHOP}/page`);
    expect(token).toBeDefined();
    const before = await settledWallet(creator);
    const vendorCalls = vendor.requests.length;
    // The owner pays the whole 25¢ (250,000 micros): (250,000 − 3,700 × 60) / 30 = 933 tokens.
    const refused = await widget.sendMessage(slug, token, { body: { query: "w".repeat(3_000) } });
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ code: "input_too_large" });
    expect(refused.body.message).toContain("933 input tokens");
    expect(vendor.requests.length).toBe(vendorCalls);
    expect((await settledWallet(creator)).balance_micros).toBe(before.balance_micros);
    const embed = await creator.api("GET", `/api/app/${slug}/embed`);
    expect(embed.body.spent_today_cents).toBe(0);
    const answered = await widget.sendMessage(slug, token, { body: { query: "Hello there" } });
    expect(answered.status).toBe(200);
    expect((await creator.api("GET", `/api/app/${slug}/embed`)).body.spent_today_cents).toBe(25);
  });
});
