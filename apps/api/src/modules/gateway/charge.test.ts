import { eq, gte } from "drizzle-orm";
import OpenAI from "openai";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { invocations, modelCostHolds } from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { centsAsDollars } from "./charge.ts";

/**
 * Every answer says what it cost (decision 029): Dify's `metadata.usage.total_price` / `currency`,
 * OpenAI's `usage.cost`, and on blocking answers the `Promptmint-Charged` header; the amount is
 * what the call took from the wallet (0 for a plan's included call and the owner's own call).
 */
let slug: string;
let planId: string;

const { server, vendor } = useVendorServer();
const creator = useCaller(server, "Cost Seller");

beforeAll(async () => {
  ({ slug } = await createLiveApp(
    creator,
    { name: "Haiku Writer", interaction_mode: "completion", price_cents: 5 },
    { model: "gpt-4-turbo", max_tokens: 64 },
  ));
  // The owner's own calls hold their model cost from the owner's wallet (decision 062).
  await fundWallet(creator, 1_000);
  const plan = await creator.api("POST", `/api/app/${slug}/packages/`, {
    body: { name: "Four", price_cents: 100, description: "Four calls", features: {}, included_calls: 4 },
  });
  expect(plan.status).toBe(201);
  planId = plan.body.id;
});
afterEach(async () => {
  await expectReconciled(server.database.db);
});

async function readEvents(response: Response): Promise<Record<string, any>[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: ") && !block.startsWith("data: [DONE]"))
    .map((block) => JSON.parse(block.slice(6)));
}

