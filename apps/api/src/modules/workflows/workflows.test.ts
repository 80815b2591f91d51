import { ChatClient, CompletionClient } from "dify-client";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { workflows } from "../../db/schema/index.ts";
import { createCaller } from "../../test/caller.ts";
import { withTestServer } from "../../test/use-test-server.ts";
import { useWorkflowWorld } from "../../test/workflow-world.ts";

const world = useWorkflowWorld();
beforeEach(() => world.providers.set("ok"));

describe("workflow providers", () => {
  it("lists the four providers with their configuration forms", async () => {
    const response = await world.creator.api("GET", "/api/workflow-providers/");
    expect(response.body.map((p: { slug: string }) => p.slug)).toEqual(["dify", "n8n", "flowise", "webhook"]);
    const dify = response.body[0];
    expect(dify.config_schema.required).toEqual(["base_url", "api_key", "app_type"]);
    expect(dify.config_schema.properties.base_url.default).toBe("https://api.dify.ai/v1");
    expect(dify.config_schema.properties.api_key.secret).toBe(true);
  });

  it("starts a new workflow app on Dify with its key encrypted, masked, and kept when the mask is sent back", async () => {
    const { body: app } = await world.creator.api("POST", "/api/app/", {
      body: {
        name: "Keyed",
        type: "workflow",
        provider_config: { app_id: "my-app", api_key: "app-dify-key-9999" },
      },
    });
    const config = await world.creator.api("GET", `/api/app/${app.slug}/workflow/`);
    expect(config.body).toMatchObject({
      provider: { slug: "dify" },
      provider_config: {
        base_url: "https://api.dify.ai/v1",
        api_key: "••••9999",
        app_type: "chat",
        app_id: "my-app",
      },
      timeout_seconds: 300,
      max_iterations: 10,
      enable_logging: true,
      current_version: 1,
    });
    const [row] = await world.server.database.db
      .select()
      .from(workflows)
      .where(eq(workflows.id, config.body.id));
    expect(JSON.stringify(row)).not.toContain("app-dify-key-9999");

    const kept = await world.creator.api("PATCH", `/api/app/${app.slug}/workflow/`, {
      body: {
        provider_config: { ...config.body.provider_config, base_url: `${world.providers.url}/dify/v1` },
        changelog: "self-hosted",
      },
    });
    expect(kept.body.provider_config.api_key).toBe("••••9999");
    expect(kept.body.current_version).toBe(2);
    const test = await world.creator.api("POST", `/api/app/${app.slug}/workflow/test-config/`, {
      body: { provider_config: kept.body.provider_config },
    });
    // The fake Dify accepts only the real key: success proves the mask resolved to the stored secret.
    expect(test.body).toMatchObject({ success: true, message: "Connected to Dify app 'Support Bot'" });
    const versions = await world.creator.api("GET", `/api/workflows/${config.body.id}/versions/`);
    expect(
      versions.body.map((v: { version: number; changelog: string }) => [v.version, v.changelog]),
    ).toEqual([
      [2, "self-hosted"],
      [1, "Initial version"],
    ]);
  });

  it("refuses settings that break the provider's schema, naming the field", async () => {
    const { body: app } = await world.creator.api("POST", "/api/app/", {
      body: { name: "Strict Flow", type: "workflow", provider_config: { app_id: "a", api_key: "k-0000" } },
    });
    const cases: [object, string][] = [
      [{ provider: "n8n", provider_config: {} }, "provider_config.webhook_url"],
      [{ provider: "n8n", provider_config: { webhook_url: "ftp://x" } }, "provider_config.webhook_url"],
      [
        { provider: "dify", provider_config: { api_key: "x", app_type: "agent" } },
        "provider_config.app_type",
      ],
      [
        { provider: "webhook", provider_config: { url: "https://example.com", colour: "red" } },
        "provider_config.colour",
      ],
      [{ timeout_seconds: 0 }, "timeout_seconds"],
      [{ provider: "zapier" }, "provider"],
    ];
    for (const [body, field] of cases) {
      const response = await world.creator.api("PATCH", `/api/app/${app.slug}/workflow/`, { body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(response.body.fields), JSON.stringify(body)).toContain(field);
    }
  });
});

describe("calls through each provider", () => {
  it("Dify chat: blocking and streaming through the official SDK, keeping Dify's conversation", async () => {
    const slug = await world.workflowApp("dify", {
      base_url: `${world.providers.url}/dify/v1`,
      api_key: "app-dify-key-9999",
      app_type: "chat",
    });
    const test = await world.creator.api("POST", `/api/app/${slug}/workflow/test-config/`, {
      body: { provider_config: {} },
    });
    expect(test.body).toMatchObject({
      success: true,
      message: "Connected to Dify app 'Support Bot'",
      app_info: { name: "Support Bot", mode: "advanced-chat", input_variables: "topic" },
    });

    const client = new ChatClient(world.consumerKey, `${world.server.baseUrl}/api/app/${slug}`);
    const first = await client.createChatMessage({}, "hello there", "u1", false, null);
    expect(first.data.answer).toBe("dify answers: hello there");
    expect(first.data.metadata.usage).toMatchObject({ input_tokens: 12, output_tokens: 3 });
    const second = await client.createChatMessage({}, "again", "u1", true, first.data.conversation_id);
    let text = "";
    for await (const chunk of second.data) text += chunk.toString();
    const events = text
      .split("\n\n")
      .filter((b) => b.startsWith("data: "))
      .map((b) => JSON.parse(b.slice(6)));
    expect(
      events
        .filter((e) => e.event === "message")
        .map((e) => e.answer)
        .join(""),
    ).toBe("dify answers: again");
    expect(events.at(-1)).toMatchObject({
      event: "message_end",
      conversation_id: first.data.conversation_id,
    });
    // Our conversation id maps to Dify's: the second turn went to Dify with Dify's own id.
    const difyCalls = world.providers.requests.filter((r) => r.path === "/dify/v1/chat-messages");
    expect(difyCalls.at(-2)?.body.conversation_id).toBeUndefined();
    expect(difyCalls.at(-1)?.body.conversation_id).toBe("dify-conv-1");
    expect(difyCalls.at(-1)?.headers.authorization).toBe("Bearer app-dify-key-9999");
  });

  it("Dify workflow app: the query travels as inputs.query and outputs.text is the answer", async () => {
    const slug = await world.workflowApp("dify", {
      base_url: `${world.providers.url}/dify/v1`,
      api_key: "app-dify-workflow-1234",
      app_type: "workflow",
    });
    const client = new CompletionClient(world.consumerKey, `${world.server.baseUrl}/api/app/${slug}`);
    const response = await client.createCompletionMessage({ query: "the data" }, "u2", false);
    expect(response.data.answer).toBe("workflow ran on the data");
    expect(response.data.metadata.usage.output_tokens).toBe(8);
  });

  it("n8n: header auth, the Respond-to-Webhook item's output, our conversation id as sessionId", async () => {
    const slug = await world.workflowApp("n8n", {
      webhook_url: `${world.providers.url}/n8n/webhook/abc`,
      header_name: "X-N8N-Auth",
      header_value: "s3cret-header",
    });
    const first = await world.consumer.api("POST", `/api/app/${slug}/chat-messages`, {
      auth: world.consumerKey,
      body: { query: "hi n8n", user: "u3" },
    });
    expect(first.status).toBe(200);
    expect(first.body.answer).toBe(`n8n says: hi n8n (session ${first.body.conversation_id})`);
    const masked = await world.creator.api("GET", `/api/app/${slug}/workflow/`);
    expect(masked.body.provider_config.header_value).toBe("••••ader");
  });

  it("Flowise: question and vars go to the prediction API, and Test Config reads the chatflow and checks its key", async () => {
    const slug = await world.workflowApp("flowise", {
      base_url: `${world.providers.url}/flowise`,
      chatflow_id: "flow-1",
      api_key: "fw-key-1234",
    });
    const response = await world.consumer.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: world.consumerKey,
      body: { inputs: { lang: "fr" }, query: "what is new?" },
    });
    expect(response.body.answer).toBe("flowise says: what is new?");
    const sent = world.providers.requests.filter((r) => r.path.endsWith("/prediction/flow-1")).at(-1);
    expect(sent?.body.overrideConfig.vars).toEqual({ lang: "fr" });
    expect(sent?.headers.authorization).toBe("Bearer fw-key-1234");
    const test = await world.creator.api("POST", `/api/app/${slug}/workflow/test-config/`, { body: {} });
    expect(test.body).toMatchObject({
      success: true,
      app_info: { id: "flow-1", type: "CHATFLOW", api_key: "known to Flowise" },
    });
  });

  it("webhook: our JSON contract with usage, streamed as one message when the provider cannot stream", async () => {
    const slug = await world.workflowApp("webhook", { url: `${world.providers.url}/hook` });
    const response = await fetch(`${world.server.baseUrl}/api/app/${slug}/completion-messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${world.consumerKey}`, "content-type": "application/json" },
      body: JSON.stringify({ inputs: {}, query: "ping", response_mode: "streaming" }),
    });
    const events = (await response.text())
      .split("\n\n")
      .filter((b) => b.startsWith("data: "))
      .map((b) => JSON.parse(b.slice(6)));
    // The first event, sent at once, carries the task id and no text yet.
    expect(events.map((e) => e.event)).toEqual(["message", "message", "message_end"]);
    expect(events[0]).toMatchObject({ answer: "", task_id: events[1].task_id });
    expect(events[1].answer).toBe("hook got ping");
    expect(events[2].metadata.usage).toMatchObject({ input_tokens: 4, output_tokens: 6, total_tokens: 10 });
  });
});

