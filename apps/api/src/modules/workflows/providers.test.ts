import { ChatClient, CompletionClient } from "dify-client";
import { describe, expect, it } from "vitest";
import { users } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { useWorkflowWorld } from "../../test/workflow-world.ts";

/**
 * Each provider as the real engine behaves (test/fake-providers.ts is as strict as Dify, n8n 1.123
 * and Flowise 3): Test Config checks settings without running production workflows, and calls
 * reach the flow the way it reads its input.
 */
const world = useWorkflowWorld();

const testConfig = (slug: string, body: object = {}) =>
  world.creator.api("POST", `/api/app/${slug}/workflow/test-config/`, { body });
const lastRequestTo = (path: string) => world.providers.requests.filter((r) => r.path === path).at(-1);

describe("Dify: the app's real mode decides", () => {
  it("Test Config refuses an app_type the app is not, naming provider_config.app_type and the app's mode", async () => {
    const slug = await world.workflowApp("dify", world.difySettings("app-dify-key-9999", "workflow"));
    const test = await testConfig(slug);
    expect(test.status).toBe(400);
    expect(test.body.fields).toEqual({
      "provider_config.app_type": "is 'workflow' but this Dify app is a 'advanced-chat' app: choose 'chat'",
    });
    const right = await testConfig(slug, {
      provider_config: world.difySettings("app-dify-key-9999", "chat"),
    });
    expect(right.body).toMatchObject({ success: true, app_info: { mode: "advanced-chat" } });
  });

  it("a call goes to the route of the app's real mode even when app_type was saved wrong", async () => {
    const chat = await world.workflowApp("dify", world.difySettings("app-dify-key-9999", "workflow"));
    const answer = await world.consumer.api("POST", `/api/app/${chat}/chat-messages`, {
      auth: world.consumerKey,
      body: { query: "which route?" },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.answer).toBe("dify answers: which route?");

    const completion = await world.workflowApp(
      "dify",
      world.difySettings("app-dify-completion-5678", "chat"),
    );
    const client = new CompletionClient(world.consumerKey, `${world.server.baseUrl}/api/app/${completion}`);
    const written = await client.createCompletionMessage({ query: "a poem" }, "writer", false);
    expect(written.data.answer).toBe("dify answers: a poem");
    expect(lastRequestTo("/dify/v1/completion-messages")?.body.inputs).toEqual({ query: "a poem" });
  });

  it("an agent app, which Dify serves only streaming, answers a blocking call from its stream", async () => {
    const slug = await world.workflowApp("dify", world.difySettings("app-dify-agent-4321", "chat"));
    const client = new ChatClient(world.consumerKey, `${world.server.baseUrl}/api/app/${slug}`);
    const answer = await client.createChatMessage({}, "plan my day", "planner", false, null);
    expect(answer.data.answer).toBe("dify answers: plan my day");
    expect(lastRequestTo("/dify/v1/chat-messages")?.body.response_mode).toBe("streaming");
  });
});

/** A Flowise workflow app on the loopback providers' chatflow `chatflowId`. */
const flowiseApp = (chatflowId: string, apiKey?: string) =>
  world.workflowApp("flowise", {
    base_url: `${world.providers.url}/flowise`,
    chatflow_id: chatflowId,
    ...(apiKey === undefined ? {} : { api_key: apiKey }),
  });

describe("Flowise: the key is optional and inputs reach the flow the way it reads them", () => {
  it("an open chatflow is tested and called without an API key", async () => {
    const slug = await flowiseApp("flow-open");
    const test = await testConfig(slug);
    expect(test.body).toMatchObject({
      success: true,
      app_info: { type: "CHATFLOW", start_input: "question", api_key: "none (the flow must be open)" },
    });
    const answer = await world.consumer.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: world.consumerKey,
      body: { inputs: { lang: "fr" }, query: "hello" },
    });
    expect(answer.body.answer).toBe("flowise says: hello");
    const sent = lastRequestTo("/flowise/api/v1/prediction/flow-open");
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.body.overrideConfig.vars).toEqual({ lang: "fr" });
  });

  it("a key Flowise does not know is refused by Test Config, naming provider_config.api_key", async () => {
    const slug = await flowiseApp("flow-1", "fw-wrong-0000");
    const test = await testConfig(slug);
    expect(test.status).toBe(400);
    expect(Object.keys(test.body.fields)).toEqual(["provider_config.api_key"]);
  });

  it("a form-input agentflow gets the inputs as its form (no question), and undeclared inputs are refused", async () => {
    const slug = await flowiseApp("agent-form");
    const test = await testConfig(slug);
    expect(test.body).toMatchObject({
      success: true,
      app_info: { type: "AGENTFLOW", start_input: "formInput", form_fields: "topic, lang" },
    });
    const answer = await world.consumer.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: world.consumerKey,
      body: { inputs: { topic: "tides", lang: "fr" } },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.answer).toBe("agentflow form: topic=tides, lang=fr");
    const sent = lastRequestTo("/flowise/api/v1/prediction/agent-form");
    expect(sent?.body.form).toEqual({ topic: "tides", lang: "fr" });
    expect(sent?.body.question).toBeUndefined();

    const before = world.providers.executions.length;
    const refused = await world.consumer.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: world.consumerKey,
      body: { inputs: { topic: "tides", colour: "blue" } },
    });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body.fields ?? {})).toContain("inputs.colour");
    expect(world.providers.executions.length).toBe(before);
  });

  it("a chat-input agentflow gets the query as its question", async () => {
    const slug = await flowiseApp("agent-chat");
    const answer = await world.consumer.api("POST", `/api/app/${slug}/chat-messages`, {
      auth: world.consumerKey,
      body: { query: "route me" },
    });
    expect(answer.body.answer).toBe("agentflow says: route me");
    expect(lastRequestTo("/flowise/api/v1/prediction/agent-chat")?.body.form).toBeUndefined();
  });
});

