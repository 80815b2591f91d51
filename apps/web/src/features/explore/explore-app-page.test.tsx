import type { IoSchema } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { INTENDED_PATH_STORAGE_KEY } from "../../lib/intended-path";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { exploreAppDetailFixture, gatewayResponseFixture } from "../../test/fixtures";
import { currentPath, renderRoute } from "../../test/render-route";

const DETAIL = "GET /api/explore/apps/haiku-writer";
const TRY = "POST /api/explore/apps/haiku-writer/try";
/** The page also reads the app's reviews (and a signed-in person's own): none here. */
const reviewStubs = {
  "GET /api/explore/apps/haiku-writer/reviews": () =>
    jsonResponse({
      data: [],
      page: 1,
      page_size: 20,
      total: 0,
      has_more: false,
      rating: { average: null, count: 0 },
    }),
  "GET /api/explore/apps/haiku-writer/reviews/mine": () =>
    jsonResponse({
      review: null,
      can_review: false,
      reason: "Only buyers who have paid for this app can review it",
      can_reply: false,
    }),
};

/** The detail of a chat app that takes a query, with these inputs. */
function chatAppDetail(properties: IoSchema["properties"], required: string[]) {
  return jsonResponse(
    exploreAppDetailFixture({
      interaction_mode: "chat",
      takes_query: true,
      input_schema: { type: "object", properties, required, additionalProperties: false },
    }),
  );
}

const plan = {
  id: "plan-1",
  name: "Pro",
  price: 9,
  price_cents: 900,
  pending_price_cents: null,
  pending_price_at: null,
  currency: "usd",
  description: "For daily writers",
  features: {},
  included_calls: 1000,
  period_days: 30,
  terms_version: 1,
  terms_effective_from: "2024-05-01T10:00:00.000Z",
  pending_terms: null,
  is_active: true,
};

/** The gateway's 400 for one input that breaks its schema, with the problem by field. */
function invalidInput(name: string, problem: string) {
  return jsonResponse(
    {
      code: "bad_request",
      message: `Invalid request: inputs.${name} ${problem}`,
      status: 400,
      fields: { [`inputs.${name}`]: problem },
    },
    400,
  );
}

