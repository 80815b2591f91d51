import type { Experiment, ExperimentDetail, WorkflowVersion } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { jsonResponse } from "../../test/fetch-stub";
import { stubResizeObserver } from "../analytics/analytics-test-support";
import { renderWorkflowEditor, stubWorkflowApi, workflowConfigFixture } from "./workflow-test-fixtures";

// The workflow editor's Experiments tab is the prompt apps' experiments panel over the versions of
// the provider configuration (docs/decisions/058, "Workflow apps"), at /workflows/{id}/experiments/.
const BASE = "/api/workflows/workflow-1/experiments/";

function version(n: number, provider: string, labels: string[], changelog: string): WorkflowVersion {
  return {
    id: `version-${n}`,
    version: n,
    provider,
    provider_config: {},
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
const versions = [
  version(3, "n8n", ["latest"], "n8n flow"),
  version(2, "webhook", ["production"], "Own endpoint"),
  version(1, "dify", [], "Initial version"),
];

const running: Experiment = {
  id: "exp-9",
  app_kind: "workflow",
  prompt_id: null,
  workflow_id: "workflow-1",
  status: "running",
  arms: [
    { version: 2, percent: 50 },
    { version: 3, percent: 50 },
  ],
  sticky_by: null,
  rules: { min_calls: 100 },
  control_version: 2,
  started_by_name: "creator",
  started_at: "2026-11-27T10:00:00.000Z",
  ended_at: null,
  outcome: null,
  winner_version: null,
  end_reason: "",
  rollout: null,
};

const arm = (v: number, calls: number, successes: number) => ({
  version: v,
  percent: 50,
  calls,
  successes,
  errors: calls - successes,
  success_rate: successes / calls,
  latency_p50_ms: 300,
  latency_p95_ms: 800,
  input_tokens: 0,
  output_tokens: 0,
  model_cost_micros: 0,
  revenue_micros: successes * 300_000,
  fee_micros: successes * 30_000,
  margin_micros: successes * 270_000,
  margin_per_call_micros: (successes * 270_000) / calls,
  refunded_calls: calls - successes,
});

const NOTE =
  "Workflow calls have no model cost from Promptmint: the provider behind each version (Dify, n8n, Flowise, your webhook) bills you directly, so an arm's margin is its revenue less the platform fee.";

const detail: ExperimentDetail = {
  experiment: running,
  arms: [arm(2, 120, 120), arm(3, 110, 80)],
  comparisons: [
    {
      version: 3,
      control_version: 2,
      enough_calls: true,
      success_rate: { difference: -0.27, statistic: -6.1, p_value: 0.00001, ci95: [-0.35, -0.19] },
      margin_per_call: {
        difference: -73_000,
        statistic: -5.8,
        p_value: 0.00001,
        ci95: [-98_000, -48_000],
        df: 180,
      },
      verdict: "worse",
    },
  ],
  series: [
    {
      at: "2026-11-27T10:00:00Z",
      version: 2,
      calls: 120,
      success_rate: 1,
      latency_p50_ms: 300,
      revenue_micros: 36_000_000,
      model_cost_micros: 0,
      margin_micros: 32_400_000,
    },
  ],
  bucket_seconds: 60,
  model_cost_note: NOTE,
};

describe("workflow experiments tab", () => {
  beforeEach(() => stubResizeObserver());
  afterEach(() => vi.restoreAllMocks());

  it("starts an experiment between two provider configurations from the workflow's tabs", async () => {
    const api = stubWorkflowApi(
      {
        "GET /api/workflows/workflow-1/versions/": () => jsonResponse(versions),
        [`GET ${BASE}`]: () => jsonResponse({ running: null, experiments: [] }),
        [`POST ${BASE}`]: () => jsonResponse(running, 201),
      },
      { config: workflowConfigFixture({ current_version: 3, production_version: 2 }) },
    );
    const user = userEvent.setup();
    renderWorkflowEditor();
    await user.click(await screen.findByRole("tab", { name: "Experiments" }));

    expect(await screen.findByText("Start an experiment")).toBeDefined();
    // Each version is offered with the provider it calls; production is the first arm.
    const first = screen.getByLabelText("Arm 1 version") as HTMLSelectElement;
    expect(first.value).toBe("2");
    expect(within(first).getByRole("option", { name: "v3 (latest) · n8n · n8n flow" })).toBeDefined();
    expect(screen.getByText(/workflow calls have no model cost from us/)).toBeDefined();
    await user.selectOptions(screen.getByLabelText("Arm 2 version"), "3");
    const share = screen.getByLabelText("Arm 1 percent");
    await user.clear(share);
    await user.type(share, "80");
    const other = screen.getByLabelText("Arm 2 percent");
    await user.clear(other);
    await user.type(other, "20");
    await user.click(screen.getByRole("button", { name: "Start experiment" }));
    await waitFor(() => expect(api.callsTo(`POST ${BASE}`)).toHaveLength(1));
    expect(api.callsTo(`POST ${BASE}`)[0]?.body).toEqual({
      arms: [
        { version: 2, percent: 80 },
        { version: 3, percent: 20 },
      ],
      sticky_by: null,
      rules: { min_calls: 100 },
    });
  });

  it("shows the arms side by side without model cost, says why, and promotes an arm in one confirmed click", async () => {
    const api = stubWorkflowApi(
      {
        "GET /api/workflows/workflow-1/versions/": () => jsonResponse(versions),
        [`GET ${BASE}`]: () => jsonResponse({ running, experiments: [running] }),
        [`GET ${BASE}exp-9`]: () => jsonResponse(detail),
        [`POST ${BASE}exp-9/promote`]: () =>
          jsonResponse({
            ...detail,
            experiment: { ...running, status: "ended", outcome: "promoted", winner_version: 2 },
          }),
      },
      { config: workflowConfigFixture({ current_version: 3, production_version: 2 }) },
    );
    const user = userEvent.setup();
    renderWorkflowEditor();
    await user.click(await screen.findByRole("tab", { name: "Experiments" }));

    expect(await screen.findByText("Running experiment")).toBeDefined();
    expect(await screen.findByText(NOTE)).toBeDefined();
    const table = await screen.findByRole("table");
    expect(within(table).getByRole("row", { name: /Success rate/ }).textContent).toContain("72.7%");
    expect(within(table).getByRole("row", { name: /Revenue/ }).textContent).toContain("$36.00");
    expect(within(table).queryByRole("row", { name: /Model cost/ })).toBeNull();
    expect(within(table).getByRole("row", { name: /Tokens/ }).textContent).toContain("0 / 0");
    expect(screen.queryByRole("heading", { name: "Model cost" })).toBeNull();
    expect(screen.getByText("Worse than control")).toBeDefined();

    await user.click(screen.getByRole("button", { name: "Promote v2" }));
    const dialog = await screen.findByRole("dialog");
    expect(dialog.textContent).toMatch(/every caller gets v2/);
    await user.click(within(dialog).getByRole("button", { name: "Promote" }));
    await waitFor(() => expect(api.callsTo(`POST ${BASE}exp-9/promote`)).toHaveLength(1));
    expect(api.callsTo(`POST ${BASE}exp-9/promote`)[0]?.body).toEqual({ version: 2 });
    expect(await screen.findByText("v2 is now production")).toBeDefined();
  });
});
