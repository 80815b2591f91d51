import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { invocations } from "../../db/schema/index.ts";
import { type Caller, fundWallet } from "../../test/caller.ts";
import { useCaller, useFakeOpenAi, useTestServer } from "../../test/use-test-server.ts";
import { reconcile } from "../billing/reconcile.ts";

const vendor = useFakeOpenAi();
const server = useTestServer(() => ({
  env: { OPENAI_API_KEY: "sk-vendor", OPENAI_BASE_URL: vendor.baseUrl },
}));
const owner = useCaller(server, "Prompt Tester");
const stranger = useCaller(server, "Test Stranger");
let slug: string;

beforeAll(async () => {
  await fundWallet(owner, 100);
  const { body: app } = await owner.api("POST", "/api/app/", {
    body: { name: "Test Runs", price_cents: 25 },
  });
  slug = app.slug;
});

const testConfig = (caller: Caller, body: object) =>
  caller.api("POST", `/api/app/${slug}/prompt/test-config/`, { body });

const balanceMicros = async () => (await owner.api("GET", "/api/wallet/")).body.balance_micros as number;

describe("Test Prompt runs the draft on the model", () => {
  it("answers with tokens, latency and model cost, the cost paid from the owner's wallet and recorded as their call", async () => {
    const before = await balanceMicros();
    const response = await testConfig(owner, {
      prompt_template: "Summarise {{topic}}",
      model: "gpt-4o-mini",
      max_tokens: 64,
      input_schema: {
        type: "object",
        properties: { topic: { type: "string" } },
        required: ["topic"],
        additionalProperties: false,
      },
      test_inputs: { topic: "bees" },
    });
    expect(response.status).toBe(200);
    // The rendered template stays next to the answer.
    expect(response.body).toMatchObject({ success: true, rendered_template: "Summarise bees" });
    const run = response.body.run;
    expect(run).toMatchObject({
      model: "gpt-4o-mini",
      answered_by: "gpt-4o-mini",
      sandbox: false,
      answer: "echo: Summarise bees",
      error: null,
      output_tokens: 3,
    });
    expect(run.input_tokens).toBeGreaterThan(0);
    expect(run.latency_ms).toBeGreaterThanOrEqual(0);
    expect(run.model_cost_micros).toBeGreaterThan(0);
    // The draft (not the saved "{{query}}" template and model) reached the vendor.
    const sent = vendor.requests.at(-1);
    expect(sent?.model).toBe("gpt-4o-mini");
    expect(sent?.messages.at(-1)).toEqual({ role: "user", content: "Summarise bees" });

    const [recorded] = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.id, run.invocation_id));
    expect(recorded).toMatchObject({
      status: "success",
      chargedCents: 0,
      modelCostMicros: run.model_cost_micros,
      inputTokens: run.input_tokens,
      outputTokens: 3,
    });
    // No price paid for it: its model cost came from the owner's wallet (decision 062), not debt.
    expect(await balanceMicros()).toBe(before - run.model_cost_micros);
    expect((await reconcile(server.database.db)).ok).toBe(true);
  });

  it("reports a model that failed in the run, costs nothing and is recorded as failed", async () => {
    vendor.set({ kind: "status", status: 500, message: "vendor down" });
    const response = await testConfig(owner, {
      prompt_template: "Hello {{query}}",
      model: "gpt-4o-mini",
      test_inputs: { query: "there" },
    });
    vendor.set({ kind: "echo" });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ success: true, rendered_template: "Hello there" });
    expect(response.body.run).toMatchObject({ answer: null, sandbox: false, model_cost_micros: 0 });
    expect(response.body.run.error).toEqual(expect.any(String));
    const [recorded] = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.id, response.body.run.invocation_id));
    expect(recorded).toMatchObject({ status: "error", chargedCents: 0 });
  });

  it("says when the sandbox answered (a model without a key)", async () => {
    // No input schema in the draft: the saved one (the starter's `query`) applies.
    const response = await testConfig(owner, {
      prompt_template: "Hi {{query}}",
      model: "claude-3-haiku",
      test_inputs: { query: "there" },
    });
    expect(response.body.run).toMatchObject({
      answered_by: "sandbox",
      sandbox: true,
      answer: expect.stringContaining("Hi there"),
      model_cost_micros: 0,
    });
  });

  it("does not run a template that does not render, and refuses an unknown model by name", async () => {
    const broken = await testConfig(owner, { prompt_template: "About {{topic}}", test_inputs: {} });
    expect(broken.body).toMatchObject({ success: false, run: null });
    const missing = await testConfig(owner, { prompt_template: "Hi {{query}}", test_inputs: {} });
    expect(missing.body).toMatchObject({ success: false, error: "test_inputs.query is required", run: null });
    const unknown = await testConfig(owner, { prompt_template: "Hi", model: "gpt-9" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.fields).toEqual({ model: "is not a known model" });
    const hot = await testConfig(owner, { prompt_template: "Hi", temperature: 5 });
    expect(hot.status).toBe(400);
    expect(JSON.stringify(hot.body)).toContain("temperature");
  });

  it("is the owner's alone; before the app exists it only renders", async () => {
    expect((await testConfig(stranger, { prompt_template: "Hi" })).status).toBe(404);
    const early = await owner.api("POST", "/api/prompts/test-config/", {
      body: { prompt_template: "Hi" },
    });
    expect(early.body).toMatchObject({ success: true, rendered_template: "Hi", run: null });
  });
});