describe("provider failures", () => {
  it("maps a provider 4xx to 502 with its message, and a hang to 504 within timeout_seconds", async () => {
    const slug = await world.workflowApp(
      "dify",
      { base_url: `${world.providers.url}/dify/v1`, api_key: "app-dify-key-9999", app_type: "chat" },
      { timeout_seconds: 1 },
    );
    world.providers.set("error400");
    const bad = await world.consumer.api("POST", `/api/app/${slug}/chat-messages`, {
      auth: world.consumerKey,
      body: { query: "x" },
    });
    expect(bad.status).toBe(502);
    expect(bad.body.message).toBe("Dify answered HTTP 400: inputs.topic is required in input form");
    world.providers.set("hang");
    const started = Date.now();
    const slow = await world.consumer.api("POST", `/api/app/${slug}/chat-messages`, {
      auth: world.consumerKey,
      body: { query: "x" },
    });
    expect(slow.status).toBe(504);
    // 1 s asked: at least that, and far below the default 300 s, a bound no load can fail (decision 066).
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("passes a provider's 429 on as a 429 with its Retry-After, in Dify's shape, charging nothing", async () => {
    const slug = await world.workflowApp("dify", {
      base_url: `${world.providers.url}/dify/v1`,
      api_key: "app-dify-key-9999",
      app_type: "chat",
    });
    // Held or not: a lease's unspent rest moves from held to the balance whenever its sweep runs.
    const wallet = async () => {
      const { balance_micros, held_micros } = (await world.consumer.api("GET", "/api/wallet/")).body;
      return (balance_micros as number) + (held_micros as number);
    };
    const before = await wallet();
    world.providers.set("rate429");
    try {
      const limited = await world.consumer.api("POST", `/api/app/${slug}/chat-messages`, {
        auth: world.consumerKey,
        body: { query: "x" },
      });
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("3");
      expect(limited.body).toMatchObject({ code: "rate_limit_error", status: 429 });
      expect(limited.body.message).toBe("Dify is rate limiting requests (HTTP 429); retry after 3 s");
      expect(await wallet()).toBe(before);
    } finally {
      world.providers.set("ok");
    }
  });

  it("refuses private provider URLs when ALLOW_PRIVATE_UPSTREAMS is off, without connecting", async () => {
    await withTestServer({}, async (strict) => {
      const owner = await createCaller(strict.baseUrl);
      const { body: app } = await owner.api("POST", "/api/app/", {
        body: { name: "SSRF", type: "workflow", provider_config: { app_id: "a", api_key: "k-1111" } },
      });
      await owner.api("PATCH", `/api/app/${app.slug}/workflow/`, {
        body: { provider: "webhook", provider_config: { url: `${world.providers.url}/hook` } },
      });
      const before = world.providers.requests.length;
      const call = await owner.api("POST", `/api/app/${app.slug}/completion-messages`, {
        body: { query: "x" },
      });
      expect(call.status).toBe(400);
      expect(call.body.message).toMatch(/private or reserved address/);
      const test = await owner.api("POST", `/api/app/${app.slug}/workflow/test-config/`, { body: {} });
      expect(test.body.success).toBe(false);
      expect(world.providers.requests.length).toBe(before);
    });
  });
});