const post = (caller: Caller, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${caller.token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

/** The four answers of one call each: Dify blocking, Dify's stream, OpenAI blocking, OpenAI's stream. */
async function callEveryWay(caller: Caller) {
  const difyBlocking = await post(caller, `/api/app/${slug}/completion-messages`, {
    inputs: { query: "autumn" },
  });
  expect(difyBlocking.status).toBe(200);
  const difyStream = await post(caller, `/api/app/${slug}/completion-messages`, {
    inputs: { query: "winter" },
    response_mode: "streaming",
  });
  expect(difyStream.status).toBe(200);
  const openAiBlocking = await post(caller, "/api/v1/chat/completions", {
    model: slug,
    messages: [{ role: "user", content: "spring" }],
  });
  expect(openAiBlocking.status).toBe(200);
  const openAiStream = await post(caller, "/api/v1/chat/completions", {
    model: slug,
    messages: [{ role: "user", content: "summer" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  expect(openAiStream.status).toBe(200);
  const difyBody = await difyBlocking.json();
  const difyEvents = await readEvents(difyStream);
  const openAiBody = await openAiBlocking.json();
  const openAiChunks = await readEvents(openAiStream);
  return {
    difyBlocking: { header: difyBlocking.headers.get("promptmint-charged"), usage: difyBody.metadata.usage },
    difyStream: {
      header: difyStream.headers.get("promptmint-charged"),
      last: difyEvents.at(-1) as Record<string, any>,
    },
    openAiBlocking: { header: openAiBlocking.headers.get("promptmint-charged"), usage: openAiBody.usage },
    openAiStream: {
      header: openAiStream.headers.get("promptmint-charged"),
      usage: openAiChunks.find((chunk) => chunk.usage)?.usage,
      last: openAiChunks.at(-1) as Record<string, any>,
    },
    ids: [difyBody.id as string, difyEvents.at(-1)?.id as string],
  };
}

function expectCharged(answers: Awaited<ReturnType<typeof callEveryWay>>, cents: number, paidBy: string) {
  const dollars7 = centsAsDollars(cents, 7);
  const dify = {
    total_price: dollars7,
    currency: "USD",
    prompt_price: "0.0000000",
    completion_price: "0.0000000",
    charged_cents: cents,
    paid_by: paidBy,
  };
  expect(answers.difyBlocking.header).toBe(`${centsAsDollars(cents)} USD`);
  expect(answers.difyBlocking.usage).toMatchObject(dify);
  // A stream's headers leave before the call is paid: its last event says what it cost.
  expect(answers.difyStream.header).toBeNull();
  expect(answers.difyStream.last.event).toBe("message_end");
  expect(answers.difyStream.last.metadata.usage).toMatchObject(dify);
  expect(answers.openAiBlocking.header).toBe(`${centsAsDollars(cents)} USD`);
  expect(answers.openAiBlocking.usage).toMatchObject({
    cost: cents / 100,
    charged_cents: cents,
    paid_by: paidBy,
  });
  expect(answers.openAiStream.header).toBeNull();
  expect(answers.openAiStream.usage).toMatchObject({
    cost: cents / 100,
    charged_cents: cents,
    paid_by: paidBy,
  });
  // Asked for with include_usage, the usage chunk is the stream's last one (before [DONE]), with no choices, as OpenAI sends it.
  expect(answers.openAiStream.last.usage).toBeDefined();
  expect(answers.openAiStream.last.choices).toEqual([]);
}

describe("what an answer says it cost", () => {
  it("is the price for a call paid from the wallet, and the wallet moved by exactly that", async () => {
    const consumer = await createCaller(server.baseUrl, "Wallet Payer");
    await fundWallet(consumer, 1000);
    const answers = await callEveryWay(consumer);
    expectCharged(answers, 5, "wallet");
    const [row] = await server.database.db
      .select({ chargedCents: invocations.chargedCents, holdId: invocations.holdId })
      .from(invocations)
      .where(eq(invocations.id, answers.ids[0] as string));
    expect(row?.chargedCents).toBe(5);
    expect(row?.holdId).not.toBeNull();
    // Four calls said $0.05 each: the wallet lost exactly $0.20.
    expect((await settledWallet(consumer)).balance_micros).toBe(10_000 * (1000 - 4 * 5));
  });

  it("is 0 for calls a plan's included calls covered, then the price once they are used up", async () => {
    const consumer = await createCaller(server.baseUrl, "Subscriber");
    await fundWallet(consumer, 1000);
    const subscribed = await consumer.api("POST", `/api/app/${slug}/subscriptions/`, {
      body: { package_id: planId },
    });
    expect(subscribed.status).toBe(201);
    const afterPlan = (await settledWallet(consumer)).balance_micros / 10_000;
    expect(afterPlan).toBe(900);
    expectCharged(await callEveryWay(consumer), 0, "plan");
    expect((await settledWallet(consumer)).balance_micros).toBe(10_000 * afterPlan);
    // The four included calls are used: the next four are paid from the wallet, and say so.
    expectCharged(await callEveryWay(consumer), 5, "wallet");
    expect((await settledWallet(consumer)).balance_micros).toBe(10_000 * (afterPlan - 20));
  });

  it("is 0 for the owner's own call, whose model cost alone comes from the owner's wallet", async () => {
    const before = (await settledWallet(creator)).balance_micros;
    const since = new Date();
    expectCharged(await callEveryWay(creator), 0, "owner");
    const own = await server.database.db.select().from(invocations).where(gte(invocations.createdAt, since));
    const modelCost = own.reduce((sum, row) => sum + row.modelCostMicros, 0);
    expect(modelCost).toBeGreaterThan(0);
    expect((await settledWallet(creator)).balance_micros).toBe(before - modelCost);
  });

  it("is the lower price when the app's price dropped while the call ran, as the recorder charged it", async () => {
    const app = await createLiveApp(
      creator,
      { name: "Dropping", interaction_mode: "completion", price_cents: 8 },
      { model: "gpt-4-turbo", max_tokens: 64 },
    );
    const consumer = await createCaller(server.baseUrl, "Lucky");
    await fundWallet(consumer, 100);
    vendor.set({ kind: "echo", delayMs: 1_000 });
    try {
      const running = post(consumer, `/api/app/${app.slug}/completion-messages`, { inputs: { query: "x" } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const lowered = await creator.api("PATCH", `/api/app/${app.slug}/`, { body: { price_cents: 3 } });
      expect(lowered.body.price_cents).toBe(3);
      const answer = await running;
      expect(answer.status).toBe(200);
      expect(answer.headers.get("promptmint-charged")).toBe("0.03 USD");
      expect((await answer.json()).metadata.usage).toMatchObject({
        total_price: "0.0300000",
        charged_cents: 3,
      });
    } finally {
      vendor.set({ kind: "echo" });
    }
    expect((await settledWallet(consumer)).balance_micros).toBe(10_000 * 97);
  });

  it("is repeated, not charged again, when an Idempotency-Key replays the answer", async () => {
    const consumer = await createCaller(server.baseUrl, "Retrier");
    await fundWallet(consumer, 100);
    const headers = { "idempotency-key": `cost-${Date.now()}` };
    const body = { inputs: { query: "again" } };
    const first = await post(consumer, `/api/app/${slug}/completion-messages`, body, headers);
    const again = await post(consumer, `/api/app/${slug}/completion-messages`, body, headers);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    for (const answer of [first, again]) {
      expect(answer.headers.get("promptmint-charged")).toBe("0.05 USD");
      expect((await answer.json()).metadata.usage.total_price).toBe("0.0500000");
    }
    const openAiHeaders = { "idempotency-key": `cost-openai-${Date.now()}` };
    const chat = { model: slug, messages: [{ role: "user", content: "again" }] };
    const openAiFirst = await post(consumer, "/api/v1/chat/completions", chat, openAiHeaders);
    const openAiAgain = await post(consumer, "/api/v1/chat/completions", chat, openAiHeaders);
    expect(openAiAgain.headers.get("idempotent-replayed")).toBe("true");
    for (const answer of [openAiFirst, openAiAgain]) {
      expect(answer.headers.get("promptmint-charged")).toBe("0.05 USD");
      expect((await answer.json()).usage.cost).toBe(0.05);
    }
    // Two calls made, two charged, whatever the replays said.
    expect((await settledWallet(consumer)).balance_micros).toBe(10_000 * 90);
  });

  it("lets browsers read the header across origins", async () => {
    const consumer = await createCaller(server.baseUrl, "Browser");
    await fundWallet(consumer, 100);
    const answer = await post(
      consumer,
      `/api/app/${slug}/completion-messages`,
      { inputs: { query: "cors" } },
      { origin: "https://elsewhere.example" },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get("access-control-expose-headers")).toMatch(/(^|, )promptmint-charged(,|$)/);
  });

  it("carries the same amount through the official openai SDK", async () => {
    const consumer = await createCaller(server.baseUrl, "SDK user");
    await fundWallet(consumer, 100);
    const key = (await consumer.api("POST", "/api/keys/", { body: { name: "sdk" } })).body.key;
    const client = new OpenAI({ apiKey: key, baseURL: `${server.baseUrl}/api/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: slug, messages: [{ role: "user", content: "hi" }] })
      .withResponse();
    expect(response.headers.get("promptmint-charged")).toBe("0.05 USD");
    expect((data.usage as unknown as { cost: number }).cost).toBe(0.05);
  });
});

describe("an app deleted while its call runs", () => {
  it("archives an app whose owner's call holds its model cost, and answers that call (decision 062)", async () => {
    const app = await createLiveApp(
      creator,
      { name: "Held Over", interaction_mode: "completion", price_cents: 4 },
      { model: "gpt-4-turbo", max_tokens: 64 },
    );
    vendor.set({ kind: "echo", delayMs: 1_000 });
    try {
      const running = post(creator, `/api/app/${app.slug}/completion-messages`, { inputs: { query: "x" } });
      await expect
        .poll(
          async () =>
            (
              await server.database.db
                .select()
                .from(modelCostHolds)
                .where(eq(modelCostHolds.applicationId, app.id))
            ).length,
        )
        .toBe(1);
      // Money moved for the app (its owner's model cost): kept as history, so archived, not erased.
      const deleted = await creator.api("DELETE", `/api/app/${app.slug}/`);
      expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300);
      const answer = await running;
      expect(answer.status).toBe(200);
    } finally {
      vendor.set({ kind: "echo" });
    }
    const [row] = await server.database.db
      .select()
      .from(modelCostHolds)
      .where(eq(modelCostHolds.applicationId, app.id));
    expect(row?.status).toBe("spent");
  });

  it("answers 404 naming what happened, not a 500, and charges nothing", async () => {
    const app = await createLiveApp(
      creator,
      { name: "Short Lived", interaction_mode: "completion", price_cents: 4 },
      { model: "gpt-4-turbo", max_tokens: 64 },
    );
    const before = (await settledWallet(creator)).balance_micros;
    // On the creator's own model key the vendor bills the creator, so the owner's call holds
    // nothing (decision 062): the app has no money history and the delete erases it.
    expect(
      (await creator.api("PUT", "/api/model-keys/openai", { body: { api_key: "sk-creator-own-key-1234" } }))
        .status,
    ).toBe(200);
    expect(
      (await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model_keys: "creator" } }))
        .status,
    ).toBe(200);
    vendor.set({ kind: "echo", delayMs: 1_000 });
    try {
      const running = post(creator, `/api/app/${app.slug}/completion-messages`, { inputs: { query: "x" } });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const deleted = await creator.api("DELETE", `/api/app/${app.slug}/`);
      expect(deleted.status, JSON.stringify(deleted.body)).toBeLessThan(300);
      const answer = await running;
      expect(answer.status).toBe(404);
      expect((await answer.json()).message).toContain("deleted while the call ran");
    } finally {
      vendor.set({ kind: "echo" });
    }
    const rows = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.applicationId, app.id));
    expect(rows).toEqual([]);
    expect((await settledWallet(creator)).balance_micros).toBe(before);
  });
});

describe("centsAsDollars", () => {
  it("writes cents as exact dollars", () => {
    expect(centsAsDollars(5)).toBe("0.05");
    expect(centsAsDollars(5, 7)).toBe("0.0500000");
    expect(centsAsDollars(12_345, 7)).toBe("123.4500000");
    expect(centsAsDollars(0, 7)).toBe("0.0000000");
    expect(centsAsDollars(-30)).toBe("-0.30");
    expect(() => centsAsDollars(0.5)).toThrow(RangeError);
  });
});
