import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture } from "../../test/fixtures";
import { renderWorkflowEditor, stubWorkflowApi, workflowConfigFixture } from "../../test/workflow-fixtures";

const APP_PATH = "PATCH /api/app/support-flow/";
const WORKFLOW_PATH = "PATCH /api/app/support-flow/workflow/";

function input(label: string): HTMLInputElement {
  return screen.getByLabelText(label) as HTMLInputElement;
}

describe("workflow editor", () => {
  afterEach(() => vi.restoreAllMocks());

  it("shows a spinner, then the app under the shared header with its Basic Settings", async () => {
    stubWorkflowApi();
    renderWorkflowEditor();

    expect(screen.getByRole("status").textContent).toContain("Loading workflow...");
    const title = await screen.findByRole("heading", { name: "Support Flow", level: 1 });
    const header = within(title.closest("header") as HTMLElement);
    expect(header.getByText("/support-flow")).toBeDefined();
    expect(header.getByText("Writes blog posts about any topic.")).toBeDefined();
    expect(header.getByText("Dify")).toBeDefined();
    expect(header.getByText("private")).toBeDefined();
    expect(header.getByText("draft")).toBeDefined();
    expect(header.getByRole("link", { name: "Back to List" }).getAttribute("href")).toBe("/workflows");
    expect(header.getByRole("button", { name: "Download App" })).toBeDefined();
    expect(header.getByRole("button", { name: "Save Changes" })).toBeDefined();

    expect(screen.getByRole("tab", { name: "Basic Settings", selected: true })).toBeDefined();
    expect(screen.getByRole("tab", { name: "Provider Config" })).toBeDefined();
    expect(input("Application Name").value).toBe("Support Flow");
    expect((screen.getByLabelText("Status") as HTMLSelectElement).value).toBe("draft");
    expect((screen.getByLabelText("Description") as HTMLTextAreaElement).value).toBe(
      "Writes blog posts about any topic.",
    );
    expect((screen.getByLabelText("Visibility") as HTMLSelectElement).value).toBe("private");
    expect(input("Price per Call (cents)").value).toBe("150");
    expect(input("Price per Call (cents)").min).toBe("0");
    expect(screen.getByText("= $1.50 per call")).toBeDefined();
  });

  it("says under Visibility, once Embed is chosen, where embedding is set up and who pays", async () => {
    stubWorkflowApi();
    renderWorkflowEditor();
    const visibility = await screen.findByLabelText("Visibility");
    const hint = /widget calls are charged to your wallet/;
    expect(screen.queryByText(hint)).toBeNull();

    await userEvent.setup().selectOptions(visibility, "embed");
    expect(visibility.getAttribute("aria-describedby")).toContain(screen.getByText(hint).id);
  });

  it("saves the app, then the workflow with the masked secret sent back unchanged", async () => {
    const user = userEvent.setup();
    const saved = applicationFixture({ slug: "support-flow", name: "Support Desk", type: "workflow" });
    const api = stubWorkflowApi({
      [APP_PATH]: () => jsonResponse(saved),
      [WORKFLOW_PATH]: () =>
        jsonResponse(workflowConfigFixture({ timeout_seconds: 120, enable_logging: false })),
    });
    renderWorkflowEditor();

    await user.clear(await screen.findByLabelText("Application Name"));
    await user.type(input("Application Name"), "Support Desk");
    await user.selectOptions(screen.getByLabelText("Status"), "Live");
    await user.selectOptions(screen.getByLabelText("Visibility"), "public");
    await user.clear(input("Price per Call (cents)"));
    await user.type(input("Price per Call (cents)"), "275");
    await user.click(screen.getByRole("tab", { name: "Provider Config" }));
    expect(input("Timeout (seconds)").value).toBe("300");
    expect(input("Max Iterations").value).toBe("10");
    expect(input("Enable Logging").checked).toBe(true);
    await user.clear(input("Timeout (seconds)"));
    await user.type(input("Timeout (seconds)"), "120");
    await user.click(input("Enable Logging"));
    await user.click(screen.getByRole("button", { name: "Save Changes" }));
    // Save asks what changed: the note is the new version's changelog.
    const dialog = await screen.findByRole("dialog", { name: "Save a new version" });
    await user.type(within(dialog).getByLabelText("What changed? (optional)"), "Shorter timeout, no logs");
    await user.click(within(dialog).getByRole("button", { name: "Save version" }));

    expect(await screen.findByText("Changes saved")).toBeDefined();
    expect(api.requests.filter((request) => request.method === "PATCH").map((r) => r.path)).toEqual([
      "/api/app/support-flow/",
      "/api/app/support-flow/workflow/",
    ]);
    expect(api.callsTo(APP_PATH)[0]?.body).toEqual({
      name: "Support Desk",
      description: "Writes blog posts about any topic.",
      status: "live",
      visibility: "public",
      price_cents: 275,
    });
    expect(api.callsTo(WORKFLOW_PATH)[0]?.body).toEqual({
      provider: "dify",
      provider_config: {
        base_url: "https://dify.example.com/v1",
        api_key: "••••abcd",
        app_type: "completion",
      },
      timeout_seconds: 120,
      max_iterations: 10,
      enable_logging: false,
      changelog: "Shorter timeout, no logs",
      // Published by this save: what was saved is what its callers get.
      promote: true,
    });
    // Refreshed from the server afterwards.
    await waitFor(() => expect(api.callsTo("GET /api/app/support-flow/").length).toBeGreaterThan(1));
  });

  it("turns a non-numeric price into 0 and shows the server's refusal on the field", async () => {
    const user = userEvent.setup();
    const api = stubWorkflowApi({
      [APP_PATH]: () =>
        jsonResponse(
          {
            code: "validation",
            message: "Invalid application",
            status: 400,
            fields: { price_cents: "must be at least 1 cent" },
          },
          400,
        ),
    });
    renderWorkflowEditor();

    await user.clear(await screen.findByLabelText("Price per Call (cents)"));
    await user.type(input("Price per Call (cents)"), "abc");
    expect(input("Price per Call (cents)").value).toBe("0");
    await user.click(screen.getByRole("tab", { name: "Provider Config" }));
    await user.click(screen.getByRole("button", { name: "Save Changes" }));
    await user.click(await screen.findByRole("button", { name: "Save version" }));

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Changes not saved");
    expect(alert.textContent).toContain("Invalid application");
    // Back on the tab holding the field, which carries the message.
    expect(screen.getByRole("tab", { name: "Basic Settings", selected: true })).toBeDefined();
    expect(api.callsTo(APP_PATH)[0]?.body).toMatchObject({ price_cents: 0 });
    expect(input("Price per Call (cents)").getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByText("must be at least 1 cent")).toBeDefined();
    expect(api.callsTo(WORKFLOW_PATH)).toHaveLength(0);
  });

  it("refuses limits out of the API's range before calling it", async () => {
    const user = userEvent.setup();
    const api = stubWorkflowApi();
    renderWorkflowEditor();

    await user.click(await screen.findByRole("tab", { name: "Provider Config" }));
    await user.clear(input("Timeout (seconds)"));
    await user.type(input("Timeout (seconds)"), "901");
    await user.clear(input("Max Iterations"));
    await user.click(screen.getByRole("button", { name: "Save Changes" }));

    expect(screen.getByText("Some settings need attention; see the highlighted fields.")).toBeDefined();
    expect(screen.getByText("Must be a whole number between 1 and 900")).toBeDefined();
    expect(screen.getByText("Must be a whole number between 1 and 100")).toBeDefined();
    expect(api.callsTo(APP_PATH)).toHaveLength(0);
  });

  it.each([
    [
      "the app does not exist",
      { "GET /api/app/support-flow/": () => jsonResponse({ message: "Not found" }, 404) },
    ],
    [
      "it has no workflow",
      { "GET /api/app/support-flow/workflow/": () => jsonResponse({ message: "Workflow not found" }, 404) },
    ],
  ])("says 'Workflow not found' when %s", async (_case, handlers) => {
    stubWorkflowApi(handlers);
    renderWorkflowEditor();

    expect(await screen.findByRole("heading", { name: "Workflow not found" })).toBeDefined();
    expect(screen.getByRole("link", { name: "Back to List" }).getAttribute("href")).toBe("/workflows");
  });

  it("says 'Workflow not found' for a prompt app without asking for its workflow", async () => {
    const api = stubWorkflowApi({}, { application: applicationFixture({ slug: "support-flow" }) });
    renderWorkflowEditor();

    expect(await screen.findByRole("heading", { name: "Workflow not found" })).toBeDefined();
    expect(api.callsTo("GET /api/app/support-flow/workflow/")).toHaveLength(0);
  });

  it("shows the server's message when the app cannot be loaded", async () => {
    stubWorkflowApi({
      "GET /api/app/support-flow/": () => jsonResponse({ message: "Database unavailable" }, 503),
    });
    renderWorkflowEditor();

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Error");
    expect(alert.textContent).toContain("Database unavailable");
  });

  it("downloads the completion package under the file name the server gives", async () => {
    const user = userEvent.setup();
    let release: () => void = () => undefined;
    stubWorkflowApi({
      "GET /api/app/support-flow/download-frontend?type=completion": async () => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return new Response(new Blob(["zip"]), {
          headers: {
            "Content-Type": "application/zip",
            "Content-Disposition": 'attachment; filename="support-flow-completion-app.zip"',
          },
        });
      },
    });
    // jsdom has no object URLs; the setup file unstubs globals after each test.
    vi.stubGlobal(
      "URL",
      class extends URL {
        static override createObjectURL = () => "blob:zip";
        static override revokeObjectURL = () => undefined;
      },
    );
    const saved: string[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
      saved.push(this.download);
    });
    renderWorkflowEditor();

    await user.click(await screen.findByRole("button", { name: "Download App" }));
    expect(screen.getByRole("button", { name: "Downloading..." })).toBeDefined();
    release();
    await waitFor(() => expect(saved).toEqual(["support-flow-completion-app.zip"]));
    expect(await screen.findByRole("button", { name: "Download App" })).toBeDefined();
  });

  it("says so when the package cannot be downloaded", async () => {
    const user = userEvent.setup();
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    stubWorkflowApi({
      "GET /api/app/support-flow/download-frontend?type=completion": () =>
        jsonResponse({ message: "Not found" }, 404),
    });
    renderWorkflowEditor();

    await user.click(await screen.findByRole("button", { name: "Download App" }));

    expect(await screen.findByText("Failed to download app. Please try again.")).toBeDefined();
    expect(warn).toHaveBeenCalled();
  });
});
