import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { applications, invocations, subscriptions } from "../../db/schema/index.ts";
import { fundWallet, settledWallet } from "../../test/caller.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";

// A call's input is bounded by what it pays (docs/decisions/063): on every protocol an input whose
// worst-case model cost the creator's share cannot cover is refused with a 413 naming the limit,
// before the vendor and before payment; an input just under the limit is answered and charged once.

const { server, vendor } = useVendorServer();
const creator = useCaller(server, "Bound Seller");
const consumer = useCaller(server, "Bound Buyer");
let slug: string;
let key: string;

// gpt-4-turbo ($10 / $30 per million), 512 tokens out, 10¢ less the 10% fee = 90,000 micros:
// (90,000 − 512 × 30) / 10 = 7,464 input tokens a call.
const LIMIT = 7_464;
const big = "x".repeat(LIMIT + 10);
const under = "y".repeat(LIMIT - 200);

beforeAll(async () => {
  const { body: app } = await creator.api("POST", "/api/app/", {
    body: { name: "Bounded", visibility: "public", price_cents: 10, allow_tools: true },
  });
  const prompt = await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
    body: { model: "gpt-4-turbo", max_tokens: 512 },
  });
  expect(prompt.status).toBe(200);
  expect(
    (await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } })).status,
  ).toBe(200);
  slug = app.slug;
  await fundWallet(consumer, 500);
  key = (await consumer.api("POST", "/api/keys/", { body: { name: "bound", spend_limit_cents: 400 } })).body
    .key;
});

/** The app's invocations, as the database recorded them. */
async function recorded() {
  const [app] = await server.database.db.select().from(applications).where(eq(applications.slug, slug));
  return server.database.db
    .select({ status: invocations.status, chargedCents: invocations.chargedCents })
    .from(invocations)
    .where(eq(invocations.applicationId, app?.id ?? ""));
}

/** Runs `call`, expecting a refusal that reached neither the vendor nor the money. */
async function expectRefusedUnpaid<T>(call: () => Promise<T>): Promise<T> {
  const wallet = await settledWallet(consumer);
  const rows = (await recorded()).length;
  const vendorCalls = vendor.requests.length;
  const keySpend = await spentByKeys();
  const answer = await call();
  expect(vendor.requests.length).toBe(vendorCalls);
  expect((await recorded()).length).toBe(rows);
  const after = await settledWallet(consumer);
  expect(after.balance_micros).toBe(wallet.balance_micros);
  expect(after.held_micros).toBe(0);
  expect(await spentByKeys()).toEqual(keySpend);
  return answer;
}

/** What each of the consumer's keys spent in its period. */
async function spentByKeys(): Promise<number[]> {
  const { body } = await consumer.api("GET", "/api/keys/");
  const list = (Array.isArray(body) ? body : (body.keys ?? body.data)) as { spent_micros: number }[];
  return list.map((k) => k.spent_micros);
}

const post = (path: string, body: unknown, auth = key) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${auth}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify(body),
  }).then(async (response) => ({ status: response.status, body: await response.json().catch(() => null) }));

const limitText = LIMIT.toLocaleString("en-US");

