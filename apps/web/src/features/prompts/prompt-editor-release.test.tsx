import type { PromptConfig, PromptLabels, PromptVersion } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { SAVE_BLOG_WRITER, savedBody, stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { codeEditor } from "../../test/code-editor";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import { applicationFixture, promptConfigFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const production = promptConfigFixture().active_version;
const latest: PromptVersion = {
  ...production,
  id: "version-3",
  version: 3,
  system_prompt: "You are a terse writer.",
  prompt_template: "Write briefly about {{topic}}.",
  model: "claude-3-haiku",
  is_active: false,
  labels: ["latest"],
  changelog: "Shorter answers",
};

/** A live app whose latest save (v3) is not yet what callers get (v2). */
function aheadConfig(): PromptConfig {
  return promptConfigFixture({
    current_version: 3,
    latest_version: latest,
    production_version: 2,
    active_version: { ...production, labels: ["production"] },
    model: latest.model,
  });
}

const labels: PromptLabels = { labels: [], moves: [] };

function stubEditor(config: PromptConfig, status: "live" | "draft" = "live", extra = {}) {
  return stubSignedInApi({
    "GET /api/app/blog-writer/": () => jsonResponse(applicationFixture({ status })),
    "GET /api/app/blog-writer/prompt/": () => jsonResponse(config),
    ...extra,
  });
}

function renderEditor() {
  return renderRoute("/prompts/blog-writer", { auth: createTestAuth("signed-in") });
}

describe("prompt editor: the release flow", () => {
  it("shows the prompt app's pages as tabs, the editor current", async () => {
    stubEditor(promptConfigFixture());
    renderEditor();

    const nav = await screen.findByRole("navigation", { name: "Prompt app pages" });
    const links = within(nav).getAllByRole("link");
    expect(links.map((link) => [link.textContent, link.getAttribute("href")])).toEqual([
      ["Editor", "/prompts/blog-writer"],
      ["Versions", "/prompts/blog-writer/versions"],
      ["Experiments", "/prompts/blog-writer/experiments"],
      ["Evals", "/prompts/blog-writer/evals"],
      ["Analytics", "/applications/blog-writer/analytics"],
    ]);
    expect(within(nav).getByRole("link", { name: "Editor" }).getAttribute("aria-current")).toBe("page");
    expect(within(nav).getByRole("link", { name: "Versions" }).getAttribute("aria-current")).toBeNull();
  });

  it("edits the latest version, system prompt included, not the one callers get", async () => {
    stubEditor(aheadConfig());
    renderEditor();

    await userEvent.click(await screen.findByRole("tab", { name: "Prompt Config" }));
    expect(codeEditor("System Prompt").state.doc.toString()).toBe("You are a terse writer.");
    expect(codeEditor("Prompt Template").state.doc.toString()).toBe("Write briefly about {{topic}}.");
  });

  it("says which version callers get and promotes the edited one after a confirmation", async () => {
    const api = stubEditor(aheadConfig(), "live", {
      "PUT /api/prompts/prompt-1/labels/production": () => jsonResponse(labels),
      "GET /api/prompts/prompt-1/labels/": () => jsonResponse(labels),
    });
    renderEditor();

    const banner = await screen.findByRole("region", { name: "Release" });
    expect(within(banner).getByText("Callers get v2 (production). You are editing v3.")).toBeDefined();
    expect(within(banner).getByRole("link", { name: "Compare" }).getAttribute("href")).toBe(
      "/prompts/blog-writer/versions",
    );
    await userEvent.click(within(banner).getByRole("button", { name: "Promote v3" }));

    const dialog = await screen.findByRole("dialog", { name: "Promote v3 to production?" });
    expect(dialog.textContent).toContain("get v3 on their next call instead of v2");
    expect(dialog.textContent).toContain("Model gpt-4-turbo → claude-3-haiku");
    expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")).toHaveLength(0);
    await userEvent.type(within(dialog).getByLabelText("Reason (optional)"), "Shorter answers");
    await userEvent.click(within(dialog).getByRole("button", { name: "Promote v3" }));

    await waitFor(() => expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")).toHaveLength(1));
    expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")[0]?.body).toEqual({
      version: 3,
      reason: "Shorter answers",
    });
    expect(await screen.findByText("v3 is in production")).toBeDefined();
  });

  it("shows the price guard's refusal in the dialog and moves nothing", async () => {
    stubEditor(aheadConfig(), "live", {
      "PUT /api/prompts/prompt-1/labels/production": () =>
        jsonResponse({ message: "At least $0.07 per call covers claude-3-haiku", status: 422 }, 422),
    });
    renderEditor();

    await userEvent.click(await screen.findByRole("button", { name: "Promote v3" }));
    const dialog = await screen.findByRole("dialog");
    await userEvent.click(within(dialog).getByRole("button", { name: "Promote v3" }));
    expect((await within(dialog).findByRole("alert")).textContent).toContain("At least $0.07 per call");
  });

  it("has no banner when callers get the latest version, or on a draft", async () => {
    stubEditor(promptConfigFixture(), "live");
    const { unmount } = renderEditor();
    await screen.findByRole("heading", { name: "Blog Writer", level: 1 });
    expect(screen.queryByRole("region", { name: "Release" })).toBeNull();
    unmount();

    stubEditor(aheadConfig(), "draft");
    renderEditor();
    await screen.findByRole("heading", { name: "Blog Writer", level: 1 });
    expect(screen.queryByRole("region", { name: "Release" })).toBeNull();
  });

  it("saves a live app as a new version and says callers keep production", async () => {
    let config = promptConfigFixture();
    const api = stubSignedInApi({
      "GET /api/app/blog-writer/": () => jsonResponse(applicationFixture({ status: "live" })),
      "GET /api/app/blog-writer/prompt/": () => jsonResponse(config),
      [SAVE_BLOG_WRITER]: (_request: RecordedRequest) => {
        config = aheadConfig();
        return jsonResponse({ application: applicationFixture({ status: "live" }), prompt: config });
      },
    });
    renderEditor();

    await userEvent.click(await screen.findByRole("button", { name: "Save Changes" }));
    await waitFor(() => expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(1));
    // The editor's save never releases: production moves only by a promotion.
    expect(savedBody(api).prompt.promote).toBeUndefined();
    expect(await screen.findByText("Saved as v3. Callers still get v2 until you promote it.")).toBeDefined();
    expect(await screen.findByText("Callers get v2 (production). You are editing v3.")).toBeDefined();
  });
});
