import type { WorkflowVersion } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";
import { renderWorkflowEditor, stubWorkflowApi, workflowConfigFixture } from "../../test/workflow-fixtures";

// Workflow apps get the same releases pages as prompt apps, at their own addresses
// (docs/decisions/079): /workflows/:slug/{versions,experiments,evals}.

function version(n: number, changes: Partial<WorkflowVersion> = {}): WorkflowVersion {
  return {
    id: `version-${n}`,
    version: n,
    provider: "dify",
    provider_config: { base_url: "https://dify.example.com/v1", api_key: "••••abcd", app_type: "completion" },
    timeout_seconds: 300,
    max_iterations: 10,
    enable_logging: true,
    changelog: "",
    created_at: "2026-11-20T10:00:00.000Z",
    is_active: false,
    author_name: "grace",
    labels: [],
    ...changes,
  };
}

const v3 = version(3, {
  provider_config: { base_url: "https://dify.example.com/v2", api_key: "••••wxyz", app_type: "completion" },
  timeout_seconds: 90,
  enable_logging: false,
  changelog: "New Dify app, shorter timeout",
  labels: ["latest"],
});
const v2 = version(2, { changelog: "", labels: ["production"], is_active: true, author_name: "ada" });

function stubReleases(extra = {}) {
  return stubWorkflowApi(
    {
      "GET /api/workflows/workflow-1/versions/": () => jsonResponse([v3, v2]),
      "GET /api/workflows/workflow-1/labels/": () => jsonResponse({ labels: [], moves: [] }),
      "GET /api/workflows/workflow-1/serving": () =>
        jsonResponse({ production_version: 2, experiment: null }),
      ...extra,
    },
    {
      application: applicationFixture({
        slug: "support-flow",
        name: "Support Flow",
        type: "workflow",
        status: "live",
      }),
      config: workflowConfigFixture({ current_version: 3, production_version: 2 }),
    },
  );
}

const render = (path: string) => renderRoute(path, { auth: createTestAuth("signed-in") });

