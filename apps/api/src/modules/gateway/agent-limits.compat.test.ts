import OpenAI from "openai";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";

/**
 * Limits and errors an agent can live with (issue 40, docs/decisions/072): a spend budget per key
 * per minute in money, refused in each protocol's shape; refusals a retry cannot fix say so
 * (`x-should-retry: false`), and the official openai SDK then sends them once; an unknown model is
 * `model_not_found` naming `model` everywhere; `v0` is a malformed version, not a label.
 */
const SPEND_PER_MINUTE = 1000;
const PRICEY = 400;
const CHEAP = 25;

const { server, vendor } = useVendorServer({ GATEWAY_SPEND_PER_MINUTE_CENTS: String(SPEND_PER_MINUTE) });
const creator = useCaller(server, "Limits Seller");
const consumer = useCaller(server, "Limits Buyer");

let pricey: string;
let cheap: string;

beforeAll(async () => {
  pricey = (await createLiveApp(creator, { price_cents: PRICEY }, { model: "gpt-4-turbo" })).slug;
  cheap = (
    await createLiveApp(
      creator,
      { price_cents: CHEAP },
      { model: "gpt-4-turbo", prompt_template: "v2: {{query}}" },
    )
  ).slug;
  await fundWallet(consumer, 100_000);
});
beforeEach(() => vendor.set({ kind: "echo" }));

const newKey = async () => (await consumer.api("POST", "/api/keys/", { body: { name: "agent" } })).body.key;

async function walletCents(): Promise<number> {
  const { balance_micros, held_micros } = (await consumer.api("GET", "/api/wallet/")).body;
  return ((balance_micros as number) + (held_micros as number)) / 10_000;
}

/** An openai client whose every HTTP attempt is counted (`attempts`), retries as the SDK's default. */
function countingClient(key: string) {
  const attempts: number[] = [];
  const client = new OpenAI({
    apiKey: key,
    baseURL: `${server.baseUrl}/api/v1`,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      attempts.push(response.status);
      return response;
    },
  });
  return { client, attempts };
}

async function chat(key: string, model: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.baseUrl}/api/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }] }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function dify(key: string, slug: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${server.baseUrl}/api/app/${slug}/completion-messages`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify({ inputs: {}, query: "hello", response_mode: "blocking" }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function mcpToolCall(key: string, slug: string) {
  const response = await fetch(`${server.baseUrl}/api/app/${slug}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${key}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: slug, arguments: { query: "hello" } },
    }),
  });
  const text = await response.text();
  const json = text.startsWith("{")
    ? JSON.parse(text)
    : JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? "null");
  return { status: response.status, json };
}

