import type { SavePromptApplication } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { SAVE_BLOG_WRITER, savedBody, stubSignedInApi } from "../../test/api-stubs";
import { setEditorText } from "../../test/code-editor";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import { applicationFixture, promptConfigFixture, testConfigResultFixture } from "../../test/fixtures";
import { describedBy, field } from "../../test/form-queries";
import { renderSignedIn } from "../../test/render-route";

function renderBuilder(path = "/prompt-builder") {
  return renderSignedIn(path);
}

const created = applicationFixture({ slug: "blog-writer" });

/** The server's answer to a save: the app as sent, with its prompt. */
function answerSave({ body }: RecordedRequest) {
  return jsonResponse({
    application: { ...created, ...(body as SavePromptApplication).application },
    prompt: promptConfigFixture(),
  });
}

describe("prompt builder (edit)", () => {
  function stubEditApi(extra = {}) {
    return stubSignedInApi({
      "GET /api/app/blog-writer/": () => jsonResponse(created),
      "GET /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
      ...extra,
    });
  }

  it("sends a workflow app's edit link to the workflow editor instead of failing to load a prompt", async () => {
    stubSignedInApi({
      "GET /api/app/research/": () =>
        jsonResponse(applicationFixture({ slug: "research", type: "workflow" })),
      "GET /api/app/research/prompt/": () => jsonResponse({ detail: "Not found" }, 404),
    });
    const { router } = renderBuilder("/applications/research/edit");

    await waitFor(() => expect(router.state.location.pathname).toBe("/workflows/research"));
    expect(screen.queryByText("Failed to load prompt data")).toBeNull();
  });

  it("loads the app and its active version, with the slug locked", async () => {
    stubEditApi();
    renderBuilder("/applications/blog-writer/edit");

    expect(await screen.findByDisplayValue("Blog Writer")).toBeDefined();
    const slug = field("URL Slug");
    expect(slug.disabled).toBe(true);
    expect(describedBy(slug)).toContain("Cannot be changed after creation");
    expect(field("Price per Call (USD)").value).toBe("1.50");
    expect(screen.getByRole("textbox", { name: "User Prompt Template" }).textContent).toBe(
      "Write about {{topic}}.",
    );
    expect(screen.getByRole("button", { name: "Update Prompt" })).toBeDefined();
    expect(screen.getAllByText("draft")[0]?.className).toContain("yellow");

    await userEvent.click(screen.getByRole("tab", { name: "Input/Output Schema" }));
    const inputSchema = within(screen.getByRole("region", { name: "Input Schema" }));
    expect((inputSchema.getByLabelText("Field Name") as HTMLInputElement).value).toBe("topic");
    expect((inputSchema.getByLabelText("Required") as HTMLInputElement).checked).toBe(true);
    expect(
      within(screen.getByRole("region", { name: "Output Schema" })).getByText(/No fields defined yet/),
    ).toBeDefined();
  });

  it("saves the app and the prompt, with no changelog of its own (the versions list says No note)", async () => {
    const api = stubEditApi({ [SAVE_BLOG_WRITER]: answerSave });
    renderBuilder("/applications/blog-writer/edit");

    await screen.findByDisplayValue("Blog Writer");
    setEditorText("User Prompt Template", "Write a haiku about {{topic}}.");
    await userEvent.click(screen.getByRole("button", { name: "Update Prompt" }));

    await waitFor(() => expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(1));
    expect(savedBody(api).application).toEqual({
      name: "Blog Writer",
      description: "Writes blog posts about any topic.",
      status: "draft",
      visibility: "private",
      price_cents: 150,
    });
    expect(savedBody(api).prompt).toMatchObject({
      model: "gpt-4-turbo",
      system_prompt: "You are a helpful writer.",
      prompt_template: "Write a haiku about {{topic}}.",
      input_schema: promptConfigFixture().active_version.input_schema,
      output_schema: null,
    });
    expect(savedBody(api).prompt.changelog).toBeUndefined();
  });

  it("publishes a draft with Save & Publish; while the server still says draft, the button goes", async () => {
    const api = stubEditApi({ [SAVE_BLOG_WRITER]: answerSave });
    renderBuilder("/applications/blog-writer/edit");

    await userEvent.click(await screen.findByRole("button", { name: "Save & Publish" }));

    await waitFor(() => expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(1));
    expect(savedBody(api).application).toMatchObject({ status: "live" });
    expect(field("Status").value).toBe("live");
    expect(screen.queryByRole("button", { name: "Save & Publish" })).toBeNull();
  });

  it("on a live app, Update Prompt saves a version callers do not get and Save & Publish releases it", async () => {
    const live = applicationFixture({ slug: "blog-writer", status: "live" });
    const api = stubSignedInApi({
      "GET /api/app/blog-writer/": () => jsonResponse(live),
      "GET /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
      [SAVE_BLOG_WRITER]: ({ body }: RecordedRequest) =>
        jsonResponse({
          application: { ...live, ...(body as SavePromptApplication).application },
          prompt: promptConfigFixture(),
        }),
    });
    renderBuilder("/applications/blog-writer/edit");

    expect((await screen.findByText(/This app is live/)).textContent).toContain(
      "Save & Publish saves it and publishes it to every caller",
    );
    expect(screen.getByRole("link", { name: "Versions page" }).getAttribute("href")).toBe(
      "/prompts/blog-writer/versions",
    );
    await userEvent.click(screen.getByRole("button", { name: "Update Prompt" }));
    await waitFor(() => expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(1));
    expect(savedBody(api).prompt.promote).toBeUndefined();

    const publish = screen.getByRole("button", { name: "Save & Publish" });
    expect(publish.getAttribute("title")).toBe(
      "Save a new version and publish it: callers get it on their next call",
    );
    await userEvent.click(publish);
    await waitFor(() => expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(2));
    const second = api.callsTo(SAVE_BLOG_WRITER)[1]?.body as SavePromptApplication;
    expect(second.prompt.promote).toBe(true);
    expect(second.application.status).toBe("live");
  });

  it("loads the latest version, not only what callers get, with its own model settings", async () => {
    const production = promptConfigFixture().active_version;
    stubSignedInApi({
      "GET /api/app/blog-writer/": () =>
        jsonResponse(applicationFixture({ slug: "blog-writer", status: "live" })),
      "GET /api/app/blog-writer/prompt/": () =>
        jsonResponse(
          promptConfigFixture({
            production_version: 2,
            latest_version: {
              ...production,
              id: "version-3",
              version: 3,
              system_prompt: "Be brief.",
              prompt_template: "Briefly: {{topic}}",
              model: "claude-3-haiku",
              temperature: 0.2,
              labels: ["latest"],
            },
          }),
        ),
    });
    renderBuilder("/applications/blog-writer/edit");

    expect((await screen.findByRole("textbox", { name: "System Prompt" })).textContent).toBe("Be brief.");
    expect(screen.getByRole("textbox", { name: "User Prompt Template" }).textContent).toBe(
      "Briefly: {{topic}}",
    );
    await userEvent.click(screen.getByRole("tab", { name: "Model Settings" }));
    expect(field("Model").value).toBe("claude-3-haiku");
    expect(field("Temperature").value).toBe("0.2");
  });

  it("shows the editor's cost panel and model keys on the Model Settings tab, priced in dollars", async () => {
    const api = stubEditApi({
      "POST /api/model-prices/estimate": () =>
        jsonResponse({
          model: "gpt-4-turbo",
          model_keys: "platform",
          input_tokens: 12,
          output_tokens: 2048,
          gross_micros: 15_000,
          fee_micros: 1_500,
          model_cost_micros: 61_560,
          net_micros: -48_060,
          covered: false,
          minimum_price_cents: 7,
        }),
    });
    renderBuilder("/applications/blog-writer/edit");

    await userEvent.click(await screen.findByRole("tab", { name: "Model Settings" }));
    expect(screen.getByLabelText("Model Keys")).toBeDefined();
    const panel = screen.getByRole("region", { name: "Cost per call" });
    await waitFor(() => expect(within(panel).getByTestId("cost-model").textContent).toBe("−$0.06156"));
    expect(within(panel).getByRole("alert").textContent).toContain("at least $0.07 per call");
    const estimate = api.callsTo("POST /api/model-prices/estimate")[0]?.body as Record<string, unknown>;
    expect(estimate).toMatchObject({
      model: "gpt-4-turbo",
      price_cents: 150,
      max_tokens: 2048,
      system_prompt: "You are a helpful writer.",
    });
  });

  it("keeps a draft a draft when Save & Publish is refused for its template", async () => {
    const api = stubEditApi({
      [SAVE_BLOG_WRITER]: () =>
        jsonResponse(
          {
            message: "Invalid input",
            fields: { prompt_template: "Unclosed or unopened placeholder in 'About {{topic'" },
          },
          400,
        ),
    });
    renderBuilder("/applications/blog-writer/edit");

    await userEvent.click(await screen.findByRole("button", { name: "Save & Publish" }));

    await waitFor(() => expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(1));
    expect(savedBody(api).application).toMatchObject({ status: "live" });
    expect(await screen.findByText(/Unclosed or unopened placeholder/)).toBeDefined();
    expect(field("Status").value).toBe("draft");
    expect(screen.getByRole("button", { name: "Save & Publish" })).toBeDefined();
    expect(api.callsTo("PATCH /api/app/blog-writer/")).toHaveLength(0);
  });

  it("tests a saved prompt through its own test-config endpoint and shows a template error", async () => {
    const api = stubEditApi({
      "POST /api/app/blog-writer/prompt/test-config/": () =>
        jsonResponse(
          testConfigResultFixture({
            success: false,
            message: "Template test failed",
            error: "Missing value for variable: tone",
            rendered_template: null,
            detected_variables: ["topic", "tone"],
          }),
        ),
    });
    renderBuilder("/applications/blog-writer/edit");

    await screen.findByDisplayValue("Blog Writer");
    await userEvent.click(screen.getByRole("tab", { name: "Preview & Test" }));
    await userEvent.click(screen.getByRole("button", { name: "Test Prompt" }));

    expect(await screen.findByText("Template Error")).toBeDefined();
    expect(screen.getByText("Missing value for variable: tone")).toBeDefined();
    expect(api.callsTo("POST /api/app/blog-writer/prompt/test-config/")[0]?.body).toMatchObject({
      test_inputs: { topic: "Sample topic" },
    });
  });

  it("says 'Failed to load prompt data' when loading fails", async () => {
    stubSignedInApi({
      "GET /api/app/blog-writer/": () => jsonResponse(created),
      "GET /api/app/blog-writer/prompt/": () =>
        jsonResponse({ code: "not_found", message: "Prompt not found", status: 404 }, 404),
    });
    renderBuilder("/applications/blog-writer/edit");

    expect((await screen.findByRole("alert")).textContent).toContain("Failed to load prompt data");
  });

  it("says 'An error occurred while saving the prompt' when saving fails", async () => {
    stubEditApi({
      [SAVE_BLOG_WRITER]: () => jsonResponse({ message: "Database unavailable" }, 503),
    });
    renderBuilder("/applications/blog-writer/edit");

    await userEvent.click(await screen.findByRole("button", { name: "Update Prompt" }));

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("An error occurred while saving the prompt");
    expect(alert.textContent).toContain("Database unavailable");
  });
});