describe("explore app page", () => {
  it("says when an app accepts tools, and that each model call of a tool loop is paid", async () => {
    stubFetch({
      ...reviewStubs,
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture({ accepts_tools: true })),
    });
    renderRoute("/explore/haiku-writer");

    expect(await screen.findByText("Accepts tools")).toBeDefined();
    expect(screen.getByText(/This app accepts tools/).textContent).toMatch(
      /Each model call of the loop is one paid call/,
    );
  });

  it("shows the input tokens a call may carry where the price is, and nothing when there is no limit", async () => {
    stubFetch({
      ...reviewStubs,
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture({ max_input_tokens: 12_345 })),
    });
    const { unmount } = renderRoute("/explore/haiku-writer");
    expect(await screen.findByText("Up to 12,345 input tokens a call")).toBeDefined();
    unmount();

    stubFetch({
      ...reviewStubs,
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture({ max_input_tokens: null })),
    });
    renderRoute("/explore/haiku-writer");
    expect(await screen.findByRole("heading", { name: "About" })).toBeDefined();
    expect(screen.queryByText(/input tokens a call/)).toBeNull();
  });

  it("shows no tools badge for an app that does not accept them", async () => {
    stubFetch({ ...reviewStubs, [DETAIL]: () => jsonResponse(exploreAppDetailFixture()) });
    renderRoute("/explore/haiku-writer");

    expect(await screen.findByRole("heading", { name: "About" })).toBeDefined();
    expect(screen.queryByText("Accepts tools")).toBeNull();
  });

  it("describes the app and invites a signed-out visitor to sign in, coming back here", async () => {
    stubFetch({ ...reviewStubs, [DETAIL]: () => jsonResponse(exploreAppDetailFixture({ plans: [plan] })) });
    const { router, auth } = renderRoute("/explore/haiku-writer");

    expect(await screen.findByRole("heading", { level: 1, name: "Haiku Writer" })).toBeDefined();
    expect(screen.getAllByText("by Ada L.")).toHaveLength(1);
    expect(screen.getByText("A haiku about any topic.")).toBeDefined();
    expect(screen.getByText("$0.05")).toBeDefined();
    const plans = within(screen.getByRole("list", { name: "Plans" }));
    expect(plans.getByText("Pro")).toBeDefined();
    expect(plans.getByText("1,000 calls included")).toBeDefined();
    expect(screen.queryByRole("button", { name: /Run/ })).toBeNull();
    expect(screen.getByRole("link", { name: "Sign up" }).getAttribute("href")).toBe("/register");

    await userEvent.click(screen.getByRole("link", { name: "Sign in to try" }));
    await waitFor(() => expect(currentPath(router)).toBe("/login"));
    await userEvent.click(screen.getByRole("button", { name: "Sign In" }));
    expect(auth.signinRedirect).toHaveBeenCalled();
    expect(window.sessionStorage.getItem(INTENDED_PATH_STORAGE_KEY)).toBe("/explore/haiku-writer");
  });

  it("announces a raised price beside the price charged until then, for the app and its plans", async () => {
    const at = "2026-03-08T12:00:00.000Z";
    stubFetch({
      ...reviewStubs,
      [DETAIL]: () =>
        jsonResponse(
          exploreAppDetailFixture({
            price_cents: 5,
            pending_price_cents: 50,
            pending_price_at: at,
            plans: [{ ...plan, pending_price_cents: 1900, pending_price_at: at }],
          }),
        ),
    });
    renderRoute("/explore/haiku-writer");

    const when = new Date(at).toLocaleString();
    expect(await screen.findByText(`Rises to $0.50 per call on ${when}`)).toBeDefined();
    expect(screen.getByText("$0.05")).toBeDefined();
    expect(
      screen.getByText(`Rises to $19.00 / 30 days on ${when} (periods starting from then)`),
    ).toBeDefined();
  });

  it("runs the app with the typed inputs and shows the answer", async () => {
    const api = stubSignedInApi({
      ...reviewStubs,
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture()),
      [TRY]: () => jsonResponse(gatewayResponseFixture({ answer: "Rain on the roof" })),
    });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });

    await userEvent.type(await screen.findByLabelText("Topic *"), "rain");
    await userEvent.click(screen.getByRole("button", { name: "Run ($0.05)" }));

    const answer = await screen.findByRole("region", { name: "Answer" });
    expect(within(answer).getByText("Rain on the roof")).toBeDefined();
    expect(within(answer).getByText("42")).toBeDefined();
    // Never charged more than the price the page showed.
    expect(api.callsTo(TRY)[0]?.body).toEqual({ inputs: { topic: "rain" }, max_price_cents: 5 });
  });

  it("sends a chat app's message as the query and numbers as numbers", async () => {
    const api = stubSignedInApi({
      ...reviewStubs,
      [DETAIL]: () =>
        chatAppDetail({ tone: { type: "string", enum: ["calm", "bold"] }, lines: { type: "integer" } }, []),
      [TRY]: () => jsonResponse(gatewayResponseFixture({ mode: "chat" })),
    });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });

    await userEvent.selectOptions(await screen.findByLabelText("tone"), "bold");
    await userEvent.type(screen.getByLabelText("lines"), "3");
    await userEvent.type(screen.getByLabelText("Message"), "Hello");
    await userEvent.click(screen.getByRole("button", { name: "Run ($0.05)" }));

    await screen.findByRole("region", { name: "Answer" });
    expect(api.callsTo(TRY)[0]?.body).toEqual({
      inputs: { tone: "bold", lines: 3 },
      query: "Hello",
      max_price_cents: 5,
    });
  });

  it("shows one box for a chat app whose schema has a query input: the Message is that input", async () => {
    const api = stubSignedInApi({
      ...reviewStubs,
      [DETAIL]: () =>
        chatAppDetail(
          {
            query: { type: "string", description: "Your question" },
            tone: { type: "string" },
          },
          ["query"],
        ),
      [TRY]: () => invalidInput("query", "must be at most 10 characters"),
    });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });

    const message = await screen.findByLabelText("Message");
    expect(screen.queryByLabelText("Your question *")).toBeNull();
    expect(screen.getAllByRole("textbox").map((box) => box.getAttribute("name") ?? "message")).toEqual([
      "tone",
      "message",
    ]);
    expect(message.getAttribute("placeholder")).toBe("Your question");
    await userEvent.type(message, "What is tea?");
    await userEvent.click(screen.getByRole("button", { name: "Run ($0.05)" }));

    // Sent once, as the query (the gateway fills inputs.query from it); its problem shows at the box.
    await waitFor(() => expect(api.callsTo(TRY)).toHaveLength(1));
    expect(api.callsTo(TRY)[0]?.body).toEqual({ inputs: {}, query: "What is tea?", max_price_cents: 5 });
    expect(await screen.findByText("must be at most 10 characters")).toBeDefined();
    expect(message.getAttribute("aria-invalid")).toBe("true");
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("asks for a top-up when the wallet cannot pay, and shows input problems by field", async () => {
    let answer = 402;
    stubSignedInApi({
      ...reviewStubs,
      [DETAIL]: () => jsonResponse(exploreAppDetailFixture()),
      [TRY]: () =>
        answer === 402
          ? jsonResponse({ code: "payment_required", message: "Insufficient balance", status: 402 }, 402)
          : invalidInput("topic", "must be at most 40 characters"),
    });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });

    await userEvent.type(await screen.findByLabelText("Topic *"), "rain");
    await userEvent.click(screen.getByRole("button", { name: "Run ($0.05)" }));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Your wallet needs a top-up");
    expect(within(alert).getByRole("link", { name: "Top up wallet" }).getAttribute("href")).toBe("/wallet");

    answer = 400;
    await userEvent.click(screen.getByRole("button", { name: "Run ($0.05)" }));
    expect(await screen.findByText("must be at most 40 characters")).toBeDefined();
    expect(screen.getByLabelText("Topic *").getAttribute("aria-invalid")).toBe("true");
    // The field says it; no banner repeats it.
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("offers copy-ready samples for five clients with the app's real inputs", async () => {
    stubFetch({ ...reviewStubs, [DETAIL]: () => jsonResponse(exploreAppDetailFixture()) });
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    renderRoute("/explore/haiku-writer");

    const tabs = await screen.findByRole("tablist", { name: "Code samples" });
    expect(
      within(tabs)
        .getAllByRole("tab")
        .map((tab) => tab.textContent),
    ).toEqual(["curl", "JavaScript", "Python", "Dify SDK", "OpenAI SDK"]);
    const curl = screen.getByRole("tabpanel").textContent ?? "";
    expect(curl).toContain("curl -X POST http://localhost:3000/api/app/haiku-writer/completion-messages");
    // A call that passes the app's input checks as it stands: no <placeholders>.
    expect(curl).toContain('"topic": "example topic"');
    expect(curl).not.toMatch(/"<\w+>"/);

    await userEvent.click(within(tabs).getByRole("tab", { name: "OpenAI SDK" }));
    const openai = screen.getByRole("tabpanel");
    expect(openai.textContent).toContain('baseURL: "http://localhost:3000/api/v1"');
    expect(openai.textContent).toContain('model: "haiku-writer"');
    await userEvent.click(within(openai).getByRole("button", { name: "Copy OpenAI SDK" }));
    expect(writeText).toHaveBeenCalledWith(expect.stringContaining('import OpenAI from "openai";'));
    expect(await within(openai).findByText("Copied")).toBeDefined();
  });

  it("shows how to add the app to an MCP client, with a key or by signing in", async () => {
    stubFetch({ ...reviewStubs, [DETAIL]: () => jsonResponse(exploreAppDetailFixture()) });
    const writeText = vi.fn(async () => undefined);
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    renderRoute("/explore/haiku-writer");

    const withKey = await screen.findByRole("region", { name: "With an API key" });
    expect(screen.getByText("http://localhost:3000/api/app/haiku-writer/mcp")).toBeDefined();
    expect(screen.getByText("http://localhost:3000/api/mcp")).toBeDefined();
    expect(JSON.parse(within(withKey).getByText(/mcpServers/).textContent ?? "")).toEqual({
      mcpServers: {
        "haiku-writer": {
          url: "http://localhost:3000/api/app/haiku-writer/mcp",
          headers: { Authorization: "Bearer YOUR_API_KEY" },
        },
      },
    });
    const signIn = screen.getByRole("region", { name: "With sign-in (OAuth)" });
    await userEvent.click(within(signIn).getByRole("button", { name: "Copy config" }));
    expect(writeText).toHaveBeenCalledWith(
      JSON.stringify(
        { mcpServers: { "haiku-writer": { url: "http://localhost:3000/api/app/haiku-writer/mcp" } } },
        null,
        2,
      ),
    );
  });

  it("says the app was not found for a slug that is not listed", async () => {
    stubFetch({
      ...reviewStubs,
      "GET /api/explore/apps/gone": () =>
        jsonResponse({ code: "not_found", message: "Application not found", status: 404 }, 404),
    });
    renderRoute("/explore/gone");

    expect((await screen.findByRole("alert")).textContent).toContain("Application not found");
    expect(within(screen.getByRole("main")).getByRole("link", { name: "Explore" }).getAttribute("href")).toBe(
      "/explore",
    );
  });
});
