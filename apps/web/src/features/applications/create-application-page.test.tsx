import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture } from "../../test/fixtures";
import { describedBy, field } from "../../test/form-queries";
import { currentPath, renderSignedIn } from "../../test/render-route";

function renderCreate(path = "/applications/create") {
  return renderSignedIn(path);
}

describe("create application", () => {
  it("starts from SPEC's defaults for a prompt application", async () => {
    stubSignedInApi();
    renderCreate();

    expect(await screen.findByRole("heading", { name: "Create Application" })).toBeDefined();
    expect(field("Application Name").value).toBe("");
    expect(describedBy(field("Application Name"))).toContain("API endpoint URL");
    expect(field("Application Type").value).toBe("prompt");
    expect(field("Interaction Mode").value).toBe("completion");
    expect(screen.getByRole("option", { name: "Text Completion" })).toBeDefined();
    expect(screen.getByRole("option", { name: "Chat Conversation" })).toBeDefined();
    expect(field("Visibility").value).toBe("private");
    expect(field("Price per API Call (cents)").value).toBe("100");
    expect(describedBy(field("Price per API Call (cents)"))).toBe("= $1.00 per call");
    expect(screen.queryByLabelText("App ID")).toBeNull();
    expect(screen.getByRole("link", { name: "Cancel" }).getAttribute("href")).toBe("/applications");
  });

  it("says what Private and Draft mean for callers, as the visibility changes", async () => {
    stubSignedInApi();
    renderCreate();

    expect(
      await screen.findByText(
        /A new application starts as a Draft\. Only you can call a private or draft app/,
      ),
    ).toBeDefined();
    expect(describedBy(field("Visibility"))).toContain("Only you can call a private or draft app.");
    await userEvent.selectOptions(field("Visibility"), "public");
    expect(describedBy(field("Visibility"))).toContain("anyone signed in can call it once it is Live");
  });

  it("names the chosen type in the page's badge as the type select changes", async () => {
    stubSignedInApi();
    renderCreate();

    expect(await screen.findByText("prompt application")).toBeDefined();
    await userEvent.selectOptions(field("Application Type"), "workflow");
    expect(await screen.findByText("workflow application")).toBeDefined();
    expect(screen.queryByText("prompt application")).toBeNull();
  });

  it("shows the dollar equivalent as the price changes", async () => {
    stubSignedInApi();
    renderCreate();

    const price = await screen.findByLabelText("Price per API Call (cents)");
    await userEvent.clear(price);
    await userEvent.type(price, "250");

    expect(describedBy(price)).toBe("= $2.50 per call");
  });

  it("posts a prompt app and opens its detail page", async () => {
    let answer: (response: Response) => void = () => undefined;
    const api = stubSignedInApi({
      "POST /api/app/": () =>
        new Promise<Response>((resolve) => {
          answer = resolve;
        }),
    });
    const { router } = renderCreate();

    await userEvent.type(await screen.findByLabelText("Application Name"), "Blog Writer");
    await userEvent.type(field("Description"), "Writes posts");
    await userEvent.selectOptions(field("Interaction Mode"), "chat");
    await userEvent.selectOptions(field("Visibility"), "public");
    await userEvent.clear(field("Price per API Call (cents)"));
    await userEvent.type(field("Price per API Call (cents)"), "25");
    await userEvent.click(screen.getByRole("button", { name: "Create Application" }));

    expect(await screen.findByRole("button", { name: "Creating..." })).toBeDefined();
    expect(api.callsTo("POST /api/app/")[0]?.body).toEqual({
      name: "Blog Writer",
      description: "Writes posts",
      type: "prompt",
      interaction_mode: "chat",
      visibility: "public",
      price_cents: 25,
    });
    answer(jsonResponse(applicationFixture({ slug: "blog-writer-2" }), 201));
    await waitFor(() => expect(currentPath(router)).toBe("/applications/blog-writer-2"));
  });

  it("asks a workflow for its provider's App ID and masked API Key", async () => {
    const api = stubSignedInApi({
      "POST /api/app/": () => jsonResponse(applicationFixture({ slug: "flow", type: "workflow" }), 201),
    });
    const { router } = renderCreate("/applications/new?type=workflow");

    await userEvent.type(await screen.findByLabelText("Application Name"), "Flow");
    expect(screen.queryByLabelText("Interaction Mode")).toBeNull();
    expect(field("API Key").type).toBe("password");
    await userEvent.click(screen.getByRole("button", { name: "Create Application" }));

    expect(await screen.findByText("App ID is required")).toBeDefined();
    expect(screen.getByText("API Key is required")).toBeDefined();
    expect(api.callsTo("POST /api/app/")).toHaveLength(0);

    await userEvent.type(field("App ID"), "dify-app-1");
    await userEvent.type(field("API Key"), "app-secret-key");
    await userEvent.click(screen.getByRole("button", { name: "Create Application" }));

    await waitFor(() => expect(currentPath(router)).toBe("/applications/flow"));
    expect(api.callsTo("POST /api/app/")[0]?.body).toEqual({
      name: "Flow",
      description: "",
      type: "workflow",
      visibility: "private",
      price_cents: 100,
      provider_config: { app_id: "dify-app-1", api_key: "app-secret-key" },
    });
  });

  it("requires a name and refuses a price below 1 cent, a non-number counting as 0", async () => {
    const api = stubSignedInApi();
    renderCreate();

    const price = await screen.findByLabelText("Price per API Call (cents)");
    await userEvent.clear(price);
    await userEvent.type(price, "abc");
    await userEvent.click(screen.getByRole("button", { name: "Create Application" }));

    expect(await screen.findByText("Application name is required")).toBeDefined();
    expect(screen.getByText("Price must be at least 1 cent")).toBeDefined();
    // The error replaces the conversion hint: one message under the field.
    expect(describedBy(price)).toBe("Price must be at least 1 cent");
    expect(api.callsTo("POST /api/app/")).toHaveLength(0);
  });

  it("shows the starter model's lowest price where the price is typed and refuses less before posting", async () => {
    const message =
      "At least 7 cents ($0.07) a call covers its worst case (gpt4 with 1000 max tokens, $0.0541) after the 10% fee.";
    const api = stubSignedInApi({
      "GET /api/prompt-apps/starter/": () =>
        jsonResponse({
          model: "gpt4",
          max_tokens: 1000,
          fee_percent: 10,
          worst_case_micros: 54_060,
          min_price_cents: 7,
          message,
        }),
    });
    renderCreate();

    const price = await screen.findByLabelText("Price per API Call (cents)");
    await waitFor(() =>
      expect(describedBy(price)).toBe(
        "= $1.00 per call. At least $0.07 per call for the starter model (gpt4)",
      ),
    );
    await userEvent.type(field("Application Name"), "Cheap Writer");
    await userEvent.clear(price);
    await userEvent.type(price, "5");
    await userEvent.click(screen.getByRole("button", { name: "Create Application" }));

    // One sentence, once, beside the field, with the figure that passes.
    expect(await screen.findByText(message)).toBeDefined();
    expect(screen.getAllByText(/At least 7 cents/)).toHaveLength(1);
    expect(describedBy(price)).toBe(message);
    expect(api.callsTo("POST /api/app/")).toHaveLength(0);

    // A workflow runs on its provider: the starter model's floor does not apply.
    await userEvent.selectOptions(field("Application Type"), "workflow");
    expect(describedBy(field("Price per API Call (cents)"))).not.toContain("starter model");
  });

  it("shows the server's field errors beside the fields", async () => {
    stubSignedInApi({
      "POST /api/app/": () =>
        jsonResponse(
          {
            code: "bad_request",
            message: "Invalid input",
            status: 400,
            fields: { name: "must be at most 100 characters" },
          },
          400,
        ),
    });
    renderCreate();

    await userEvent.type(await screen.findByLabelText("Application Name"), "Too long");
    await userEvent.click(screen.getByRole("button", { name: "Create Application" }));

    expect(await screen.findByText("must be at most 100 characters")).toBeDefined();
    expect(field("Application Name").getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByRole("alert").textContent).toContain("Invalid input");
  });
});