describe("a call's input is bounded by what it pays", () => {
  it("publishes the limit: Explore's detail, the OpenAI model entry, the MCP tool's description and _meta", async () => {
    const detail = await consumer.api("GET", `/api/explore/apps/${slug}`);
    expect(detail.body.max_input_tokens).toBe(LIMIT);
    const entry = await consumer.api("GET", `/api/v1/models/${slug}`, { auth: key });
    expect(entry.body).toMatchObject({ id: slug, max_input_tokens: LIMIT });
    const listed = await post(`/api/app/${slug}/mcp`, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    const [tool] = listed.body.result.tools;
    expect(tool.description).toContain(`Up to ${limitText} input tokens a call`);
    expect(tool._meta["promptmint/input-limit"]).toEqual({ max_input_tokens: LIMIT });
  });

  it("Dify: refuses a query above the limit with 413 naming it, blocking and streaming; answers one just under", async () => {
    for (const response_mode of ["blocking", "streaming"] as const) {
      const refused = await expectRefusedUnpaid(() =>
        post(`/api/app/${slug}/completion-messages`, { inputs: { query: big }, response_mode }),
      );
      expect(refused.status).toBe(413);
      expect(refused.body).toMatchObject({ code: "input_too_large", status: 413 });
      expect(refused.body.message).toContain(`${limitText} input tokens`);
      expect(refused.body.message).toMatch(/counts 7,4\d\d tokens/);
    }
    const before = await settledWallet(consumer);
    const vendorCalls = vendor.requests.length;
    const answered = await post(`/api/app/${slug}/completion-messages`, { inputs: { query: under } });
    expect(answered.status).toBe(200);
    expect(vendor.requests.length).toBe(vendorCalls + 1);
    expect((await settledWallet(consumer)).balance_micros).toBe(before.balance_micros - 100_000);
  });

  it("OpenAI chat: refuses a big message, a big tools array and many tool results with OpenAI's 413", async () => {
    const tool = (name: string) => ({
      type: "function",
      function: { name, description: "d".repeat(200), parameters: { type: "object" } },
    });
    const toolCalls = Array.from({ length: 40 }, (_, i) => ({
      id: `call_${i}`,
      type: "function",
      function: { name: "weather", arguments: "{}" },
    }));
    const bodies = [
      { model: slug, messages: [{ role: "user", content: big }] },
      {
        model: slug,
        messages: [{ role: "user", content: "hi" }],
        tools: Array.from({ length: 40 }, (_, i) => tool(`t${i}`)),
      },
      {
        model: slug,
        tools: [tool("weather")],
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: null, tool_calls: toolCalls },
          ...toolCalls.map((call) => ({ role: "tool", tool_call_id: call.id, content: "r".repeat(200) })),
        ],
      },
      {
        model: slug,
        stream: true,
        messages: [
          { role: "system", content: big },
          { role: "user", content: "hi" },
        ],
      },
    ];
    for (const body of bodies) {
      const refused = await expectRefusedUnpaid(() => post("/api/v1/chat/completions", body));
      expect(refused.status).toBe(413);
      expect(refused.body.error).toMatchObject({ type: "invalid_request_error", code: "input_too_large" });
      expect(refused.body.error.message).toContain(`${limitText} input tokens`);
    }
    const answered = await post("/api/v1/chat/completions", {
      model: slug,
      messages: [{ role: "user", content: under }],
    });
    expect(answered.status).toBe(200);
  });

  it("OpenAI Responses: refuses a big input, and a chain whose replayed history makes it too big", async () => {
    const refused = await expectRefusedUnpaid(() => post("/api/v1/responses", { model: slug, input: big }));
    expect(refused.status).toBe(413);
    expect(refused.body.error.code).toBe("input_too_large");
    const first = await post("/api/v1/responses", { model: slug, input: under });
    expect(first.status).toBe(200);
    const chained = await expectRefusedUnpaid(() =>
      post("/api/v1/responses", { model: slug, input: "and more", previous_response_id: first.body.id }),
    );
    expect(chained.status).toBe(413);
  });

  it("MCP: the app's tool and the catalogue's call_app answer a tool error with status 413", async () => {
    const call = (path: string, name: string, args: Record<string, unknown>) =>
      post(path, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });
    for (const [path, name, args] of [
      [`/api/app/${slug}/mcp`, slug, { query: big }],
      ["/api/mcp", "call_app", { slug, query: big }],
    ] as const) {
      const refused = await expectRefusedUnpaid(() => call(path, name, args));
      expect(refused.status).toBe(200);
      expect(refused.body.result.isError).toBe(true);
      expect(refused.body.result.content[0].text).toContain("413 input_too_large");
      expect(refused.body.result.content[0].text).toContain(`${limitText} input tokens`);
      expect(JSON.stringify(refused.body.result._meta)).toContain('"status":413');
    }
  });

  it("a plan-covered call is bounded by the plan's share per included call, and keeps its included call", async () => {
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name: "Bounded plan", visibility: "public", price_cents: 10 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, {
      body: { model: "gpt-4-turbo", max_tokens: 512 },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    // 100 calls for $2: 1.8¢ each after the fee = 18,000 micros → (18,000 − 15,360) / 10 = 264 tokens.
    const plan = await creator.api("POST", `/api/app/${app.slug}/packages/`, {
      body: { name: "Bulk", price_cents: 200, description: "many", features: {}, included_calls: 100 },
    });
    expect(plan.status).toBe(201);
    const subscribed = await consumer.api("POST", `/api/app/${app.slug}/subscriptions/`, {
      body: { package_id: plan.body.id },
    });
    expect(subscribed.status).toBe(201);
    const used = async () =>
      (await server.database.db.select({ used: subscriptions.callsUsed }).from(subscriptions)).map(
        (s) => s.used,
      );
    const usedBefore = await used();
    const wallet = await settledWallet(consumer);
    const vendorCalls = vendor.requests.length;
    const refused = await post(`/api/app/${app.slug}/completion-messages`, {
      inputs: { query: "z".repeat(1_000) },
    });
    expect(refused.status).toBe(413);
    expect(refused.body.message).toContain("264 input tokens");
    expect(vendor.requests.length).toBe(vendorCalls);
    expect(await used()).toEqual(usedBefore);
    expect((await settledWallet(consumer)).balance_micros).toBe(wallet.balance_micros);
    const answered = await post(`/api/app/${app.slug}/completion-messages`, { inputs: { query: "short" } });
    expect(answered.status).toBe(200);
    expect(answered.body.metadata.usage.paid_by).toBe("plan");
  });
});