describe("a workflow app's releases pages", () => {
  it("has a Versions page at its own address, with notes, authors and one Promote", async () => {
    stubReleases();
    render("/workflows/support-flow/versions");

    const timeline = await screen.findByRole("list", { name: "Versions" }, { timeout: 5_000 });
    const row3 = within(within(timeline).getByRole("listitem", { name: "Version 3" }));
    const row2 = within(within(timeline).getByRole("listitem", { name: "Version 2" }));
    expect(row3.getByText("New Dify app, shorter timeout")).toBeDefined();
    expect(row3.getByText(/grace/)).toBeDefined();
    expect(row2.getByText("No note")).toBeDefined();
    expect(row2.getByText(/ada/)).toBeDefined();

    const nav = screen.getByRole("navigation", { name: "Workflow app pages" });
    expect(
      within(nav)
        .getAllByRole("link")
        .map((link) => link.getAttribute("href")),
    ).toEqual([
      "/workflows/support-flow",
      "/workflows/support-flow/versions",
      "/workflows/support-flow/experiments",
      "/workflows/support-flow/evals",
      "/applications/support-flow/analytics",
    ]);
    const release = screen.getByRole("region", { name: "Release" });
    expect(release.textContent).toContain("Callers get v2");
    await waitFor(() => expect(within(release).getAllByRole("button")).toHaveLength(1));
    expect(within(release).getByRole("button", { name: "Promote v3" })).toBeDefined();
  });

  it("diffs provider settings, a secret only as changed, timeout, iterations and logging", async () => {
    stubReleases();
    render("/workflows/support-flow/versions");

    const table = await screen.findByRole("table", { name: "Workflow settings" });
    const cells = (label: string) =>
      within(within(table).getByRole("row", { name: new RegExp(`^${label}`) }))
        .getAllByRole("cell")
        .map((cell) => cell.textContent);
    expect(cells("base_url")).toEqual(["https://dify.example.com/v1", "https://dify.example.com/v2"]);
    expect(cells("api_key")).toEqual(["secret", "changed"]);
    expect(cells("app_type")).toEqual(["completion", "completion"]);
    expect(cells("Timeout")).toEqual(["5.0 min", "90.0 s"]);
    expect(cells("Max iterations")).toEqual(["10", "10"]);
    expect(cells("Logging")).toEqual(["on", "off"]);
    // A secret's mask never reaches the page.
    expect(table.textContent).not.toContain("wxyz");
    expect(table.textContent).not.toContain("abcd");
  });

  it("promotes through the shared dialog, which names what else changes", async () => {
    const api = stubReleases({
      "PUT /api/workflows/workflow-1/labels/production": () => jsonResponse({ labels: [], moves: [] }),
    });
    render("/workflows/support-flow/versions");

    const release = await screen.findByRole("region", { name: "Release" });
    await userEvent.click(await within(release).findByRole("button", { name: "Promote v3" }));
    const dialog = await screen.findByRole("dialog", { name: "Promote v3 to production?" });
    expect(dialog.textContent).toContain("api_key changed");
    expect(dialog.textContent).not.toContain("wxyz");
    await userEvent.click(within(dialog).getByRole("button", { name: "Promote v3" }));
    await waitFor(() =>
      expect(api.callsTo("PUT /api/workflows/workflow-1/labels/production")).toHaveLength(1),
    );
    expect(api.callsTo("PUT /api/workflows/workflow-1/labels/production")[0]?.body).toEqual({ version: 3 });
  });

  it("has Experiments and Evals pages reading the workflow's routes", async () => {
    const api = stubReleases({
      "GET /api/workflows/workflow-1/experiments/": () => jsonResponse({ running: null, experiments: [] }),
      "GET /api/workflows/workflow-1/evals/cases": () =>
        jsonResponse({ cases: [], max_cases: 50, require_passing_eval: false }),
      "GET /api/workflows/workflow-1/evals/runs": () => jsonResponse([]),
      "GET /api/models/": () => jsonResponse({ models: [], default_model: "gpt-4o-mini" }),
    });
    const { unmount } = render("/workflows/support-flow/experiments");
    expect(await screen.findByRole("heading", { name: "Experiments" }, { timeout: 5_000 })).toBeDefined();
    await waitFor(() => expect(api.callsTo("GET /api/workflows/workflow-1/experiments/")).toHaveLength(1));
    unmount();

    render("/workflows/support-flow/evals");
    expect(await screen.findByRole("heading", { name: "Evals" }, { timeout: 5_000 })).toBeDefined();
    await waitFor(() => expect(api.callsTo("GET /api/workflows/workflow-1/evals/cases")).toHaveLength(1));
    const nav = screen.getByRole("navigation", { name: "Workflow app pages" });
    expect(within(nav).getByRole("link", { name: "Evals" }).getAttribute("aria-current")).toBe("page");
  });

  it("says 'Workflow not found' on a prompt app's slug", async () => {
    stubWorkflowApi({}, { application: applicationFixture({ slug: "support-flow", type: "prompt" }) });
    render("/workflows/support-flow/versions");
    expect(await screen.findByRole("heading", { name: "Workflow not found" })).toBeDefined();
  });

  it("the workflow editor links to its pages and its banner reads the serving state", async () => {
    stubReleases({
      "GET /api/workflows/workflow-1/serving": () =>
        jsonResponse({
          production_version: 2,
          experiment: {
            id: "exp-1",
            app_kind: "workflow",
            prompt_id: null,
            workflow_id: "workflow-1",
            status: "running",
            arms: [
              { version: 2, percent: 90 },
              { version: 3, percent: 10 },
            ],
            sticky_by: null,
            rules: { min_calls: 100 },
            control_version: 2,
            started_by_name: "ada",
            started_at: "2026-11-20T10:00:00.000Z",
            ended_at: null,
            outcome: null,
            winner_version: null,
            end_reason: "",
            rollout: null,
          },
        }),
    });
    renderWorkflowEditor();

    const nav = await screen.findByRole("navigation", { name: "Workflow app pages" });
    expect(within(nav).getByRole("link", { name: "Versions" }).getAttribute("href")).toBe(
      "/workflows/support-flow/versions",
    );
    expect(screen.queryByRole("tab", { name: "Versions" })).toBeNull();
    expect(screen.queryByRole("tab", { name: "Experiments" })).toBeNull();
    const banner = await screen.findByRole("region", { name: "Release" });
    expect(
      await within(banner).findByText("Experiment running: v2 90% · v3 10% — callers are split"),
    ).toBeDefined();
  });
});
