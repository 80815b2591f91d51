import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture } from "../../test/fixtures";
import {
  renderWorkflowEditor,
  stubWorkflowApi,
  workflowConfigFixture,
  workflowTestResultFixture,
} from "../../test/workflow-fixtures";

const TEST_PATH = "POST /api/app/support-flow/workflow/test-config/";

/** A provider field by its title; required fields carry a decorative asterisk after it. */
function field(title: string): HTMLInputElement {
  return screen.getByLabelText((content) => content.replace(/\*$/, "") === title) as HTMLInputElement;
}

function labelOf(control: HTMLElement): string {
  return document.querySelector(`label[for="${control.id}"]`)?.textContent ?? "";
}

async function openProviderConfig() {
  const user = userEvent.setup();
  await user.click(await screen.findByRole("tab", { name: "Provider Config" }));
  return user;
}

describe("workflow editor, Provider Config", () => {
  it("shows the saved provider's card and settings, required ones starred and secrets masked", async () => {
    stubWorkflowApi();
    renderWorkflowEditor();
    await openProviderConfig();

    const provider = screen.getByLabelText("Provider") as HTMLSelectElement;
    expect(await within(provider).findByRole("option", { name: "Dify" })).toBeDefined();
    expect(provider.value).toBe("dify");
    expect(within(provider).getByRole("option", { name: "Select a provider..." })).toBeDefined();
    expect(screen.getByText("Dify chat, completion and workflow apps.")).toBeDefined();
    expect(screen.getByText("dify").className).toContain("font-mono");

    const baseUrl = field("Base URL");
    expect(baseUrl.value).toBe("https://dify.example.com/v1");
    expect(baseUrl.required).toBe(true);
    expect(labelOf(baseUrl)).toBe("Base URL*");
    const apiKey = field("App API Key");
    expect(apiKey.type).toBe("password");
    expect(apiKey.value).toBe("••••abcd");
    const appType = field("App Type") as unknown as HTMLSelectElement;
    expect(appType.value).toBe("completion");
    expect(labelOf(appType)).toBe("App Type");
    expect(
      within(appType)
        .getAllByRole("option")
        .map((option) => option.textContent),
    ).toEqual(["Select...", "chat", "completion", "workflow"]);
  });

  it("fills a newly chosen provider's defaults, and masks fields titled password or key", async () => {
    stubWorkflowApi();
    renderWorkflowEditor();
    const user = await openProviderConfig();
    const provider = screen.getByLabelText("Provider");
    await within(provider).findByRole("option", { name: "n8n" });

    await user.selectOptions(provider, "n8n");
    expect(screen.getByText("An n8n workflow behind a webhook trigger.")).toBeDefined();
    expect(field("Webhook URL").value).toBe("");
    expect(labelOf(field("Webhook URL"))).toBe("Webhook URL*");
    expect(field("Header Password").type).toBe("password");
    expect(labelOf(field("Header Password"))).toBe("Header Password");
    expect(field("Retries").type).toBe("number");
    expect(field("Retries").value).toBe("2");
    expect(field("Wait for Result").checked).toBe(true);

    await user.selectOptions(provider, "Flowise");
    expect(screen.getByText("No configuration schema available")).toBeDefined();

    // Back to the saved provider: its saved settings, not its defaults.
    await user.selectOptions(provider, "Dify");
    expect(field("Base URL").value).toBe("https://dify.example.com/v1");
    expect(field("App API Key").value).toBe("••••abcd");
  });

  it("requires a new provider's required settings, then saves them", async () => {
    const api = stubWorkflowApi({
      "PATCH /api/app/support-flow/": () =>
        jsonResponse(applicationFixture({ slug: "support-flow", name: "Support Flow", type: "workflow" })),
      "PATCH /api/app/support-flow/workflow/": () => jsonResponse(workflowConfigFixture()),
    });
    renderWorkflowEditor();
    const user = await openProviderConfig();
    await user.selectOptions(
      screen.getByLabelText("Provider"),
      await screen.findByRole("option", { name: "n8n" }),
    );

    await user.click(screen.getByRole("button", { name: "Save Changes" }));
    expect(screen.getByText("Webhook URL is required")).toBeDefined();
    expect(api.callsTo("PATCH /api/app/support-flow/")).toHaveLength(0);

    await user.type(field("Webhook URL"), "https://n8n.example.com/webhook/abc");
    await user.clear(field("Retries"));
    await user.type(field("Retries"), "3");
    await user.click(screen.getByRole("button", { name: "Save Changes" }));
    await user.click(await screen.findByRole("button", { name: "Save version" }));

    expect(await screen.findByText("Changes saved")).toBeDefined();
    expect(api.callsTo("PATCH /api/app/support-flow/workflow/")[0]?.body).toMatchObject({
      provider: "n8n",
      provider_config: {
        webhook_url: "https://n8n.example.com/webhook/abc",
        retries: 3,
        wait_for_result: true,
      },
    });
  });

  it("offers 'Select a provider...' before one is chosen, and cannot test yet", async () => {
    stubWorkflowApi({}, { config: workflowConfigFixture({ provider: null, provider_config: {} }) });
    renderWorkflowEditor();
    await openProviderConfig();

    const provider = screen.getByLabelText("Provider") as HTMLSelectElement;
    await within(provider).findByRole("option", { name: "Dify" });
    expect(provider.value).toBe("");
    expect(provider.selectedOptions[0]?.textContent).toBe("Select a provider...");
    expect((screen.getByRole("button", { name: "Test Config" }) as HTMLButtonElement).disabled).toBe(true);
  });

  it("says 'No providers available' when the list is empty", async () => {
    stubWorkflowApi(
      {},
      { config: workflowConfigFixture({ provider: null, provider_config: {} }), providers: [] },
    );
    renderWorkflowEditor();
    await openProviderConfig();

    const provider = screen.getByLabelText("Provider") as HTMLSelectElement;
    expect(await within(provider).findByRole("option", { name: "No providers available" })).toBeDefined();
    expect(provider.disabled).toBe(true);
  });

  it("tests the settings as typed and shows 'Configuration Valid' with the app's info", async () => {
    const api = stubWorkflowApi({ [TEST_PATH]: () => jsonResponse(workflowTestResultFixture()) });
    renderWorkflowEditor();
    const user = await openProviderConfig();
    await user.selectOptions(field("App Type"), "chat");

    await user.click(screen.getByRole("button", { name: "Test Config" }));

    const result = await screen.findByRole("status", { name: "Test result" });
    expect(within(result).getByRole("heading", { name: "Configuration Valid" })).toBeDefined();
    expect(within(result).getByText("Connected to Dify")).toBeDefined();
    expect(within(result).getByText("name").nextSibling?.textContent).toBe("Support Bot");
    expect(within(result).getByText("mode").nextSibling?.textContent).toBe("chat");
    expect(api.callsTo(TEST_PATH)[0]?.body).toEqual({
      provider: "dify",
      provider_config: { base_url: "https://dify.example.com/v1", api_key: "••••abcd", app_type: "chat" },
    });
  });

  it("shows 'Configuration Error' with the provider's message", async () => {
    stubWorkflowApi({
      [TEST_PATH]: () =>
        jsonResponse(
          workflowTestResultFixture({
            success: false,
            message: "The provider refused the call",
            error: "401 Unauthorized: invalid API key",
            app_info: null,
          }),
        ),
    });
    renderWorkflowEditor();
    const user = await openProviderConfig();

    await user.click(screen.getByRole("button", { name: "Test Config" }));

    const result = await screen.findByRole("status", { name: "Test result" });
    expect(within(result).getByRole("heading", { name: "Configuration Error" })).toBeDefined();
    expect(within(result).getByText("The provider refused the call")).toBeDefined();
    expect(within(result).getByText("401 Unauthorized: invalid API key")).toBeDefined();
    expect(within(result).queryByText("App Info")).toBeNull();
  });

  it("says 'Test failed: ...' when the test request itself fails", async () => {
    stubWorkflowApi({ [TEST_PATH]: () => jsonResponse({ message: "Upstream unreachable" }, 502) });
    renderWorkflowEditor();
    const user = await openProviderConfig();

    await user.click(screen.getByRole("button", { name: "Test Config" }));

    expect((await screen.findByRole("alert")).textContent).toBe("Test failed: Upstream unreachable");
  });
});
