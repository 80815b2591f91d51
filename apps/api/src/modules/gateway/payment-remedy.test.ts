import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { useCaller, useFakeOpenAi, useTestServer } from "../../test/use-test-server.ts";
import {
  startX402Facilitator,
  X402_TEST_NETWORK,
  type X402Facilitator,
} from "../../test/x402-facilitator.ts";

// The 402's machine-readable remedy (issue 30 item 5, lib/payment-remedy.ts) in each protocol's
// own error shape: what is missing, the links, the figures or the limit hit, and the x402 offer.

const PRICE_CENTS = 7;
const facilitator = {} as X402Facilitator;
beforeAll(async () => {
  Object.assign(facilitator, await startX402Facilitator());
});
afterAll(() => facilitator.stop?.());
const vendor = useFakeOpenAi();
const server = useTestServer(() => ({
  env: {
    OPENAI_API_KEY: "sk-vendor",
    OPENAI_BASE_URL: vendor.baseUrl,
    GATEWAY_RATE_LIMIT_PER_MINUTE: "1000",
    ...facilitator.env(),
  },
}));
const creator = useCaller(server, "Remedy Seller");
let slug = "";

beforeAll(async () => {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: {
      name: "Remedy App",
      description: "d",
      interaction_mode: "completion",
      visibility: "public",
      price_cents: PRICE_CENTS,
    },
  });
  await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
  await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
  slug = app.slug;
});

describe("the 402 remedy in each protocol's shape", () => {
  it("Dify: {code, message, status} plus the remedy: insufficient funds, the top-up and plans links, x402 accepted", async () => {
    const broke = await createCaller(server.baseUrl, "x402 Broke");
    const key = (await broke.api("POST", "/api/keys/", { body: { name: "broke" } })).body.key;
    const response = await broke.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: key,
      body: { inputs: {}, query: "hi", response_mode: "blocking", user: "u" },
    });
    expect(response.status).toBe(402);
    expect(response.body).toMatchObject({
      code: "payment_required",
      status: 402,
      remedy: {
        missing: "insufficient_funds",
        top_up_url: `${server.baseUrl}/wallet`,
        plans_url: `${server.baseUrl}/explore/${slug}`,
        price_cents: PRICE_CENTS,
        balance_micros: 0,
        x402: { accepted: true, amount: "70000", network: X402_TEST_NETWORK },
      },
    });
    expect(typeof response.body.message).toBe("string");
  });

  it("OpenAI: {error: {message, type, param, code}} plus error.remedy, and the key's spend limit that was hit", async () => {
    const limited = await createCaller(server.baseUrl, "x402 Limited");
    await fundWallet(limited, 100);
    const key = (
      await limited.api("POST", "/api/keys/", {
        body: { name: "capped", spend_limit_cents: 5, limit_reset: "daily" },
      })
    ).body.key;
    const client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });
    const error = await client.chat.completions
      .create({ model: slug, messages: [{ role: "user", content: "hi" }] })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(402);
    expect(error.error).toMatchObject({
      type: "insufficient_quota",
      code: "key_limit_reached",
      param: null,
      remedy: {
        missing: "spend_limit_reached",
        price_cents: PRICE_CENTS,
        limit: { kind: "key_spend_limit", limit_cents: 5, spent_micros: 0, period: "daily" },
        x402: { accepted: true },
      },
    });
    expect(error.error.remedy.limit.resets_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });
});
