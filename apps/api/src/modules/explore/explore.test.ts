import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { invocations } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { createPromptApp } from "../../test/live-app.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";

const server = useTestServer({ env: { GATEWAY_RATE_LIMIT_PER_MINUTE: "1000" } });
const creator = useCaller(server, "Ada Creator");
const consumer = useCaller(server, "Consumer");

const topicSchema = {
  type: "object",
  properties: { topic: { type: "string", maxLength: 40, description: "Topic" } },
  required: ["topic"],
  additionalProperties: false,
};

interface AppSetup {
  name: string;
  visibility?: string;
  status?: string;
  type?: "prompt" | "workflow";
  mode?: "completion" | "chat";
  price?: number;
  description?: string;
}

async function createApp(setup: AppSetup): Promise<string> {
  const body = {
    name: setup.name,
    description: setup.description ?? "",
    type: setup.type ?? "prompt",
    interaction_mode: setup.mode ?? "completion",
    visibility: setup.visibility ?? "public",
    price_cents: setup.price ?? 5,
  };
  let slug: string;
  if (setup.type === "workflow") {
    const created = await creator.api("POST", "/api/app/", {
      body: { ...body, provider_config: { app_id: "flow-1", api_key: "wf-secret-key-1234" } },
    });
    expect(created.status).toBe(201);
    slug = created.body.slug as string;
  } else {
    // On the sandbox model first: its price may be below the starter model's floor (issue 32).
    ({ slug } = await createPromptApp(creator, body, {
      model: "sandbox",
      prompt_template: "Write a haiku about {{topic}}.",
      input_schema: topicSchema,
      changelog: "test setup",
    }));
  }
  const status = setup.status ?? "live";
  if (status !== "draft")
    expect((await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status } })).status).toBe(
      200,
    );
  return slug;
}

const slugs: Record<string, string> = {};

beforeAll(async () => {
  slugs.haiku = await createApp({ name: "Haiku Writer", description: "Poems about anything", price: 5 });
  slugs.chat = await createApp({ name: "Support Chat", mode: "chat", visibility: "embed", price: 50 });
  slugs.flow = await createApp({ name: "Research Flow", type: "workflow", price: 200 });
  slugs.secret = await createApp({ name: "Private Helper", visibility: "private" });
  slugs.draft = await createApp({ name: "Draft Helper", status: "draft" });
  slugs.archived = await createApp({ name: "Archived Helper", status: "archived" });
});

const anonymous = (path: string) => consumer.api("GET", path, { auth: "" });
const listedSlugs = async (query = "") => {
  const answer = await anonymous(`/api/explore/apps${query}`);
  expect(answer.status).toBe(200);
  return (answer.body.data as { slug: string }[]).map((app) => app.slug).sort();
};

