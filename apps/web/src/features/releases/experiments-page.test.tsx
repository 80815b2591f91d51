import type { Experiment, ExperimentDetail } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it } from "vitest";
import { stubResizeObserver } from "../../test/analytics-test-support";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture, promptConfigFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";
import { pivotSeries } from "./experiment-charts";

const config = promptConfigFixture();
const v1 = {
  ...config.active_version,
  id: "version-1",
  version: 1,
  is_active: false,
  labels: [],
  changelog: "First",
};
const versions = [config.active_version, v1];
const BASE = "/api/prompts/prompt-1/experiments/";

const running: Experiment = {
  id: "exp-1",
  app_kind: "prompt",
  prompt_id: "prompt-1",
  workflow_id: null,
  status: "running",
  arms: [
    { version: 2, percent: 50 },
    { version: 1, percent: 50 },
  ],
  sticky_by: null,
  rules: { min_calls: 100 },
  control_version: 2,
  started_by_name: "ada",
  started_at: "2026-11-27T10:00:00.000Z",
  ended_at: null,
  outcome: null,
  winner_version: null,
  end_reason: "",
  rollout: null,
};

const arm = (version: number, calls: number, margin: number) => ({
  version,
  percent: 50,
  calls,
  successes: calls - 2,
  errors: 2,
  success_rate: (calls - 2) / calls,
  latency_p50_ms: 420,
  latency_p95_ms: 900,
  input_tokens: calls * 10,
  output_tokens: calls * 20,
  model_cost_micros: calls * 1_000,
  revenue_micros: calls * 250_000,
  fee_micros: calls * 25_000,
  margin_micros: margin,
  margin_per_call_micros: margin / calls,
  refunded_calls: 2,
});

const detail: ExperimentDetail = {
  experiment: running,
  arms: [arm(2, 120, 26_880_000), arm(1, 130, 29_900_000)],
  comparisons: [
    {
      version: 1,
      control_version: 2,
      enough_calls: true,
      success_rate: { difference: 0.001, statistic: 0.1, p_value: 0.92, ci95: [-0.03, 0.03] },
      margin_per_call: { difference: 6_000, statistic: 4.2, p_value: 0.0004, ci95: [3_000, 9_000], df: 240 },
      verdict: "better",
    },
  ],
  series: [
    {
      at: "2026-11-27T10:00:00Z",
      version: 2,
      calls: 60,
      success_rate: 1,
      latency_p50_ms: 400,
      revenue_micros: 1,
      model_cost_micros: 1,
      margin_micros: 1,
    },
    {
      at: "2026-11-27T10:00:00Z",
      version: 1,
      calls: 70,
      success_rate: 1,
      latency_p50_ms: 410,
      revenue_micros: 1,
      model_cost_micros: 1,
      margin_micros: 1,
    },
  ],
  bucket_seconds: 60,
  model_cost_note: null,
};

function stubApi(list: { running: Experiment | null; experiments: Experiment[] }, extra = {}) {
  return stubSignedInApi({
    "GET /api/app/blog-writer/": () => jsonResponse(applicationFixture({ status: "live" })),
    "GET /api/app/blog-writer/prompt/": () => jsonResponse(config),
    "GET /api/prompts/prompt-1/versions/": () => jsonResponse(versions),
    [`GET ${BASE}`]: () => jsonResponse(list),
    [`GET ${BASE}exp-1`]: () => jsonResponse(detail),
    ...extra,
  });
}

const renderPage = () =>
  renderRoute("/prompts/blog-writer/experiments", { auth: createTestAuth("signed-in") });

