import type { SavePromptApplication, TestRun } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { SAVE_BLOG_WRITER, savedBody, stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { codeEditor, setEditorText } from "../../test/code-editor";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import {
  applicationFixture,
  DEFAULT_MODEL_SETTINGS,
  promptConfigFixture,
  testConfigResultFixture,
} from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const app = applicationFixture({ status: "live", visibility: "public", interaction_mode: "chat" });

function stubEditorApi(extra = {}) {
  return stubSignedInApi({
    "GET /api/app/blog-writer/": () => jsonResponse(app),
    "GET /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
    "GET /api/prompts/prompt-1/versions/": () =>
      jsonResponse([
        promptConfigFixture().active_version,
        {
          ...promptConfigFixture().active_version,
          id: "version-1",
          version: 1,
          is_active: false,
          changelog: "First",
        },
      ]),
    ...extra,
  });
}

function input(label: string) {
  return screen.getByLabelText(label) as HTMLInputElement & HTMLSelectElement;
}

function renderEditor() {
  return renderRoute("/prompts/blog-writer", { auth: createTestAuth("signed-in") });
}

describe("prompt editor", () => {
  it("shows the header and the Basic Settings of the app", async () => {
    stubEditorApi();
    renderEditor();

    expect(await screen.findByRole("heading", { name: "Blog Writer", level: 1 })).toBeDefined();
    expect(screen.getByText("/blog-writer")).toBeDefined();
    expect(screen.getByText("Chat")).toBeDefined();
    expect(screen.getByRole("link", { name: "Back to List" }).getAttribute("href")).toBe("/prompts");
    expect(screen.getByRole("link", { name: "Evals" }).getAttribute("href")).toBe(
      "/prompts/blog-writer/evals",
    );
    expect(screen.getByRole("button", { name: "Download App" })).toBeDefined();
    expect(screen.getByRole("button", { name: "Save Changes" })).toBeDefined();
    expect(screen.getAllByRole("tab").map((tab) => tab.textContent)).toEqual([
      "Basic Settings",
      "Prompt Config",
    ]);

    expect(input("Application Name").value).toBe("Blog Writer");
    expect(input("Status").value).toBe("live");
    expect(input("Interaction Mode").value).toBe("chat");
    expect(screen.getByRole("option", { name: "Text Completion - Single input/output" })).toBeDefined();
    expect(screen.getByRole("option", { name: "Chat Conversation - Multi-turn dialogue" })).toBeDefined();
    expect(
      screen.getByText("This setting affects the frontend app template and API interface."),
    ).toBeDefined();
    // Dollars, as in the Prompt Builder of the same app (issue 32): one unit on both screens.
    const price = input("Price per Call (USD)");
    expect([price.value, price.min, price.step]).toEqual(["1.50", "0", "0.01"]);
    expect(screen.getByText("= 150¢ per call")).toBeDefined();
    await userEvent.clear(price);
    await userEvent.type(price, "2.75");
    expect(screen.getByText("= 275¢ per call")).toBeDefined();
  });

  it("saves the price typed in dollars as cents, and refuses an empty one", async () => {
    const api = stubEditorApi({
      [SAVE_BLOG_WRITER]: ({ body }: RecordedRequest) =>
        jsonResponse({
          application: { ...app, ...(body as SavePromptApplication).application },
          prompt: promptConfigFixture(),
        }),
    });
    renderEditor();

    const price = await screen.findByLabelText("Price per Call (USD)");
    await userEvent.clear(price);
    await userEvent.click(screen.getByRole("button", { name: "Save Changes" }));
    expect(await screen.findByText("Enter the price in dollars, e.g. 1.50")).toBeDefined();
    expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(0);

    await userEvent.type(price, "0.255");
    await userEvent.click(screen.getByRole("button", { name: "Save Changes" }));
    await userEvent.click(await screen.findByRole("button", { name: "Save version" }));
    await waitFor(() => expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(1));
    expect(savedBody(api).application.price_cents).toBe(26);
  });

  it("shows the prompt config with SPEC's limits and models", async () => {
    stubEditorApi();
    renderEditor();

    await userEvent.click(await screen.findByRole("tab", { name: "Prompt Config" }));
    expect(
      Array.from(input("Model").options)
        .map((option) => option.value)
        .slice(0, 4),
    ).toEqual(["gpt4", "claude3", "gemini", "mixtral"]);
    expect(input("Model").value).toBe("gpt-4-turbo");
    const limits = (label: string) => [input(label).min, input(label).max, input(label).step];
    expect(limits("Max Tokens")).toEqual(["1", "8192", "1"]);
    expect(limits("Temperature")).toEqual(["0", "2", "0.1"]);
    expect(limits("Top P")).toEqual(["0", "1", "0.05"]);
    expect(limits("Frequency Penalty")).toEqual(["0", "1", "0.05"]);
    expect(limits("Presence Penalty")).toEqual(["0", "1", "0.05"]);
    // The limits are said under each field too (the builder's section, with the editor's limits).
    expect(screen.getByText("0 to 1: positive values discourage repetition.")).toBeDefined();
    expect(screen.getByText("1 to 8192: the longest answer.")).toBeDefined();
    expect(codeEditor("Prompt Template").state.doc.toString()).toBe("Write about {{topic}}.");
    expect(JSON.parse(codeEditor("Input Schema").state.doc.toString())).toEqual(
      promptConfigFixture().active_version.input_schema,
    );
    expect(codeEditor("Output Schema").state.doc.toString()).toBe("");
  });

  it("saves the app and the prompt, ignoring invalid JSON edits", async () => {
    const api = stubEditorApi({
      [SAVE_BLOG_WRITER]: ({ body }: RecordedRequest) =>
        jsonResponse({
          application: { ...app, ...(body as SavePromptApplication).application },
          prompt: promptConfigFixture(),
        }),
    });
    renderEditor();

    await userEvent.selectOptions(await screen.findByLabelText("Status"), "archived");
    await userEvent.click(screen.getByRole("tab", { name: "Prompt Config" }));
    await userEvent.selectOptions(input("Model"), "mixtral");
    await userEvent.clear(input("Max Tokens"));
    await userEvent.type(input("Max Tokens"), "1000");
    setEditorText("Prompt Template", "Summarise {{topic}} in {{words}} words.");
    setEditorText("System Prompt", "You are terse.");
    const words = {
      type: "object",
      properties: { topic: { type: "string" }, words: { type: "integer" } },
      required: ["topic"],
      additionalProperties: false,
    };
    setEditorText("Input Schema", JSON.stringify(words));
    setEditorText("Input Schema", '{"type": "object", "properties": {'); // invalid: ignored
    setEditorText("Output Schema", "not json"); // invalid: ignored
    await userEvent.click(screen.getByRole("button", { name: "Save Changes" }));
    // Save asks what changed: the note is the new version's changelog.
    const dialog = await screen.findByRole("dialog", { name: "Save a new version" });
    await userEvent.type(within(dialog).getByLabelText("What changed? (optional)"), "  Terser summaries  ");
    await userEvent.click(within(dialog).getByRole("button", { name: "Save version" }));

    await waitFor(() => expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(1));
    expect(savedBody(api).application).toEqual({
      name: "Blog Writer",
      description: "Writes blog posts about any topic.",
      status: "archived",
      visibility: "public",
      price_cents: 150,
      interaction_mode: "chat",
      allow_tools: false,
    });
    expect(savedBody(api).prompt).toEqual({
      model: "mixtral",
      model_keys: "platform",
      temperature: 0.7,
      max_tokens: 1000,
      top_p: 1,
      frequency_penalty: 0,
      presence_penalty: 0,
      system_prompt: "You are terse.",
      prompt_template: "Summarise {{topic}} in {{words}} words.",
      input_schema: words,
      output_schema: null,
      changelog: "Terser summaries",
    });
    // Toasts outlive a test: an earlier test's save may still show its own.
    expect((await screen.findAllByText("Changes saved")).length).toBeGreaterThan(0);
  });

  it("turns tools on with a labelled switch, by keyboard, and saves allow_tools", async () => {
    const api = stubEditorApi({
      [SAVE_BLOG_WRITER]: ({ body }: RecordedRequest) =>
        jsonResponse({
          application: { ...app, ...(body as SavePromptApplication).application },
          prompt: promptConfigFixture(),
        }),
    });
    renderEditor();

    const toggle = await screen.findByRole("switch", { name: "Allow tools" });
    expect(toggle.getAttribute("aria-checked")).toBe("false");
    expect(toggle.getAttribute("aria-describedby")).toBeTruthy();
    const description = document.getElementById(toggle.getAttribute("aria-describedby") ?? "");
    expect(description?.textContent).toMatch(/each model call of a loop is one paid call/);
    toggle.focus();
    await userEvent.keyboard(" ");
    expect(toggle.getAttribute("aria-checked")).toBe("true");
    await userEvent.click(screen.getByRole("button", { name: "Save Changes" }));
    await userEvent.click(await screen.findByRole("button", { name: "Save version" }));

    await waitFor(() => expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(1));
    expect(savedBody(api).application.allow_tools).toBe(true);
  });

  it("refuses settings outside SPEC's limits", async () => {
    const api = stubEditorApi();
    renderEditor();

    await userEvent.click(await screen.findByRole("tab", { name: "Prompt Config" }));
    await userEvent.clear(input("Top P"));
    await userEvent.type(input("Top P"), "1.5");
    await userEvent.click(screen.getByRole("button", { name: "Save Changes" }));

    expect(await screen.findByText("Must be between 0 and 1")).toBeDefined();
    expect(input("Top P").getAttribute("aria-invalid")).toBe("true");
    expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(0);

    await userEvent.clear(input("Top P"));
    await userEvent.type(input("Top P"), "0.9");
    expect(screen.queryByText("Must be between 0 and 1")).toBeNull();
    expect(input("Top P").getAttribute("aria-invalid")).not.toBe("true");
  });

  it("tests the template and shows 'Template Valid' with the rendered text and variables", async () => {
    const api = stubEditorApi({
      "POST /api/app/blog-writer/prompt/test-config/": () => jsonResponse(testConfigResultFixture()),
    });
    renderEditor();

    await userEvent.click(await screen.findByRole("tab", { name: "Prompt Config" }));
    await userEvent.click(screen.getByRole("button", { name: "Test Prompt" }));

    const result = await screen.findByRole("status", { name: "Test result" });
    expect(within(result).getByText("Template Valid")).toBeDefined();
    expect(within(result).getByText("Template rendered successfully")).toBeDefined();
    expect(within(result).getByText("Write about Sample topic.")).toBeDefined();
    expect(within(result).getByText("topic")).toBeDefined();
    expect(api.callsTo("POST /api/app/blog-writer/prompt/test-config/")[0]?.body).toEqual({
      prompt_template: "Write about {{topic}}.",
      system_prompt: "You are a helpful writer.",
      ...DEFAULT_MODEL_SETTINGS,
      input_schema: promptConfigFixture().active_version.input_schema,
      test_inputs: { topic: "Sample topic" },
    });
  });

  it("reads 'Test failed: ...' when the test request fails", async () => {
    stubEditorApi({
      "POST /api/app/blog-writer/prompt/test-config/": () => jsonResponse({ message: "Bad model" }, 400),
    });
    renderEditor();

    await userEvent.click(await screen.findByRole("tab", { name: "Prompt Config" }));
    await userEvent.click(screen.getByRole("button", { name: "Test Prompt" }));

    expect((await screen.findByRole("alert")).textContent).toBe("Test failed: Bad model");
  });

  it("links to the wallet when the test's model cost cannot be paid from it (402)", async () => {
    stubEditorApi({
      "POST /api/app/blog-writer/prompt/test-config/": () =>
        jsonResponse(
          {
            code: "payment_required",
            message:
              "Insufficient balance: this call may cost up to $0.06 at the model vendor, paid from the app creator's wallet, which has $0.00 available. Top up at http://localhost:3000/wallet",
            top_up_url: "http://localhost:3000/wallet",
          },
          402,
        ),
    });
    renderEditor();

    await userEvent.click(await screen.findByRole("tab", { name: "Prompt Config" }));
    await userEvent.click(screen.getByRole("button", { name: "Test Prompt" }));

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toBe(
      "Test failed: Insufficient balance: this call may cost up to $0.06 at the model vendor, paid from the app creator's wallet, which has $0.00 available. Top up your wallet",
    );
    expect(within(alert).getByRole("link", { name: "Top up your wallet" }).getAttribute("href")).toBe(
      "/wallet",
    );
  });

  /** Tests the prompt with the server's model run answering `run`; the answer's region. */
  async function testPromptAnswering(run: Partial<TestRun>) {
    const answered: TestRun = {
      invocation_id: "inv-1",
      model: "gpt-4-turbo",
      answered_by: "gpt-4-turbo",
      sandbox: false,
      answer: null,
      error: null,
      input_tokens: 0,
      output_tokens: 0,
      latency_ms: 0,
      model_cost_micros: 0,
      ...run,
    };
    stubEditorApi({
      "POST /api/app/blog-writer/prompt/test-config/": () =>
        jsonResponse(testConfigResultFixture({ run: answered })),
    });
    renderEditor();
    await userEvent.click(await screen.findByRole("tab", { name: "Prompt Config" }));
    await userEvent.click(screen.getByRole("button", { name: "Test Prompt" }));
    return within(await screen.findByRole("region", { name: "Model answer" }));
  }

  it("shows the model's answer with its tokens, latency and cost, and the rendered template", async () => {
    const answer = await testPromptAnswering({
      answered_by: "sandbox",
      sandbox: true,
      answer: "Bees make honey.",
      input_tokens: 1234,
      output_tokens: 56,
      latency_ms: 85,
    });
    expect(answer.getByText("Bees make honey.")).toBeDefined();
    expect(answer.getByText("sandbox")).toBeDefined();
    expect(answer.getByText("1,234")).toBeDefined();
    expect(answer.getByText("56")).toBeDefined();
    expect(answer.getByText("85 ms")).toBeDefined();
    expect(answer.getByText("$0.00")).toBeDefined();
    expect(screen.getByText("Write about Sample topic.")).toBeDefined();
  });

  it("says why the model did not answer", async () => {
    const answer = await testPromptAnswering({
      invocation_id: null,
      error: "The upstream failed to answer",
      latency_ms: 1500,
    });
    expect(answer.getByText("The model did not answer: The upstream failed to answer")).toBeDefined();
    expect(answer.getByText("1.5 s")).toBeDefined();
  });

  it("links the versions page where the version history was", async () => {
    stubEditorApi();
    renderEditor();

    await userEvent.click(await screen.findByRole("tab", { name: "Prompt Config" }));
    expect(screen.getByRole("link", { name: "Open Versions" }).getAttribute("href")).toBe(
      "/prompts/blog-writer/versions",
    );
    expect(screen.queryByRole("button", { name: /Restore version/ })).toBeNull();
  });

  it("says 'Prompt not found' for a missing app or a workflow", async () => {
    stubSignedInApi({
      "GET /api/app/blog-writer/": () =>
        jsonResponse({ code: "not_found", message: "Application not found", status: 404 }, 404),
    });
    renderEditor();

    expect(await screen.findByRole("heading", { name: "Prompt not found" })).toBeDefined();
  });
});
