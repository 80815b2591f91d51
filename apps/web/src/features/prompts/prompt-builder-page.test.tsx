import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { setEditorText } from "../../test/code-editor";
import { jsonResponse } from "../../test/fetch-stub";
import {
  applicationFixture,
  DEFAULT_MODEL_SETTINGS,
  promptConfigFixture,
  testConfigResultFixture,
} from "../../test/fixtures";
import { describedBy, field } from "../../test/form-queries";
import { currentPath, renderSignedIn } from "../../test/render-route";

function renderBuilder(path = "/prompt-builder") {
  return renderSignedIn(path);
}

const created = applicationFixture({ slug: "blog-writer" });

/** On the schema tab, adds an input field with this name; answers the Input Schema region. */
async function addInputField(name: string) {
  await userEvent.click(screen.getByRole("tab", { name: "Input/Output Schema" }));
  const inputSchema = within(screen.getByRole("region", { name: "Input Schema" }));
  await userEvent.click(inputSchema.getByRole("button", { name: "+ Add Field" }));
  await userEvent.type(inputSchema.getByLabelText("Field Name"), name);
  return inputSchema;
}

describe("prompt builder (create)", () => {
  it("shows the four tabs, SPEC's defaults and the sandbox notice", async () => {
    stubSignedInApi();
    renderBuilder();

    expect(await screen.findByRole("heading", { name: "Prompt Builder", level: 1 })).toBeDefined();
    expect(screen.getAllByRole("tab").map((tab) => tab.textContent)).toEqual([
      "Basic Info",
      "Input/Output Schema",
      "Model Settings",
      "Preview & Test",
    ]);
    expect(
      screen.getByText(
        "Sandbox model: no LLM provider key is configured, so calls are answered by the built-in sandbox model (it echoes the rendered prompt).",
      ),
    ).toBeDefined();
    expect(field("Status").value).toBe("draft");
    expect(field("Visibility").value).toBe("private");
    expect(screen.getByRole("option", { name: "Embeddable" })).toBeDefined();
    const price = field("Price per Call (USD)");
    expect([price.value, price.min, price.step]).toEqual(["1.00", "0.01", "0.01"]);
    expect(screen.getByRole("textbox", { name: "System Prompt" })).toBeDefined();
    expect(screen.getByRole("textbox", { name: "User Prompt Template" })).toBeDefined();
    expect(screen.getByRole("button", { name: "Save Draft" })).toBeDefined();
    expect(screen.getByRole("button", { name: "Save & Publish" })).toBeDefined();
    expect(screen.getByRole("link", { name: "Cancel" }).getAttribute("href")).toBe("/applications");

    await userEvent.click(screen.getByRole("tab", { name: "Model Settings" }));
    expect(field("Model").value).toBe("gpt-4-turbo");
    expect(
      Array.from(field("Model").options)
        .map((option) => option.value)
        .slice(0, 6),
    ).toEqual(["gpt-4-turbo", "gpt-4", "claude-3-opus", "claude-3-sonnet", "claude-3-haiku", "gemini-pro"]);
    expect(field("Temperature").value).toBe("0.7");
    expect([field("Temperature").min, field("Temperature").max, field("Temperature").step]).toEqual([
      "0",
      "2",
      "0.1",
    ]);
    expect(field("Max Tokens").value).toBe("2048");
    expect(field("Top P").value).toBe("1");
    const penalty = field("Frequency Penalty");
    expect([penalty.value, penalty.min, penalty.max, penalty.step]).toEqual(["0", "-2", "2", "0.1"]);
    expect(screen.getByText("-2 to 2: positive values discourage repetition.")).toBeDefined();
  });

  it("generates the slug from the name until the slug is edited by hand", async () => {
    stubSignedInApi();
    renderBuilder();

    await userEvent.type(await screen.findByLabelText("Prompt Name"), "  My Blog -- Writer! ");
    expect(field("URL Slug").value).toBe("my-blog-writer");

    await userEvent.clear(field("URL Slug"));
    await userEvent.type(field("URL Slug"), "custom");
    await userEvent.type(field("Prompt Name"), "2");
    expect(field("URL Slug").value).toBe("custom");
  });

  it("refuses to save empty (or whitespace-only) name and prompts", async () => {
    const api = stubSignedInApi();
    renderBuilder();

    await userEvent.type(await screen.findByLabelText("Prompt Name"), "   ");
    setEditorText("System Prompt", "  \n ");
    await userEvent.click(screen.getByRole("button", { name: "Save Draft" }));

    const alert = await screen.findByRole("alert");
    expect(within(alert).getByText("Prompt name is required")).toBeDefined();
    expect(within(alert).getByText("System prompt is required")).toBeDefined();
    expect(within(alert).getByText("User prompt template is required")).toBeDefined();
    expect(api.callsTo("POST /api/app/")).toHaveLength(0);

    // Fixing a field takes its error away at once; the others stay until they are fixed too.
    await userEvent.type(screen.getByLabelText("Prompt Name"), "Blog Writer");
    expect(within(alert).queryByText("Prompt name is required")).toBeNull();
    expect(screen.getByLabelText("Prompt Name").getAttribute("aria-invalid")).not.toBe("true");
    expect(within(alert).getByText("System prompt is required")).toBeDefined();
  });

  it("creates the app with its slug, saves the prompt, then opens the edit screen", async () => {
    const api = stubSignedInApi({
      "POST /api/app/": () => jsonResponse(created, 201),
      "PATCH /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
      "GET /api/app/blog-writer/": () => jsonResponse(created),
      "GET /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
    });
    const { router } = renderBuilder();

    await userEvent.type(await screen.findByLabelText("Prompt Name"), "Blog Writer");
    await userEvent.type(field("Description"), "Writes posts");
    await userEvent.selectOptions(field("Visibility"), "public");
    await userEvent.clear(field("Price per Call (USD)"));
    await userEvent.type(field("Price per Call (USD)"), "0.255");
    // Dollars here, cents elsewhere: the field says what it is charged as.
    expect(screen.getByText("= 26¢ per call")).toBeDefined();
    setEditorText("System Prompt", "You are a writer.");
    setEditorText("User Prompt Template", "Write about {{topic}}.");

    const inputSchema = await addInputField("topic");
    await userEvent.click(inputSchema.getByLabelText("Required"));

    await userEvent.click(screen.getByRole("tab", { name: "Model Settings" }));
    await userEvent.selectOptions(field("Model"), "claude-3-haiku");
    await userEvent.clear(field("Temperature"));
    await userEvent.type(field("Temperature"), "1.2");

    await userEvent.click(screen.getByRole("button", { name: "Save Draft" }));

    await waitFor(() => expect(currentPath(router)).toBe("/applications/blog-writer/edit"));
    expect(api.callsTo("POST /api/app/")[0]?.body).toEqual({
      name: "Blog Writer",
      slug: "blog-writer",
      description: "Writes posts",
      type: "prompt",
      interaction_mode: "completion",
      visibility: "public",
      price_cents: 26,
    });
    expect(api.callsTo("PATCH /api/app/blog-writer/update_status/")).toHaveLength(0);
    expect(api.callsTo("PATCH /api/app/blog-writer/prompt/")[0]?.body).toEqual({
      model: "claude-3-haiku",
      model_keys: "platform",
      temperature: 1.2,
      max_tokens: 2048,
      top_p: 1,
      frequency_penalty: 0,
      presence_penalty: 0,
      system_prompt: "You are a writer.",
      prompt_template: "Write about {{topic}}.",
      input_schema: {
        type: "object",
        properties: { topic: { type: "string" } },
        required: ["topic"],
        additionalProperties: false,
      },
      output_schema: null,
    });
    expect(await screen.findByRole("button", { name: "Update Prompt" })).toBeDefined();
  });

  it("publishes on creation with Save & Publish", async () => {
    const api = stubSignedInApi({
      "POST /api/app/": () => jsonResponse(created, 201),
      "PATCH /api/app/blog-writer/update_status/": () => jsonResponse({ ...created, status: "live" }),
      "PATCH /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
    });
    const { router } = renderBuilder();

    await userEvent.type(await screen.findByLabelText("Prompt Name"), "Blog Writer");
    setEditorText("System Prompt", "You are a writer.");
    setEditorText("User Prompt Template", "Write.");
    await userEvent.click(screen.getByRole("button", { name: "Save & Publish" }));

    await waitFor(() => expect(currentPath(router)).toBe("/applications/blog-writer/edit"));
    expect(api.callsTo("PATCH /api/app/blog-writer/update_status/")[0]?.body).toEqual({ status: "live" });
  });

  it("shows a taken slug beside the slug field", async () => {
    stubSignedInApi({
      "POST /api/app/": () =>
        jsonResponse(
          {
            code: "conflict",
            message: "The slug 'blog-writer' is already taken",
            status: 409,
            fields: { slug: "is already taken" },
          },
          409,
        ),
    });
    renderBuilder();

    await userEvent.type(await screen.findByLabelText("Prompt Name"), "Blog Writer");
    setEditorText("System Prompt", "You are a writer.");
    setEditorText("User Prompt Template", "Write.");
    await userEvent.click(screen.getByRole("button", { name: "Save Draft" }));

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("An error occurred while saving the prompt");
    expect(alert.textContent).toContain("The slug 'blog-writer' is already taken");
    expect(describedBy(field("URL Slug"))).toContain("is already taken");
  });

  it("tests the unsaved prompt with sample inputs from the schema", async () => {
    const api = stubSignedInApi({
      "POST /api/prompts/test-config/": () =>
        jsonResponse(testConfigResultFixture({ rendered_template: "Write about tea." })),
    });
    renderBuilder();

    setEditorText("System Prompt", "You are a writer.");
    setEditorText("User Prompt Template", "Write about {{topic}}.");
    await addInputField("topic");

    await userEvent.click(screen.getByRole("tab", { name: "Preview & Test" }));
    expect(screen.getByText("Write about {{topic}}.")).toBeDefined();
    expect(field("topic").value).toBe("Sample topic");
    await userEvent.clear(field("topic"));
    await userEvent.type(field("topic"), "tea");
    await userEvent.click(screen.getByRole("button", { name: "Test Prompt" }));

    expect(await screen.findByText("Template Valid")).toBeDefined();
    expect(screen.getByText("Write about tea.")).toBeDefined();
    expect(api.callsTo("POST /api/prompts/test-config/")[0]?.body).toEqual({
      prompt_template: "Write about {{topic}}.",
      system_prompt: "You are a writer.",
      ...DEFAULT_MODEL_SETTINGS,
      input_schema: {
        type: "object",
        properties: { topic: { type: "string" } },
        required: [],
        additionalProperties: false,
      },
      test_inputs: { topic: "tea" },
    });
  });

  it("shows an API usage example with the input fields as placeholders", async () => {
    stubSignedInApi();
    renderBuilder();

    await userEvent.type(await screen.findByLabelText("Prompt Name"), "Blog Writer");
    await userEvent.click(screen.getByRole("tab", { name: "Preview & Test" }));

    const example = screen.getByText(/curl -X POST/);
    expect(example.textContent).toContain("http://localhost:3000/api/app/blog-writer/completion-messages");
    expect(example.textContent).toContain('-H "Authorization: Bearer YOUR_API_KEY"');
    expect(example.textContent).toContain('"response_mode": "blocking"');
  });
});
