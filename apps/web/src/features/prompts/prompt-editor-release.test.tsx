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

const NO_EXPERIMENT = { production_version: 2, experiment: null };

/** A running 50/50 experiment between v2 and v3, as `GET {base}/serving` answers it. */
function servingWithExperiment(rollout: unknown = null) {
  return {
    production_version: 2,
    experiment: {
      id: "exp-1",
      app_kind: "prompt",
      prompt_id: "prompt-1",
      workflow_id: null,
      status: "running",
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
      sticky_by: null,
      rules: { min_calls: 100 },
      control_version: 2,
      started_by_name: "ada",
      started_at: "2024-05-03T10:00:00.000Z",
      ended_at: null,
      outcome: null,
      winner_version: null,
      end_reason: "",
      rollout,
    },
  };
}

function stubEditor(
  config: PromptConfig,
  status: "live" | "draft" = "live",
  extra = {},
  serving: unknown = NO_EXPERIMENT,
) {
  return stubSignedInApi({
    "GET /api/app/blog-writer/": () => jsonResponse(applicationFixture({ status })),
    "GET /api/app/blog-writer/prompt/": () => jsonResponse(config),
    "GET /api/prompts/prompt-1/versions/": () =>
      jsonResponse([latest, { ...production, labels: ["production"] }]),
    "GET /api/prompts/prompt-1/serving": () => jsonResponse(serving),
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
    expect(within(banner).getByText("Callers get v2. You are editing v3.")).toBeDefined();
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
      "GET /api/prompts/prompt-1/versions/": () =>
        jsonResponse([latest, { ...production, labels: ["production"] }]),
      "GET /api/prompts/prompt-1/serving": () => jsonResponse(NO_EXPERIMENT),
      [SAVE_BLOG_WRITER]: (_request: RecordedRequest) => {
        config = aheadConfig();
        return jsonResponse({ application: applicationFixture({ status: "live" }), prompt: config });
      },
    });
    renderEditor();

    await userEvent.click(await screen.findByRole("button", { name: "Save Changes" }));
    // An empty note sends no changelog: the version reads "No note".
    await userEvent.click(await screen.findByRole("button", { name: "Save version" }));
    await waitFor(() => expect(api.callsTo(SAVE_BLOG_WRITER)).toHaveLength(1));
    expect(savedBody(api).prompt.changelog).toBeUndefined();
    // The editor's save never releases: production moves only by a promotion.
    expect(savedBody(api).prompt.promote).toBeUndefined();
    expect(await screen.findByText("Saved as v3. Callers still get v2 until you promote it.")).toBeDefined();
    expect(await screen.findByText("Callers get v2. You are editing v3.")).toBeDefined();
  });

  it("names a running experiment and its split, and promoting asks whether to end it", async () => {
    const api = stubEditor(
      aheadConfig(),
      "live",
      { "PUT /api/prompts/prompt-1/labels/production": () => jsonResponse(labels) },
      servingWithExperiment(),
    );
    renderEditor();

    const banner = await screen.findByRole("region", { name: "Release" });
    expect(
      await within(banner).findByText("Experiment running: v2 50% · v3 50% — callers are split"),
    ).toBeDefined();
    expect(within(banner).getByText("Production is v2. You are editing v3.")).toBeDefined();
    await userEvent.click(within(banner).getByRole("button", { name: "Promote v3" }));

    const dialog = await screen.findByRole("dialog", { name: "Promote v3 to production?" });
    expect(within(dialog).getByText("End the running experiment?")).toBeDefined();
    expect(within(dialog).getByTestId("end-experiment-question").textContent).toContain(
      "Moving production ends it (recorded as stopped",
    );
    expect(dialog.textContent).toContain("instead of the experiment's split (v2 50% / v3 50%)");
    await userEvent.click(within(dialog).getByRole("button", { name: "End experiment and promote" }));

    await waitFor(() => expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")).toHaveLength(1));
    expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")[0]?.body).toEqual({
      version: 3,
      end_experiment: true,
    });
  });

  it("names a rollout's percent and next step", async () => {
    stubEditor(
      aheadConfig(),
      "live",
      {},
      servingWithExperiment({
        status: "running",
        from_version: 2,
        to_version: 3,
        steps: [5, 25, 100],
        step_index: 0,
        percent: 5,
        step_minutes: 60,
        step_started_at: new Date(Date.now() - 20 * 60_000).toISOString(),
        next_step_at: new Date(Date.now() + 40 * 60_000).toISOString(),
        bounds: { min_calls: 20 },
        history: [],
      }),
    );
    renderEditor();

    const note = await screen.findByTestId("experiment-running");
    expect(note.textContent).toContain("Rollout of v3: 5% of callers (step 1 of 3); next 25% in 40 min");
    expect(within(note).getByRole("link", { name: "See the rollout" }).getAttribute("href")).toBe(
      "/prompts/blog-writer/experiments",
    );
  });

  it("learns of an experiment from the server's 409, says so and then asks to end it", async () => {
    let refused = false;
    const api = stubEditor(aheadConfig(), "live", {
      "PUT /api/prompts/prompt-1/labels/production": ({ body }: RecordedRequest) => {
        if ((body as { end_experiment?: boolean }).end_experiment) return jsonResponse(labels);
        refused = true;
        return jsonResponse(
          {
            code: "experiment_running",
            message:
              "An experiment is running (v2 50% / v3 50%): end it to move production, or send end_experiment: true",
          },
          409,
        );
      },
    });
    renderEditor();

    await userEvent.click(await screen.findByRole("button", { name: "Promote v3" }));
    const dialog = await screen.findByRole("dialog");
    await userEvent.click(within(dialog).getByRole("button", { name: "Promote v3" }));
    expect((await within(dialog).findByRole("alert")).textContent).toContain(
      "An experiment is running (v2 50%",
    );
    expect(refused).toBe(true);
    await userEvent.click(within(dialog).getByRole("button", { name: "End experiment and promote" }));
    await waitFor(() => expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")).toHaveLength(2));
    expect(api.callsTo("PUT /api/prompts/prompt-1/labels/production")[1]?.body).toMatchObject({
      end_experiment: true,
    });
  });
});
