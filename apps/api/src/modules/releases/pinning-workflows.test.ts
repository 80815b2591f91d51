import { expect, it } from "vitest";
import { useWorkflowWorld } from "../../test/workflow-world.ts";

// A workflow app's provider configuration is versioned too (docs/decisions/060): each protocol's
// pin reaches it the same way as a prompt app's (decision 057), and each answer names the version.
// The loopback webhook shows which configuration answered: each version sends its own token.
const world = useWorkflowWorld();

it("pins a workflow app through OpenAI's model@version and MCP's _meta, and names the version", async () => {
  world.providers.set("ok");
  const created = await world.creator.api("POST", "/api/app/", {
    body: {
      name: `Pinned hook ${Math.random().toString(36).slice(2, 7)}`,
      type: "workflow",
      visibility: "public",
      price_cents: 30,
      provider_config: { app_id: "app-1", api_key: "app-dify-key-9999" },
    },
  });
  const slug = created.body.slug as string;
  const hook = (token: string) => ({ url: `${world.providers.url}/hook`, bearer_token: token });
  await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
    body: { provider: "webhook", provider_config: hook("tok-one") },
  });
  expect(
    (await world.creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } }))
      .status,
  ).toBe(200);
  const saved = await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
    body: { provider_config: hook("tok-two") },
  });
  expect(saved.body).toMatchObject({ current_version: 3, production_version: 2 });

  const tokens = async (run: () => Promise<unknown>) => {
    const before = world.providers.requests.length;
    await run();
    return world.providers.requests.slice(before).map((r) => r.headers.authorization);
  };
  const api = (path: string, body: object, headers: Record<string, string> = {}) =>
    world.consumer.api("POST", path, { auth: world.consumerKey, body, headers });

  let chat: Awaited<ReturnType<typeof api>> | undefined;
  expect(
    await tokens(async () => {
      chat = await api("/api/v1/chat/completions", {
        model: `${slug}@v3`,
        messages: [{ role: "user", content: "hello" }],
      });
    }),
  ).toEqual(["Bearer tok-two"]);
  expect(chat?.status, JSON.stringify(chat?.body)).toBe(200);
  expect(chat?.body).toMatchObject({ model: `${slug}@v3`, system_fingerprint: "v3" });

  const production = await api("/api/v1/responses", { model: slug, input: "hello" });
  expect(production.body.metadata).toEqual({ promptmint_version: "v2" });

  let tool: Awaited<ReturnType<typeof api>> | undefined;
  expect(
    await tokens(async () => {
      tool = await api(
        `/api/app/${slug}/mcp`,
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: slug, arguments: { query: "hello" }, _meta: { "promptmint/version": "latest" } },
        },
        { accept: "application/json, text/event-stream" },
      );
    }),
  ).toEqual(["Bearer tok-two"]);
  const body =
    typeof tool?.body === "string" ? JSON.parse(/^data: (.*)$/m.exec(tool.body)?.[1] ?? "null") : tool?.body;
  expect(body.result._meta["promptmint/version"]).toBe("v3");

  const missing = await api("/api/v1/chat/completions", {
    model: `${slug}@v9`,
    messages: [{ role: "user", content: "hello" }],
  });
  expect(missing.status).toBe(404);
  expect(missing.body.error).toMatchObject({ code: "model_not_found", param: "model" });
});
