import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { applicationFixture, gatewayResponseFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const apps = [applicationFixture(), applicationFixture({ slug: "support-bot", name: "Support Bot" })];

function parameters(form: unknown[]) {
  return () =>
    jsonResponse({
      opening_statement: "",
      suggested_questions: [],
      suggested_questions_after_answer: { enabled: false },
      speech_to_text: { enabled: false },
      text_to_speech: { enabled: false },
      retriever_resource: { enabled: false },
      annotation_reply: { enabled: false },
      more_like_this: { enabled: false },
      user_input_form: form,
      sensitive_word_avoidance: { enabled: false },
      file_upload: {},
      system_parameters: {},
    });
}

const topicForm = [
  { select: { label: "Tone", variable: "tone", required: false, options: ["calm"] } },
  { "text-input": { label: "Topic", variable: "topic", required: true } },
];

function panel(title: string) {
  const heading = screen.getByRole("heading", { name: title });
  return within(heading.closest("div.rounded-xl") as HTMLElement);
}

describe("API test console", () => {
  it("lets a signed-out visitor type a slug only, after a warning", () => {
    stubFetch({});
    renderRoute("/api-test?app=blog-writer");

    expect(
      screen.getByText("Authentication Required: Please log in to access your applications and test APIs."),
    ).toBeDefined();
    expect(screen.queryByLabelText("Application")).toBeNull();
    expect((screen.getByLabelText("App Slug") as HTMLInputElement).value).toBe("blog-writer");
    expect((screen.getByLabelText("Input") as HTMLTextAreaElement).rows).toBe(3);
    expect((screen.getByLabelText("Query") as HTMLTextAreaElement).rows).toBe(3);
  });

  it("offers the signed-in user's applications, preselecting ?app", async () => {
    stubSignedInApi({ "GET /api/app/": () => jsonResponse(apps) });
    renderRoute("/api-test?app=support-bot", { auth: createTestAuth("signed-in") });

    const chooser = (await screen.findByLabelText("Application")) as HTMLSelectElement;
    await waitFor(() => expect(chooser.value).toBe("support-bot"));
    await userEvent.selectOptions(chooser, "blog-writer");
    expect((screen.getByLabelText("App Slug") as HTMLInputElement).value).toBe("blog-writer");
  });

  it("only logs a failed application list", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    stubSignedInApi({ "GET /api/app/": () => jsonResponse({ message: "down" }, 500) });
    renderRoute("/api-test", { auth: createTestAuth("signed-in") });

    await waitFor(() => expect(warn).toHaveBeenCalled());
    expect(screen.queryByRole("alert")).toBeNull();
    warn.mockRestore();
  });

  it("sends the input as the app's first text variable and shows the answer and token usage", async () => {
    const api = stubSignedInApi({
      "GET /api/app/": () => jsonResponse(apps),
      "GET /api/app/blog-writer/parameters": parameters(topicForm),
      "POST /api/app/blog-writer/completion-messages": () => jsonResponse(gatewayResponseFixture()),
    });
    renderRoute("/api-test?app=blog-writer", { auth: createTestAuth("signed-in") });

    const completion = panel("Test Completion");
    const button = completion.getByRole("button", { name: "Test Completion" }) as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    await userEvent.type(completion.getByLabelText("Input"), "tea");
    await userEvent.click(button);

    expect(await completion.findByText("Here is a post about tea.")).toBeDefined();
    const usage = within(completion.getByLabelText("Token usage"));
    expect(usage.getByText("Input Tokens").nextSibling?.textContent).toBe("12");
    expect(usage.getByText("Output Tokens").nextSibling?.textContent).toBe("30");
    expect(usage.getByText("Total Tokens").nextSibling?.textContent).toBe("42");
    expect(usage.getByText("Latency").nextSibling?.textContent).toBe("500 ms");
    // What the answer says the call cost (decision 029).
    expect(usage.getByText("Charged").nextSibling?.textContent).toBe("$0.05");
    const [request] = api.callsTo("POST /api/app/blog-writer/completion-messages");
    expect(request?.body).toEqual({ inputs: { topic: "tea" }, response_mode: "blocking" });
    expect(request?.headers.get("Authorization")).toBeNull(); // the session token, none in tests
  });

  it("sends the text as the query when the app has no text variable, with the given API key", async () => {
    const api = stubSignedInApi({
      "GET /api/app/": () => jsonResponse(apps),
      "GET /api/app/blog-writer/parameters": parameters([]),
      "POST /api/app/blog-writer/completion-messages": () => jsonResponse(gatewayResponseFixture()),
    });
    renderRoute("/api-test?app=blog-writer", { auth: createTestAuth("signed-in") });

    await userEvent.type(screen.getByLabelText("API Key"), "pm_consumer_key");
    await userEvent.type(panel("Test Completion").getByLabelText("Input"), "hello");
    await userEvent.click(screen.getByRole("button", { name: "Test Completion" }));

    await screen.findByText("Here is a post about tea.");
    const [request] = api.callsTo("POST /api/app/blog-writer/completion-messages");
    expect(request?.body).toEqual({ inputs: {}, query: "hello", response_mode: "blocking" });
    expect(request?.headers.get("Authorization")).toBe("Bearer pm_consumer_key");
    expect(api.callsTo("GET /api/app/blog-writer/parameters")[0]?.headers.get("Authorization")).toBe(
      "Bearer pm_consumer_key",
    );
  });

  it("asks for a slug, and prefixes failures with 'Completion test failed: '", async () => {
    stubSignedInApi({
      "GET /api/app/": () => jsonResponse(apps),
      "GET /api/app/blog-writer/parameters": parameters(topicForm),
      "POST /api/app/blog-writer/completion-messages": () =>
        jsonResponse({ code: "payment_required", message: "Insufficient balance", status: 402 }, 402),
    });
    renderRoute("/api-test", { auth: createTestAuth("signed-in") });

    const completion = panel("Test Completion");
    await userEvent.type(completion.getByLabelText("Input"), "tea");
    await userEvent.click(completion.getByRole("button", { name: "Test Completion" }));
    expect(completion.getByRole("alert").textContent).toBe("Please provide app slug and input");

    await userEvent.type(screen.getByLabelText("App Slug"), "blog-writer");
    await userEvent.click(completion.getByRole("button", { name: "Test Completion" }));
    await waitFor(() =>
      expect(completion.getByRole("alert").textContent).toBe("Completion test failed: Insufficient balance"),
    );
  });

  it("offers only what the app answers: no Test Chat for a completion app, both for a chat app", async () => {
    const info = (mode: string) => () =>
      jsonResponse({
        name: "App",
        description: "",
        tags: [],
        mode,
        price_cents: 1,
        pending_price_cents: null,
        pending_price_at: null,
      });
    stubSignedInApi({
      "GET /api/app/": () => jsonResponse(apps),
      "GET /api/app/blog-writer/info": info("completion"),
      "GET /api/app/support-bot/info": info("chat"),
    });
    renderRoute("/api-test?app=blog-writer", { auth: createTestAuth("signed-in") });

    await waitFor(() => expect(screen.queryByRole("heading", { name: "Test Chat" })).toBeNull());
    expect(screen.getByRole("heading", { name: "Test Completion" })).toBeDefined();

    const slug = screen.getByLabelText("App Slug");
    await userEvent.clear(slug);
    await userEvent.type(slug, "support-bot");
    expect(await screen.findByRole("heading", { name: "Test Chat" })).toBeDefined();
    expect(screen.getByRole("heading", { name: "Test Completion" })).toBeDefined();
  });

  it("continues a chat conversation until 'New conversation'", async () => {
    let turn = 0;
    const api = stubSignedInApi({
      "GET /api/app/": () => jsonResponse(apps),
      "POST /api/app/blog-writer/chat-messages": () => {
        turn += 1;
        return jsonResponse(
          gatewayResponseFixture({
            id: `m${turn}`,
            mode: "chat",
            answer: `Answer ${turn}`,
            conversation_id: "conv-1",
          }),
        );
      },
    });
    renderRoute("/api-test?app=blog-writer", { auth: createTestAuth("signed-in") });

    const chat = panel("Test Chat");
    await userEvent.type(chat.getByLabelText("Query"), "Hi");
    await userEvent.click(chat.getByRole("button", { name: "Test Chat" }));
    expect(await chat.findByText("Answer 1")).toBeDefined();
    expect((chat.getByLabelText("Query") as HTMLTextAreaElement).value).toBe("");

    await userEvent.type(chat.getByLabelText("Query"), "And then?");
    await userEvent.click(chat.getByRole("button", { name: "Test Chat" }));
    expect(await chat.findByText("Answer 2")).toBeDefined();
    expect(chat.getByText("Answer 1")).toBeDefined();
    expect(chat.getByText("conv-1")).toBeDefined();

    const bodies = api.callsTo("POST /api/app/blog-writer/chat-messages").map((request) => request.body);
    expect(bodies).toEqual([
      { query: "Hi", inputs: {}, response_mode: "blocking" },
      { query: "And then?", inputs: {}, response_mode: "blocking", conversation_id: "conv-1" },
    ]);

    await userEvent.click(chat.getByRole("button", { name: "New conversation" }));
    expect(chat.queryByText("Answer 1")).toBeNull();
    await userEvent.type(chat.getByLabelText("Query"), "Fresh");
    await userEvent.click(chat.getByRole("button", { name: "Test Chat" }));
    await chat.findByText("Answer 3");
    expect(api.callsTo("POST /api/app/blog-writer/chat-messages")[2]?.body).toEqual({
      query: "Fresh",
      inputs: {},
      response_mode: "blocking",
    });
  });

  it("asks for a slug and prefixes chat failures with 'Chat test failed: '", async () => {
    stubFetch({
      "POST /api/app/blog-writer/chat-messages": () =>
        jsonResponse({ code: "unauthorized", message: "Missing credentials", status: 401 }, 401),
    });
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    renderRoute("/api-test");

    let chat = panel("Test Chat");
    await userEvent.type(chat.getByLabelText("Query"), "Hi");
    await userEvent.click(chat.getByRole("button", { name: "Test Chat" }));
    expect(chat.getByRole("alert").textContent).toBe("Please provide app slug and chat query");

    // Another app starts another conversation: the panel starts afresh.
    await userEvent.type(screen.getByLabelText("App Slug"), "blog-writer");
    chat = panel("Test Chat");
    await userEvent.type(chat.getByLabelText("Query"), "Hi");
    await userEvent.click(chat.getByRole("button", { name: "Test Chat" }));
    await waitFor(() =>
      expect(chat.getByRole("alert").textContent).toBe("Chat test failed: Missing credentials"),
    );
    warn.mockRestore();
  });
});