describe("GET /api/explore/apps", () => {
  it("lists only live public and embeddable apps, to anyone, with creator and price", async () => {
    const answer = await anonymous("/api/explore/apps");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ page: 1, page_size: 24, total: 3, has_more: false });
    expect((answer.body.data as { slug: string }[]).map((app) => app.slug).sort()).toEqual(
      [slugs.haiku, slugs.chat, slugs.flow].sort(),
    );
    const haiku = answer.body.data.find((app: { slug: string }) => app.slug === slugs.haiku);
    expect(haiku).toEqual({
      name: "Haiku Writer",
      slug: slugs.haiku,
      description: "Poems about anything",
      type: "prompt",
      interaction_mode: "completion",
      price_cents: 5,
      pending_price_cents: null,
      pending_price_at: null,
      creator_name: "Ada Creator",
      updated_at: expect.any(String),
      accepts_tools: false,
      rating: { average: null, count: 0 },
      health: { calls_30d: 0, enough_calls: false, uptime: null, error_rate: null, median_latency_ms: null },
    });
  });

  it("searches name and description and filters by type, mode and price", async () => {
    expect(await listedSlugs("?q=poems")).toEqual([slugs.haiku]);
    expect(await listedSlugs("?q=SUPPORT")).toEqual([slugs.chat]);
    expect(await listedSlugs("?q=100%25")).toEqual([]);
    expect(await listedSlugs("?type=workflow")).toEqual([slugs.flow]);
    expect(await listedSlugs("?type=prompt&mode=chat")).toEqual([slugs.chat]);
    expect(await listedSlugs("?max_price_cents=50")).toEqual([slugs.haiku, slugs.chat].sort());
    expect(await listedSlugs("?min_price_cents=50&max_price_cents=200")).toEqual(
      [slugs.chat, slugs.flow].sort(),
    );
    expect(await listedSlugs("?page=2")).toEqual([]);
  });

  it.each([
    ["?type=plugin", "type"],
    ["?mode=voice", "mode"],
    ["?max_price_cents=cheap", "max_price_cents"],
    ["?min_price_cents=-1", "min_price_cents"],
    ["?page=0", "page"],
    ["?sort=name", "sort"],
    ["?sort=", "sort"],
    ["?min_price_cents=90&max_price_cents=10", "max_price_cents"],
  ])("refuses %s with a 400 naming %s", async (query, field) => {
    const answer = await anonymous(`/api/explore/apps${query}`);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("bad_request");
    expect(Object.keys(answer.body.fields)).toEqual([field]);
  });
});

