import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { fundWallet } from "../../test/caller.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";

// The app setting `allow_tools` (docs/decisions/053): who may set it, who sees it, and the 400s of
// a request whose tools are malformed, refused, or not allowed; a replayed tool-call answer.

const { server, vendor } = useVendorServer();
const creator = useCaller(server, "Tool Maker");
const consumer = useCaller(server, "Tool User");
let key: string;
let toolApp: string;
let plainApp: string;

beforeAll(async () => {
  const live = async (allowTools: boolean) => {
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: {
        name: allowTools ? "With tools" : "Without tools",
        visibility: "public",
        price_cents: 10,
        allow_tools: allowTools,
      },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
    const published = await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, {
      body: { status: "live" },
    });
    expect(published.status).toBe(200);
    return app.slug as string;
  };
  toolApp = await live(true);
  plainApp = await live(false);
  await fundWallet(consumer, 500);
  key = (await consumer.api("POST", "/api/keys/", { body: { name: "tools" } })).body.key;
});

beforeEach(() => vendor.set({ kind: "tools", arguments: '{"city":"Rome"}' }));

const tools = [{ type: "function", function: { name: "weather", parameters: { type: "object" } } }];

async function chat(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return fetch(`${server.baseUrl}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

describe("the allow_tools setting", () => {
  it("is off by default, set and cleared by the creator, and shown in the app", async () => {
    const { body: app } = await creator.api("POST", "/api/app/", { body: { name: "Default" } });
    expect(app.allow_tools).toBe(false);
    const on = await creator.api("PATCH", `/api/app/${app.slug}/`, { body: { allow_tools: true } });
    expect(on.body.allow_tools).toBe(true);
    const off = await creator.api("PATCH", `/api/app/${app.slug}/`, { body: { allow_tools: false } });
    expect(off.body.allow_tools).toBe(false);
  });

  it("refuses a workflow app that allows tools, naming allow_tools", async () => {
    const created = await creator.api("POST", "/api/app/", {
      body: {
        name: "Flow",
        type: "workflow",
        provider_config: { app_id: "x", api_key: "y" },
        allow_tools: true,
      },
    });
    expect(created.status).toBe(400);
    expect(created.body.fields).toEqual({
      allow_tools: expect.stringMatching(/only be true on prompt applications/),
    });
  });

  it("refuses a value that is not a boolean", async () => {
    const { status, body } = await creator.api("PATCH", `/api/app/${plainApp}/`, {
      body: { allow_tools: "yes" },
    });
    expect(status).toBe(400);
    expect(body.fields).toHaveProperty("allow_tools");
  });

  it("is shown to callers in Explore and in the OpenAI models list", async () => {
    const list = await consumer.api("GET", "/api/explore/apps");
    const bySlug = Object.fromEntries(list.body.data.map((a: any) => [a.slug, a.accepts_tools]));
    expect(bySlug).toMatchObject({ [toolApp]: true, [plainApp]: false });
    const detail = await consumer.api("GET", `/api/explore/apps/${toolApp}`);
    expect(detail.body.accepts_tools).toBe(true);
    const model = await consumer.api("GET", `/api/v1/models/${toolApp}`, { auth: key });
    expect(model.body).toMatchObject({ id: toolApp, accepts_tools: true });
  });
});

describe("tool requests the gateway refuses", () => {
  const refusedWith = async (body: Record<string, unknown>, param: string, message: RegExp) => {
    const answer = await chat(body);
    const error = ((await answer.json()) as { error: { param: string; message: string } }).error;
    expect(answer.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toMatch(message);
  };
  const asked = [{ role: "user", content: "Weather?" }];

  it("tools on an app without allow_tools: 400 saying its creator has not enabled them", () =>
    refusedWith({ model: plainApp, messages: asked, tools }, "tools", /creator has not enabled tools/));

  it("assistant tool_calls on an app without allow_tools", () =>
    refusedWith(
      {
        model: plainApp,
        messages: [
          ...asked,
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c1", type: "function", function: { name: "w", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "c1", content: "rain" },
        ],
      },
      "messages[1].tool_calls",
      /creator has not enabled tools/,
    ));

  it("a tool_choice naming a function that is not among the tools", () =>
    refusedWith(
      {
        model: toolApp,
        messages: asked,
        tools,
        tool_choice: { type: "function", function: { name: "other" } },
      },
      "tool_choice",
      /'other', which is not one of the tools/,
    ));

  it("a tool_choice that requires a tool without tools", () =>
    refusedWith({ model: toolApp, messages: asked, tool_choice: "required" }, "tool_choice", /needs tools/));

  it("a tool result that answers no tool call", () =>
    refusedWith(
      { model: toolApp, messages: [...asked, { role: "tool", tool_call_id: "nope", content: "x" }], tools },
      "messages[1].tool_call_id",
      /must answer a tool call of an earlier assistant message/,
    ));

  it("a tool that is not a function", () =>
    refusedWith(
      { model: toolApp, messages: asked, tools: [{ type: "custom", custom: { name: "x" } }] },
      "tools.0.type",
      /only function tools/,
    ));

  it("a function declared twice", () =>
    refusedWith(
      { model: toolApp, messages: asked, tools: [...tools, ...tools] },
      "tools[1].function.name",
      /second time/,
    ));

  it("parallel_tool_calls false on an app whose Google model cannot honour it", async () => {
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name: "Gemini tools", visibility: "public", price_cents: 10, allow_tools: true },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gemini-pro" } });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    await refusedWith(
      { model: app.slug, messages: asked, tools, parallel_tool_calls: false },
      "parallel_tool_calls",
      /cannot be false with this app's model/,
    );
  });

  it("a Responses tool that runs on OpenAI's servers", async () => {
    const answer = await fetch(`${server.baseUrl}/api/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: toolApp, input: "x", tools: [{ type: "web_search" }] }),
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as any).error.param).toBe("tools.0.type");
  });
});

describe("a tool-call answer replayed under its Idempotency-Key", () => {
  it("streams the stored tool calls again, charged once", async () => {
    const body = { model: toolApp, messages: [{ role: "user", content: "Weather?" }], tools, stream: true };
    const headers = { "idempotency-key": `tools-${Date.now()}` };
    const first = await (await chat(body, headers)).text();
    const requests = vendor.requests.length;
    const again = await chat(body, headers);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const replayed = await again.text();
    expect(vendor.requests.length).toBe(requests);
    const callsOf = (text: string) =>
      text
        .split("\n\n")
        .filter((line) => line.startsWith("data: {"))
        .map((line) => JSON.parse(line.slice(6)))
        .flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? []);
    const args = (text: string) =>
      callsOf(text)
        .map((c: any) => c.function.arguments)
        .join("");
    expect(args(first)).toBe('{"city":"Rome"}');
    expect(args(replayed)).toBe('{"city":"Rome"}');
    expect(replayed).toContain('"finish_reason":"tool_calls"');
  });
});
