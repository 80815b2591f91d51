import { ChatClient, CompletionClient } from "dify-client";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { useWorkflowWorld } from "../../test/workflow-world.ts";

/**
 * The real clients against workflow apps on each provider (fake engines as strict as Dify, n8n and
 * Flowise): the answer comes back through the client's own parsing.
 */
const world = useWorkflowWorld();

const appUrl = (slug: string) => `${world.server.baseUrl}/api/app/${slug}`;

describe("dify-client", () => {
  it("CompletionClient.createCompletionMessage on a Dify workflow app → works", async () => {
    const slug = await world.workflowApp("dify", world.difySettings("app-dify-workflow-1234", "workflow"));
    const client = new CompletionClient(world.consumerKey, appUrl(slug));
    const answer = await client.createCompletionMessage({ query: "the figures" }, "analyst", false);
    expect(answer.data.answer).toBe("workflow ran on the figures");
  });

  it("ChatClient.createChatMessage (blocking) on a Dify agent app → works", async () => {
    const slug = await world.workflowApp("dify", world.difySettings("app-dify-agent-4321", "chat"));
    const client = new ChatClient(world.consumerKey, appUrl(slug));
    const answer = await client.createChatMessage({}, "book a table", "diner", false, null);
    expect(answer.data.answer).toBe("dify answers: book a table");
  });

  it("CompletionClient.createCompletionMessage on a Flowise form agentflow → works", async () => {
    const slug = await world.workflowApp("flowise", {
      base_url: `${world.providers.url}/flowise`,
      chatflow_id: "agent-form",
    });
    const client = new CompletionClient(world.consumerKey, appUrl(slug));
    const answer = await client.createCompletionMessage({ topic: "tides", lang: "en" }, "reader", false);
    expect(answer.data.answer).toBe("agentflow form: topic=tides, lang=en");
  });

  it("ChatClient.createChatMessage on an n8n webhook workflow → works", async () => {
    const slug = await world.workflowApp("n8n", {
      webhook_url: `${world.providers.url}/n8n/webhook/abc`,
      header_name: "X-N8N-Auth",
      header_value: "s3cret-header",
    });
    const client = new ChatClient(world.consumerKey, appUrl(slug));
    const answer = await client.createChatMessage({}, "hello n8n", "visitor", false, null);
    expect(answer.data.answer).toBe(`n8n says: hello n8n (session ${answer.data.conversation_id})`);
  });
});

describe("openai", () => {
  it("chat.completions.create on a Dify chat workflow app → works", async () => {
    const slug = await world.workflowApp("dify", world.difySettings("app-dify-key-9999", "chat"));
    const client = new OpenAI({
      apiKey: world.consumerKey,
      baseURL: `${world.server.baseUrl}/api/v1`,
      maxRetries: 0,
    });
    const completion = await client.chat.completions.create({
      model: slug,
      messages: [{ role: "user", content: "status?" }],
      user: "ops",
    });
    expect(completion.choices[0]?.message.content).toBe("dify answers: status?");
  });
});