describe("GET /api/explore/apps/{slug}", () => {
  it("shows a listed app's inputs and active plans, without owner or provider secrets", async () => {
    const plan = await creator.api("POST", `/api/app/${slugs.haiku}/packages/`, {
      body: { name: "Pro", price_cents: 500, included_calls: 100 },
    });
    expect(plan.status).toBe(201);
    const retired = await creator.api("POST", `/api/app/${slugs.haiku}/packages/`, {
      body: { name: "Old", price_cents: 300, included_calls: 10, is_active: false },
    });
    expect(retired.status).toBe(201);

    const answer = await anonymous(`/api/explore/apps/${slugs.haiku}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      slug: slugs.haiku,
      creator_name: "Ada Creator",
      input_schema: topicSchema,
      takes_query: false,
    });
    expect(answer.body.plans.map((p: { name: string }) => p.name)).toEqual(["Pro"]);
    for (const leaked of ["id", "owner_id", "provider_config", "visibility", "status"])
      expect(answer.body).not.toHaveProperty(leaked);
  });

  it("never returns a workflow's provider settings", async () => {
    const answer = await anonymous(`/api/explore/apps/${slugs.flow}`);
    expect(answer.status).toBe(200);
    expect(answer.body.takes_query).toBe(true);
    expect(answer.body.input_schema.properties).toEqual({});
    expect(JSON.stringify(answer.body)).not.toMatch(/flow-1|wf-secret|1234|provider/);
  });

  it.each(["secret", "draft", "archived"])("answers 404 for a %s app, even to its owner", async (which) => {
    const slug = slugs[which] as string;
    for (const answer of [
      await anonymous(`/api/explore/apps/${slug}`),
      await creator.api("GET", `/api/explore/apps/${slug}`),
    ]) {
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ code: "not_found", message: "Application not found" });
    }
    expect((await anonymous(`/api/explore/apps/no-such-app`)).status).toBe(404);
  });
});

describe("POST /api/explore/apps/{slug}/try", () => {
  it("refuses a signed-out visitor with 401 and an API key caller too", async () => {
    const path = `/api/explore/apps/${slugs.haiku}/try`;
    const body = { inputs: { topic: "rain" } };
    expect((await consumer.api("POST", path, { body, auth: "" })).status).toBe(401);
    const key = (await consumer.api("POST", "/api/keys/", { body: { name: "try" } })).body.key as string;
    expect((await consumer.api("POST", path, { body, auth: key })).status).toBe(401);
  });

  it("answers 402 with the top-up link when the wallet cannot pay, and records nothing", async () => {
    const broke = await createCaller(server.baseUrl, "Broke");
    const recordedBefore = await server.database.db.$count(invocations);
    const answer = await broke.api("POST", `/api/explore/apps/${slugs.haiku}/try`, {
      body: { inputs: { topic: "rain" } },
    });
    expect(answer.status).toBe(402);
    expect(answer.body.code).toBe("payment_required");
    expect(answer.body.message).toContain(`${server.baseUrl}/wallet`);
    const wallet = await broke.api("GET", "/api/wallet/");
    expect(wallet.body).toMatchObject({ balance_micros: 0, held_micros: 0 });
    expect(await server.database.db.$count(invocations)).toBe(recordedBefore);
  });

  it("runs the app once, charges the price through the ledger and records the invocation", async () => {
    await fundWallet(consumer, 1_000);
    const answer = await consumer.api("POST", `/api/explore/apps/${slugs.haiku}/try`, {
      body: { inputs: { topic: "autumn rain" } },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.answer).toContain("Write a haiku about autumn rain.");
    expect(answer.body.mode).toBe("completion");

    const wallet = await consumer.api("GET", "/api/wallet/");
    expect(wallet.body.balance_micros / 10_000).toBe(995);
    expect(wallet.body.held_micros / 10_000).toBe(0);
    const [row] = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.id, answer.body.id));
    expect(row).toMatchObject({ status: "success", chargedCents: 5, apiKeyId: null, mode: "completion" });
  });

  it("answers a chat app in chat mode", async () => {
    const answer = await consumer.api("POST", `/api/explore/apps/${slugs.chat}/try`, {
      body: { inputs: { topic: "tea" }, query: "Hello there" },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.mode).toBe("chat");
    expect(answer.body.conversation_id).toEqual(expect.any(String));
  });

  it("refuses bad inputs with a 400 naming the field and charges nothing", async () => {
    const before = (await consumer.api("GET", "/api/wallet/")).body.balance_micros / 10_000;
    const answer = await consumer.api("POST", `/api/explore/apps/${slugs.haiku}/try`, {
      body: { inputs: { topic: "x".repeat(41) } },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.fields).toEqual({ "inputs.topic": "must be at most 40 characters" });
    expect((await consumer.api("GET", "/api/wallet/")).body.balance_micros / 10_000).toBe(before);
  });

  it("answers 404 for an app that is not listed", async () => {
    await fundWallet(creator, 100);
    const answer = await creator.api("POST", `/api/explore/apps/${slugs.secret}/try`, {
      body: { inputs: { topic: "rain" } },
    });
    expect(answer.status).toBe(404);
  });
});

describe("the API docs", () => {
  it("list the explore and paid endpoints with request and response examples", async () => {
    const { paths } = (await anonymous("/api/openapi.json")).body;
    const json = (operation: any, where: "request" | "response") =>
      where === "request"
        ? operation.requestBody.content["application/json"]
        : operation.responses["200"].content["application/json"];
    expect(json(paths["/api/explore/apps"].get, "response").example.data[0]).toHaveProperty("price_cents");
    expect(json(paths["/api/explore/apps/{slug}"].get, "response").example).toHaveProperty("input_schema");
    const tryIt = paths["/api/explore/apps/{slug}/try"].post;
    expect(json(tryIt, "request").example).toEqual({ inputs: { topic: "autumn rain" } });
    expect(tryIt.responses["402"].content["application/json"].example.code).toBe("payment_required");
    for (const path of ["/api/app/{slug}/completion-messages", "/api/app/{slug}/chat-messages"]) {
      expect(json(paths[path].post, "request").example.response_mode).toBe("blocking");
      expect(json(paths[path].post, "response").example.answer).toEqual(expect.any(String));
    }
    const openAi = paths["/api/v1/chat/completions"].post;
    expect(json(openAi, "request").example.model).toBe("haiku-writer");
    expect(json(openAi, "response").example.choices[0].message.content).toEqual(expect.any(String));
  });
});
