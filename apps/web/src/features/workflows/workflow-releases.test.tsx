import type { WorkflowConfig, WorkflowVersion } from "@promptmint/contracts";
import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture } from "../../test/fixtures";
import { renderWorkflowEditor, stubWorkflowApi, workflowConfigFixture } from "./workflow-test-fixtures";

const PRODUCTION_PATH = "PUT /api/workflows/workflow-1/labels/production";
const VERSIONS_PATH = "GET /api/workflows/workflow-1/versions/";

function version(n: number, labels: string[], changelog: string): WorkflowVersion {
  return {
    id: `version-${n}`,
    version: n,
    provider: "dify",
    provider_config: { api_key: "••••abcd" },
    timeout_seconds: 300,
    max_iterations: 10,
    enable_logging: true,
    changelog,
    created_at: "2026-11-20T10:00:00.000Z",
    is_active: labels.includes("production"),
    author_name: "creator",
    labels,
  };
}

/** A live app whose latest save (v3) is not in production (v2) until the creator promotes it. */
function stubReleases() {
  let production = 2;
  const config = (): WorkflowConfig =>
    workflowConfigFixture({
      current_version: 3,
      production_version: production,
      labels: [
        {
          name: "production",
          version: production,
          moved_at: "2026-11-20T10:00:00.000Z",
          moved_by_name: "creator",
        },
        { name: "latest", version: 3, moved_at: "2026-11-20T10:00:00.000Z", moved_by_name: null },
      ],
    });
  const versions = () =>
    [3, 2, 1].map((n) =>
      version(
        n,
        [...(n === production ? ["production"] : []), ...(n === 3 ? ["latest"] : [])],
        `Change ${n}`,
      ),
    );
  const api = stubWorkflowApi({
    "GET /api/app/support-flow/workflow/": () => jsonResponse(config()),
    [VERSIONS_PATH]: () => jsonResponse(versions()),
    [PRODUCTION_PATH]: (request) => {
      production = (request.body as { version: number }).version;
      return jsonResponse({ labels: config().labels, moves: [] });
    },
  });
  return api;
}

describe("workflow versions and labels in the editor", () => {
  afterEach(() => vi.restoreAllMocks());

  it("says callers still get production while the latest save waits, and promotes it in one click", async () => {
    const api = stubReleases();
    renderWorkflowEditor();
    const banner = await screen.findByText("Callers still get v2; your latest save is v3");
    expect(banner).toBeDefined();

    await userEvent.setup().click(screen.getByRole("button", { name: "Promote v3" }));
    expect(await screen.findByText("Callers get v3, your latest save.")).toBeDefined();
    expect(api.callsTo(PRODUCTION_PATH).map((call) => call.body)).toEqual([
      { version: 3, reason: "Promoted v3 from the editor" },
    ]);
    expect(screen.queryByText("Callers still get v2; your latest save is v3")).toBeNull();
  });

  it("lists every version with its labels, and rolls production back in one click", async () => {
    const api = stubReleases();
    const user = userEvent.setup();
    renderWorkflowEditor();
    await user.click(await screen.findByRole("tab", { name: "Versions" }));

    const list = await screen.findByRole("list", { name: "Versions" });
    const rows = within(list).getAllByRole("listitem");
    expect(rows.map((row) => row.textContent)).toEqual([
      expect.stringContaining("v3latestdifyChange 3"),
      expect.stringContaining("v2productiondifyChange 2"),
      expect.stringContaining("v1difyChange 1"),
    ]);
    // Production has no button; a newer version is promoted, an older one rolled back to.
    expect(within(rows[1] as HTMLElement).queryByRole("button")).toBeNull();
    expect(within(rows[0] as HTMLElement).getByRole("button", { name: "Promote v3" })).toBeDefined();

    await user.click(within(rows[2] as HTMLElement).getByRole("button", { name: "Roll back to v1" }));
    expect(await screen.findByText("Rolled back: callers get v1")).toBeDefined();
    expect(api.callsTo(PRODUCTION_PATH).map((call) => call.body)).toEqual([
      { version: 1, reason: "Rolled back to v1" },
    ]);
    // The list refreshes: v1 now carries the production label and has no button.
    const refreshed = await screen.findByText("production", { selector: "li:nth-child(3) span" });
    expect(refreshed).toBeDefined();
  });

  it("saves a live app without promoting, and says callers keep production", async () => {
    const live = applicationFixture({
      slug: "support-flow",
      name: "Support Flow",
      type: "workflow",
      status: "live",
    });
    const api = stubWorkflowApi(
      {
        "PATCH /api/app/support-flow/": () => jsonResponse(live),
        "PATCH /api/app/support-flow/workflow/": () =>
          jsonResponse(workflowConfigFixture({ current_version: 2, production_version: 1 })),
      },
      { application: live },
    );
    const user = userEvent.setup();
    renderWorkflowEditor();
    await user.click(await screen.findByRole("button", { name: "Save Changes" }));
    expect(await screen.findByText("Changes saved as v2; callers get v1 until you promote it")).toBeDefined();
    const [save] = api.callsTo("PATCH /api/app/support-flow/workflow/");
    expect(save?.body).not.toHaveProperty("promote");
  });

  it("shows the server's error when the versions cannot be loaded", async () => {
    stubWorkflowApi({
      [VERSIONS_PATH]: () => jsonResponse({ code: "internal", message: "Versions are unavailable" }, 500),
    });
    const user = userEvent.setup();
    renderWorkflowEditor();
    await user.click(await screen.findByRole("tab", { name: "Versions" }));
    expect(await screen.findByText("Versions are unavailable")).toBeDefined();
  });
});
