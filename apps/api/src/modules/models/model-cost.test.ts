import { desc, eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { applications, invocations } from "../../db/schema/index.ts";
import { type Caller, fundWallet } from "../../test/caller.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { minimumPriceCents, worstCaseCostMicros } from "./model-prices.ts";

/** An app's invocations as recorded, newest first. */
const invocationsOf = (slug: string) =>
  server.database.db
    .select({
      status: invocations.status,
      chargedCents: invocations.chargedCents,
      modelCostMicros: invocations.modelCostMicros,
      inputTokens: invocations.inputTokens,
      outputTokens: invocations.outputTokens,
    })
    .from(invocations)
    .innerJoin(applications, eq(applications.id, invocations.applicationId))
    .where(eq(applications.slug, slug))
    .orderBy(desc(invocations.createdAt));

/** The call recorded after `before` calls of the app (a stream is recorded just after its answer). */
async function newest(slug: string, before: number) {
  await vi.waitFor(async () => expect((await invocationsOf(slug)).length).toBe(before + 1));
  return (await invocationsOf(slug))[0];
}

const CREATOR_KEY = "sk-creator-own-key-7f3Q";
const PLATFORM_KEY = "sk-platform-key";

const { server, vendor } = useVendorServer({ OPENAI_API_KEY: PLATFORM_KEY });
const creator = useCaller(server, "Cost Creator");
const consumer = useCaller(server, "Cost Consumer");

beforeAll(async () => {
  await fundWallet(consumer, 500);
});

async function newApp(
  owner: Caller,
  priceCents: number,
  prompt: Record<string, unknown> = {},
): Promise<string> {
  // Priced after its prompt: a price below the starter model's floor needs the cheaper model first.
  const { slug } = await createPromptApp(
    owner,
    { name: `Cost ${priceCents} ${Math.random()}`, visibility: "public", price_cents: priceCents },
    Object.keys(prompt).length > 0 ? prompt : undefined,
  );
  return slug;
}

const STARTER = {
  systemPrompt: "You are a helpful assistant.",
  promptTemplate: "{{query}}",
  inputSchema: {
    type: "object" as const,
    properties: { query: { type: "string" as const } },
    required: ["query"],
    additionalProperties: false as const,
  },
  outputSchema: null,
};

describe("creator model keys", () => {
  it("stores a key sealed, answers it masked, replaces and deletes it", async () => {
    const put = await creator.api("PUT", "/api/model-keys/openai", { body: { api_key: CREATOR_KEY } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ provider: "openai", configured: true, masked_key: "••••7f3Q" });
    const list = await creator.api("GET", "/api/model-keys");
    expect(list.body.keys.map((k: { provider: string }) => k.provider)).toEqual([
      "openai",
      "anthropic",
      "google",
      "mistral",
    ]);
    expect(JSON.stringify(list.body)).not.toContain(CREATOR_KEY);
    expect(list.body.keys[1]).toMatchObject({ provider: "anthropic", configured: false, masked_key: null });
    // Not in plaintext anywhere in the row.
    const rows = (await server.database.db.execute(
      sql`select row_to_json(k)::text as row from creator_model_keys k`,
    )) as unknown as { rows: unknown[] };
    const text = JSON.stringify(rows.rows);
    expect(rows.rows).toHaveLength(1);
    expect(text).not.toContain(CREATOR_KEY);
    expect(text).not.toContain("sk-creator");
    expect(text).toMatch(/v1\.[A-Za-z0-9_-]+\./);
    // Someone else sees none of it.
    expect((await consumer.api("GET", "/api/model-keys/openai")).body).toMatchObject({ configured: false });
    // Bad input: a clear 400 naming the field, never 500.
    const masked = await creator.api("PUT", "/api/model-keys/openai", { body: { api_key: "••••7f3Q" } });
    expect(masked.status).toBe(400);
    expect(JSON.stringify(masked.body)).toContain("api_key");
    expect(
      (await creator.api("PUT", "/api/model-keys/nope", { body: { api_key: CREATOR_KEY } })).status,
    ).toBe(400);
    expect((await creator.api("DELETE", "/api/model-keys/google")).status).toBe(404);
  });

  it("refuses creator keys in the editor without a key for the model's provider, naming it", async () => {
    const slug = await newApp(creator, 5, { model: "sandbox" });
    const refused = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { model: "claude-3-haiku", model_keys: "creator" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.fields.model_keys).toMatch(/anthropic API key/);
  });

  it("calls the vendor with the creator's key and records no model cost; platform keys record the table's figure", async () => {
    // 1 cent on gpt-4-turbo: only possible on the creator's own keys.
    const own = await newApp(creator, 1, { model: "gpt-4-turbo", model_keys: "creator" });
    await creator.api("PATCH", `/api/app/${own}/update_status/`, { body: { status: "live" } });
    const platform = await newApp(creator, 30, { model: "gpt-4-turbo", max_tokens: 512 });
    await creator.api("PATCH", `/api/app/${platform}/update_status/`, { body: { status: "live" } });

    for (const response_mode of ["blocking", "streaming"] as const) {
      vendor.requests.length = 0;
      let before = (await invocationsOf(own)).length;
      const ownCall = await consumer.api("POST", `/api/app/${own}/completion-messages`, {
        body: { inputs: { query: "Say hi" }, response_mode },
      });
      expect(ownCall.status).toBe(200);
      expect(vendor.requests.map((r) => r.authorization)).toEqual([`Bearer ${CREATOR_KEY}`]);
      const ownRow = await newest(own, before);
      expect(ownRow).toMatchObject({ status: "success", modelCostMicros: 0, chargedCents: 1 });
      expect(ownRow?.inputTokens).toBeGreaterThan(0);

      vendor.requests.length = 0;
      before = (await invocationsOf(platform)).length;
      const platformCall = await consumer.api("POST", `/api/app/${platform}/completion-messages`, {
        body: { inputs: { query: "Say hi" }, response_mode },
      });
      expect(platformCall.status).toBe(200);
      expect(vendor.requests.map((r) => r.authorization)).toEqual([`Bearer ${PLATFORM_KEY}`]);
      const platformRow = await newest(platform, before);
      // The loopback vendor counts words: system "You are a helpful assistant." (5) + "Say hi" (2)
      // in, "echo: Say hi" (3) out. gpt-4-turbo: $10 / $30 per million = 10 / 30 micros a token.
      expect(platformRow).toMatchObject({
        inputTokens: 7,
        outputTokens: 3,
        modelCostMicros: 7 * 10 + 3 * 30,
      });
    }

    // The OpenAI-compatible route records the same way.
    const key = (await consumer.api("POST", "/api/keys/", { body: { name: "cost" } })).body.key;
    for (const [slug, cost, auth] of [
      [own, 0, CREATOR_KEY],
      [platform, 160, PLATFORM_KEY],
    ] as const) {
      vendor.requests.length = 0;
      const before = (await invocationsOf(slug)).length;
      const response = await fetch(`${server.baseUrl}/api/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: slug, messages: [{ role: "user", content: "Say hi" }] }),
      });
      expect(response.status).toBe(200);
      expect(vendor.requests[0]?.authorization).toBe(`Bearer ${auth}`);
      expect((await newest(slug, before))?.modelCostMicros).toBe(cost);
    }

    // Without the key the call fails, 503, naming the missing key; nothing reaches the vendor.
    expect((await creator.api("DELETE", "/api/model-keys/openai")).status).toBe(204);
    vendor.requests.length = 0;
    const missing = await consumer.api("POST", `/api/app/${own}/completion-messages`, {
      body: { inputs: { query: "Say hi" }, response_mode: "blocking" },
    });
    expect(missing.status).toBe(503);
    expect(missing.body.message).toMatch(/creator's own openai API key/);
    expect(vendor.requests).toHaveLength(0);
    await creator.api("PUT", "/api/model-keys/openai", { body: { api_key: CREATOR_KEY } });
  });
});

describe("the price guard", () => {
  it("refuses saving a prompt whose price cannot cover the worst case, naming the minimum", async () => {
    const slug = await newApp(creator, 5, { model: "sandbox" });
    const refused = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { model: "claude-3-opus", max_tokens: 8192 },
    });
    expect(refused.status).toBe(400);
    // 8192 × $75/M = $0.6144 plus the starter template's input: 69 cents after a 10% fee.
    const worst = worstCaseCostMicros({ ...STARTER, model: "claude-3-opus", maxTokens: 8192 });
    expect(worst.micros).toBeGreaterThan(614_400);
    expect(worst.micros).toBeLessThan(614_400 + 1_000);
    expect(minimumPriceCents(worst.micros, 10)).toBe(69);
    expect(refused.body.fields.price_cents).toMatch(
      /^At least 69 cents \(\$0\.69\) a call covers its worst case \(claude-3-opus with 8192 max tokens, \$0\.61\d\d\) after the 10% fee\.$/,
    );
    // Nothing was saved.
    expect((await creator.api("GET", `/api/app/${slug}/prompt/`)).body).toMatchObject({ model: "sandbox" });
    // At 69 cents it saves; lowering the price below is refused; 1 cent on own keys saves.
    expect((await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 69 } })).status).toBe(200);
    const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { model: "claude-3-opus", max_tokens: 8192 },
    });
    expect(saved.status).toBe(200);
    const lowered = await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 68 } });
    expect(lowered.status).toBe(400);
    expect(lowered.body.fields.price_cents).toMatch(/^At least 69 cents/);
    // A longer template is judged too: a declared maxLength counts as that many tokens.
    const longer = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: {
        prompt_template: "{{query}}",
        input_schema: {
          type: "object",
          properties: { query: { type: "string", maxLength: 20_000 } },
          required: ["query"],
          additionalProperties: false,
        },
      },
    });
    expect(longer.status).toBe(400);
    // 614,400 + ≥ 20,000 × 15 = ≥ 914,400 micros → at least 102 cents.
    expect(longer.body.fields.price_cents).toMatch(/^At least 10[2-9] cents/);
  });

  it("refuses publishing (Set as Live) and a plan that cannot cover the worst case; taking offline is allowed", async () => {
    // The starter prompt: gpt4 (SPEC §9's editor default), 1000 max tokens: 60,000 micros + the template ≈ 7 cents.
    // An app priced below it before creating one was refused there too (issue 32): the price is set
    // in the database, as for a seeded or older app.
    const slug = await newApp(creator, 7);
    await server.database.db.update(applications).set({ priceCents: 3 }).where(eq(applications.slug, slug));
    const published = await creator.api("PATCH", `/api/app/${slug}/update_status/`, {
      body: { status: "live" },
    });
    expect(published.status).toBe(400);
    const worst = worstCaseCostMicros({ ...STARTER, model: "gpt4", maxTokens: 1000 });
    const minimum = minimumPriceCents(worst.micros, 10) as number;
    expect(minimum).toBe(7);
    expect(published.body.fields.price_cents).toMatch(
      /^At least 7 cents \(\$0\.07\) a call covers its worst case \(gpt4 with 1000 max tokens, \$0\.060\d\) after the 10% fee\.$/,
    );
    const [row] = await server.database.db.select().from(applications).where(eq(applications.slug, slug));
    expect(row?.status).toBe("draft");

    // Plans: 100 included calls for $1 cannot cover 100 worst cases.
    await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 7 } });
    expect(
      (await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } })).status,
    ).toBe(200);
    const plan = await creator.api("POST", `/api/app/${slug}/packages/`, {
      body: { name: "Hundred", price_cents: 100, included_calls: 100 },
    });
    expect(plan.status).toBe(400);
    const planMinimum = minimumPriceCents(worst.micros * 100, 10) as number;
    expect(plan.body.fields.price_cents).toContain(`At least ${planMinimum} cents`);
    expect(plan.body.fields.price_cents).toContain("'Hundred' with 100 included calls");
    const fine = await creator.api("POST", `/api/app/${slug}/packages/`, {
      body: { name: "Hundred", price_cents: planMinimum, included_calls: 100 },
    });
    expect(fine.status).toBe(201);
    const raised = await creator.api("PATCH", `/api/app/${slug}/packages/${fine.body.id}/`, {
      body: { included_calls: 1000 },
    });
    expect(raised.status).toBe(400);

    // An existing app that violates it (the price table changed, or an app from before the guard)
    // can be taken offline, but not re-saved without a fix; its calls are refused unpaid before the
    // vendor, as any call whose worst case its price cannot cover (decision 063).
    await server.database.db.update(applications).set({ priceCents: 1 }).where(eq(applications.slug, slug));
    const call = await consumer.api("POST", `/api/app/${slug}/completion-messages`, {
      body: { inputs: { query: "still runs" }, response_mode: "blocking" },
    });
    expect(call.status).toBe(413);
    expect(call.body).toMatchObject({ code: "input_too_large" });
    expect(call.body.message).toContain("above the 0 input tokens");
    // An edit that changes neither price nor publishing (a name, the visibility) is not refused...
    // (A form echoing the unchanged price and status with it is the same edit.)
    const renamed = await creator.api("PATCH", `/api/app/${slug}/`, {
      body: { name: "Renamed", visibility: "private", price_cents: 1, status: "live" },
    });
    expect(renamed.status).toBe(200);
    // ...a new price still too low is, and so is publishing again.
    const repriced = await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 2 } });
    expect(repriced.status).toBe(400);
    expect(repriced.body.fields.price_cents).toMatch(/^At least 7 cents/);
    expect(
      (await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "draft" } })).status,
    ).toBe(200);
    expect(
      (await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } })).status,
    ).toBe(400);
    // Switching to the creator's own keys (the key is set) fixes it at any price.
    expect(
      (await creator.api("PATCH", `/api/app/${slug}/prompt/`, { body: { model_keys: "creator" } })).status,
    ).toBe(200);
    expect((await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 2 } })).status).toBe(200);
  });

  it("serves the price table and the editor's estimate from the same figures", async () => {
    const prices = await creator.api("GET", "/api/model-prices");
    expect(prices.status).toBe(200);
    expect(prices.body.platform_fee_percent).toBe(10);
    expect(prices.body.prices).toContainEqual({
      model: "claude-3-opus",
      from: "2024-03-04",
      input_micros_per_million: 15_000_000,
      output_micros_per_million: 75_000_000,
      cached_input_micros_per_million: 1_500_000,
    });
    const estimate = await creator.api("POST", "/api/model-prices/estimate", {
      body: {
        model: "claude-3-opus",
        max_tokens: 8192,
        price_cents: 50,
        system_prompt: STARTER.systemPrompt,
        prompt_template: STARTER.promptTemplate,
        input_schema: STARTER.inputSchema,
      },
    });
    const worst = worstCaseCostMicros({ ...STARTER, model: "claude-3-opus", maxTokens: 8192 });
    expect(estimate.body).toEqual({
      model: "claude-3-opus",
      model_keys: "platform",
      input_tokens: worst.inputTokens,
      output_tokens: 8192,
      gross_micros: 500_000,
      fee_micros: 50_000,
      model_cost_micros: worst.micros,
      net_micros: 450_000 - worst.micros,
      minimum_price_cents: 69,
      covered: false,
    });
    const own = await creator.api("POST", "/api/model-prices/estimate", {
      body: { model: "claude-3-opus", max_tokens: 8192, price_cents: 1, model_keys: "creator" },
    });
    expect(own.body).toMatchObject({ model_cost_micros: 0, net_micros: 9_000, covered: true });
    const bad = await creator.api("POST", "/api/model-prices/estimate", {
      body: { model: "gpt-9", max_tokens: 10, price_cents: 1 },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.fields.model).toBeDefined();
  });
});