describe("openai", () => {
  describe("spend per minute per key", () => {
    it("stops a key by money, not by calls: 429 naming the budget in the OpenAI, Dify and MCP shapes; a refused call counts nothing", async () => {
      const key = await newKey();
      const before = await walletCents();
      expect((await chat(key, pricey)).status).toBe(200);
      expect((await chat(key, pricey)).status).toBe(200);

      const openAi = await chat(key, pricey);
      expect(openAi.status).toBe(429);
      expect(openAi.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(openAi.headers.get("x-should-retry")).toBe("true");
      expect(openAi.body.error).toMatchObject({ code: "rate_limited", type: "rate_limit_exceeded" });
      expect(openAi.body.error.message).toContain("Spend limit of $10.00 per minute exceeded");
      expect(openAi.body.error.message).toContain("$8.00 spent in this minute");

      const difyRefusal = await dify(key, pricey);
      expect(difyRefusal.status).toBe(429);
      expect(difyRefusal.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(difyRefusal.body).toMatchObject({ code: "rate_limited", status: 429 });
      expect(difyRefusal.body.message).toContain("Spend limit of $10.00 per minute");

      const mcp = await mcpToolCall(key, pricey);
      expect(mcp.status).toBe(200);
      expect(mcp.json.result.isError).toBe(true);
      expect(mcp.json.result.content[0].text).toContain("429 rate_limited: Spend limit of $10.00 per minute");
      expect(mcp.json.result._meta["promptmint/error"]).toMatchObject({ status: 429, code: "rate_limited" });
      expect(mcp.json.result._meta["promptmint/error"].retry_after_seconds).toBeGreaterThan(0);

      // The refusals spent nothing of the budget: a call that fits in what is left still passes.
      expect((await chat(key, cheap)).status).toBe(200);
      expect(await walletCents()).toBe(before - 2 * PRICEY - CHEAP);
      // Another key of the same account has its own minute.
      expect((await chat(await newKey(), pricey)).status).toBe(200);
    });
  });

  describe("x-should-retry with the official openai SDK", () => {
    it("sends a 409 price-guard refusal once, never retried", async () => {
      // v1 on a model whose worst case the app's new price no longer covers (decision 063).
      const { slug } = await createLiveApp(
        creator,
        { price_cents: 25 },
        { model: "gpt-4-turbo", prompt_template: "first: {{query}}" },
      );
      const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
        body: { max_tokens: 1, prompt_template: "short: {{query}}", promote: true },
      });
      const pinned = `${slug}@v${saved.body.production_version - 1}`;
      expect((await creator.api("PATCH", `/api/app/${slug}/`, { body: { price_cents: 1 } })).status).toBe(
        200,
      );
      const key = await newKey();
      const vendorCalls = vendor.requests.length;
      const { client, attempts } = countingClient(key);
      const error = await client.chat.completions
        .create({ model: pinned, messages: [{ role: "user", content: "hello" }] })
        .catch((failure: unknown) => failure);
      expect(error).toBeInstanceOf(OpenAI.ConflictError);
      expect((error as InstanceType<typeof OpenAI.ConflictError>).headers.get("x-should-retry")).toBe(
        "false",
      );
      expect(attempts).toEqual([409]);
      expect(vendor.requests.length).toBe(vendorCalls);
      // Without the header the SDK would have sent it three times: the same SDK retries a 429.
    });

    it("retries a 429 (x-should-retry: true) and the retry is answered", async () => {
      vendor.set({
        kind: "status",
        status: 429,
        message: "slow down",
        headers: { "retry-after-ms": "100" },
        times: 1,
      });
      const { client, attempts } = countingClient(await newKey());
      const answer = await client.chat.completions.create({
        model: cheap,
        messages: [{ role: "user", content: "hello" }],
      });
      expect(answer.choices[0]?.message.content).toContain("hello");
      expect(attempts).toEqual([429, 200]);
    });

    it("says false on refusals a retry cannot fix, and they are sent once", async () => {
      const key = await newKey();
      const { client, attempts } = countingClient(key);
      await expect(
        client.chat.completions.create({ model: cheap, messages: [], temperature: 5 }),
      ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
      expect(attempts).toEqual([400]);
      const unauthenticated = await chat("pm_wrong", cheap, { origin: "https://agent.example" });
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.headers.get("x-should-retry")).toBe("false");
      // A browser's SDK may read it too.
      expect(unauthenticated.headers.get("access-control-expose-headers")).toMatch(
        /(^|, )x-should-retry(,|$)/,
      );
      const unknown = await dify(key, "no-such-app");
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get("x-should-retry")).toBe("false");
      const broke = await chat(
        (
          await (
            await createCaller(server.baseUrl, "Broke Agent")
          ).api("POST", "/api/keys/", { body: { name: "k" } })
        ).body.key,
        cheap,
      );
      expect(broke.status).toBe(402);
      expect(broke.headers.get("x-should-retry")).toBe("false");
      // An answer that is not an error carries no advice.
      expect((await chat(key, cheap)).headers.get("x-should-retry")).toBeNull();
    });
  });

  describe("an unknown model", () => {
    const expected = {
      status: 404,
      code: "model_not_found",
      param: "model",
      type: "invalid_request_error",
    };

    it("is model_not_found naming model on Chat Completions, Responses and /v1/models/{id}", async () => {
      const { client, attempts } = countingClient(await newKey());
      const chatError = await client.chat.completions
        .create({ model: "no-such-app", messages: [{ role: "user", content: "x" }] })
        .catch((failure: unknown) => failure);
      expect(chatError).toMatchObject(expected);
      expect((chatError as Error).message).toContain("The model 'no-such-app' does not exist");
      const responsesError = await client.responses
        .create({ model: "no-such-app", input: "x" })
        .catch((failure: unknown) => failure);
      expect(responsesError).toMatchObject(expected);
      const retrieveError = await client.models.retrieve("no-such-app").catch((failure: unknown) => failure);
      expect(retrieveError).toMatchObject(expected);
      expect(attempts).toEqual([404, 404, 404]);
    });

    it("is model_not_found naming model for a version the app does not have", async () => {
      const { client } = countingClient(await newKey());
      const error = await client.chat.completions
        .create({ model: `${cheap}@v99`, messages: [{ role: "user", content: "x" }] })
        .catch((failure: unknown) => failure);
      expect(error).toMatchObject(expected);
      const responsesError = await client.responses
        .create({ model: `${cheap}@v99`, input: "x" })
        .catch((failure: unknown) => failure);
      expect(responsesError).toMatchObject(expected);
    });
  });

  describe("version pins", () => {
    it("refuses v0, v-1 and v01 in model as malformed versions (400 naming model), not as labels", async () => {
      const key = await newKey();
      const vendorCalls = vendor.requests.length;
      for (const pin of ["v0", "v-1", "v01", "0"]) {
        const refused = await chat(key, `${cheap}@${pin}`);
        expect(refused.status, pin).toBe(400);
        expect(refused.body.error.param, pin).toBe("model");
        expect(refused.body.error.message, pin).toContain("versions start at v1");
        expect(refused.headers.get("x-should-retry")).toBe("false");
      }
      expect(vendor.requests.length).toBe(vendorCalls);
    });

    it("reads V2 as v2, in model and in the Promptmint-Version header", async () => {
      const key = await newKey();
      const upper = await chat(key, `${cheap}@V2`);
      expect(upper.status).toBe(200);
      expect(upper.body.model).toBe(`${cheap}@V2`);
      expect(upper.headers.get("promptmint-version")).toBe("v2");
      const header = await dify(key, cheap, { "promptmint-version": "V2" });
      expect(header.status).toBe(200);
      expect(header.headers.get("promptmint-version")).toBe("v2");
    });

    it("refuses v0 in the Promptmint-Version header, naming the header", async () => {
      const refused = await dify(await newKey(), cheap, { "promptmint-version": "v0" });
      expect(refused.status).toBe(400);
      expect(refused.body.message).toContain("Promptmint-Version header pins version 'v0'");
    });

    it("lets no label be named like a version", async () => {
      const promptId = (await creator.api("GET", `/api/app/${cheap}/prompt/`)).body.id;
      for (const name of ["v0", "v3", "v-1"]) {
        const refused = await creator.api("PUT", `/api/prompts/${promptId}/labels/${name}`, {
          body: { version: 2 },
        });
        expect(refused.status, name).toBe(400);
      }
      const allowed = await creator.api("PUT", `/api/prompts/${promptId}/labels/v2-beta`, {
        body: { version: 2 },
      });
      expect(allowed.status).toBe(200);
    });
  });
});