describe("experiments page", () => {
  beforeEach(() => stubResizeObserver());

  it("starts an experiment from the form: versions, a split summing to 100, and rules", async () => {
    const api = stubApi(
      { running: null, experiments: [] },
      { [`POST ${BASE}`]: () => jsonResponse(running, 201) },
    );
    renderPage();
    expect(await screen.findByRole("heading", { name: "Experiments", level: 1 })).toBeDefined();
    expect(await screen.findByText("No past experiments")).toBeDefined();
    // The app's pages, this one current (prompt-app-tabs.tsx).
    const nav = screen.getByRole("navigation", { name: "Prompt app pages" });
    expect(within(nav).getByRole("link", { name: "Experiments" }).getAttribute("aria-current")).toBe("page");
    const user = userEvent.setup();
    const first = screen.getByLabelText("Arm 1 percent");
    await user.clear(first);
    await user.type(first, "70");
    expect(screen.getByRole("status").textContent).toMatch(/Total 120% \(must be 100%\)/);
    await user.click(screen.getByRole("button", { name: "Start experiment" }));
    expect(await screen.findByText("Percents must sum to 100 (they sum to 120)")).toBeDefined();
    expect(api.callsTo(`POST ${BASE}`)).toHaveLength(0);

    const second = screen.getByLabelText("Arm 2 percent");
    await user.clear(second);
    await user.type(second, "30");
    await user.type(screen.getByLabelText("Roll back if an arm's error rate is above (%)"), "5");
    await user.type(screen.getByLabelText("Promote a significant winner after (calls per arm)"), "500");
    await user.click(screen.getByRole("button", { name: "Start experiment" }));
    await waitFor(() => expect(api.callsTo(`POST ${BASE}`)).toHaveLength(1));
    expect(api.callsTo(`POST ${BASE}`)[0]?.body).toEqual({
      arms: [
        { version: 2, percent: 70 },
        { version: 1, percent: 30 },
      ],
      sticky_by: null,
      rules: { min_calls: 100, max_error_rate: 0.05, promote_winner_after_calls: 500 },
    });
  });

  it("shows a running experiment's arms side by side with significance, and rolls back in one confirmed click", async () => {
    const api = stubApi(
      { running, experiments: [running] },
      {
        [`POST ${BASE}exp-1/rollback`]: () =>
          jsonResponse({ ...detail, experiment: { ...running, status: "ended", outcome: "rolled_back" } }),
      },
    );
    renderPage();
    expect(await screen.findByText("Running experiment")).toBeDefined();
    const table = await screen.findByRole("table");
    const revenue = within(table).getByRole("row", { name: /Revenue/ });
    expect(revenue.textContent).toContain("$30.00");
    expect(revenue.textContent).toContain("$32.50");
    expect(within(table).getByRole("row", { name: /Calls/ }).textContent).toContain("130");
    expect(screen.getByText("Better than control")).toBeDefined();
    expect(screen.getByText(/p < 0.001/)).toBeDefined();
    expect(screen.getByRole("heading", { name: "Margin" })).toBeDefined();
    expect(screen.getByRole("button", { name: "Promote v1" })).toBeDefined();

    const user = userEvent.setup();
    await user.click(screen.getByRole("button", { name: "Roll back" }));
    const dialog = await screen.findByRole("dialog");
    expect(dialog.textContent).toMatch(/production returns to v2/);
    await user.click(within(dialog).getByRole("button", { name: "Roll back" }));
    await waitFor(() => expect(api.callsTo(`POST ${BASE}exp-1/rollback`)).toHaveLength(1));
  });

  it("says when there are not enough calls to judge, never naming a winner", async () => {
    const early = {
      ...detail,
      comparisons: [
        {
          ...detail.comparisons[0],
          enough_calls: false,
          success_rate: null,
          margin_per_call: null,
          verdict: "not_enough_calls",
        },
      ],
    };
    stubApi({ running, experiments: [running] }, { [`GET ${BASE}exp-1`]: () => jsonResponse(early) });
    renderPage();
    expect(await screen.findByText("Not enough calls yet")).toBeDefined();
    expect(screen.getByText("Each arm needs 100 calls before a difference can be judged.")).toBeDefined();
    expect(screen.queryByText("Better than control")).toBeNull();
  });

  it("pivots the series to one row per bucket with a column per arm", () => {
    const rows = pivotSeries(detail.series, (p) => p.calls);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ v1: 70, v2: 60 });
  });
});