describe("n8n: Test Config never runs the production workflow", () => {
  const n8n = (path: string) => ({
    webhook_url: `${world.providers.url}/n8n/${path}`,
    header_name: "X-N8N-Auth",
    header_value: "s3cret-header",
  });

  it("an active production webhook passes by its preflight answer, with no execution", async () => {
    const slug = await world.workflowApp("n8n", n8n("webhook/abc"));
    const before = world.providers.executions.length;
    const test = await testConfig(slug);
    expect(test.body).toMatchObject({ success: true, app_info: { methods: "POST" } });
    expect(world.providers.executions.length).toBe(before);
    expect(lastRequestTo("/n8n/webhook/abc")?.method).toBe("OPTIONS");
  });

  it("a webhook that is not registered (inactive workflow) fails the test, saying so", async () => {
    const slug = await world.workflowApp("n8n", n8n("webhook/not-active"));
    const test = await testConfig(slug);
    expect(test.body.success).toBe(false);
    expect(test.body.message).toBe(
      "n8n has no active webhook at this URL (HTTP 500). n8n serves a production URL only while its workflow is active: activate it and check the path",
    );
  });

  it("n8n's test URL is refused by name: it answers only while the editor listens", async () => {
    const slug = await world.workflowApp("n8n", n8n("webhook-test/abc"));
    const test = await testConfig(slug);
    expect(test.status).toBe(400);
    expect(Object.keys(test.body.fields)).toEqual(["provider_config.webhook_url"]);
  });
});

describe("the user the provider sees", () => {
  const hookUsers = () =>
    world.providers.requests.filter((r) => r.path === "/hook").map((r) => r.body.user as string);

  it("is the caller's own user scoped to the caller, or fresh per call, and never an internal id", async () => {
    const slug = await world.workflowApp("webhook", { url: `${world.providers.url}/hook` });
    const other = await createCaller(world.server.baseUrl, "Other Consumer");
    const otherKey = (await other.api("POST", "/api/keys/", { body: { name: "other" } })).body.key;
    await fundWallet(other, 10_000);
    const call = (key: string, user?: string) =>
      world.consumer.api("POST", `/api/app/${slug}/completion-messages`, {
        auth: key,
        body: { inputs: {}, query: "who am I?", ...(user ? { user } : {}) },
      });
    for (const [key, user] of [
      [world.consumerKey, "alice"],
      [world.consumerKey, "alice"],
      [otherKey, "alice"],
      [world.consumerKey, undefined],
      [world.consumerKey, undefined],
    ] as const)
      expect((await call(key, user)).status).toBe(200);
    const [alice, aliceAgain, othersAlice, anonymous, anonymousAgain] = hookUsers().slice(-5);
    expect(alice).toMatch(/^pm-[\w-]{22}$/);
    expect(aliceAgain).toBe(alice);
    expect(othersAlice).not.toBe(alice);
    expect(anonymous).not.toBe(anonymousAgain);
    const ids = (await world.server.database.db.select({ id: users.id }).from(users)).map((row) => row.id);
    for (const user of hookUsers()) for (const id of ids) expect(user).not.toContain(id);
  });

  it("without a user, one conversation's turns share one upstream user and Dify conversation", async () => {
    const slug = await world.workflowApp("dify", world.difySettings("app-dify-key-9999", "chat"));
    const ask = (query: string, conversationId: string | null) =>
      world.consumer.api("POST", `/api/app/${slug}/chat-messages`, {
        auth: world.consumerKey,
        body: { query, ...(conversationId ? { conversation_id: conversationId } : {}) },
      });
    const first = await ask("one", null);
    const second = await ask("two", first.body.conversation_id);
    const elsewhere = await ask("three", null);
    expect([first.status, second.status, elsewhere.status]).toEqual([200, 200, 200]);
    const [one, two, three] = world.providers.requests
      .filter((r) => r.path === "/dify/v1/chat-messages")
      .slice(-3);
    expect(two?.body.user).toBe(one?.body.user);
    expect(one?.body.conversation_id).toBeUndefined();
    expect(two?.body.conversation_id).toMatch(/^dify-conv-\d+$/);
    expect(three?.body.user).not.toBe(one?.body.user);
  });
});
