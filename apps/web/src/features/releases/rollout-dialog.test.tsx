import type { PromptVersion } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture, promptConfigFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";
import { DEFAULT_ROLLOUT_FORM, parseRolloutForm } from "./rollout-dialog";
import { rolloutExperiment } from "./rollout-fixtures";

const base = promptConfigFixture().active_version;
const version = (number: number, changes: Partial<PromptVersion> = {}): PromptVersion => ({
  ...base,
  id: `version-${number}`,
  version: number,
  is_active: false,
  labels: [],
  ...changes,
});
const v3 = version(3, { labels: ["latest"] });
const v2 = version(2, { is_active: true, labels: ["production"] });

function stubApi(extra = {}) {
  return stubSignedInApi({
    "GET /api/app/blog-writer/": () => jsonResponse(applicationFixture({ status: "live" })),
    "GET /api/app/blog-writer/prompt/": () =>
      jsonResponse(
        promptConfigFixture({
          latest_version: v3,
          active_version: v2,
          production_version: 2,
          current_version: 3,
        }),
      ),
    "GET /api/prompts/prompt-1/versions/": () => jsonResponse([v3, v2]),
    "GET /api/prompts/prompt-1/labels/": () => jsonResponse({ labels: [], moves: [] }),
    "GET /api/prompts/prompt-1/experiments/": () => jsonResponse({ running: null, experiments: [] }),
    ...extra,
  });
}

describe("parseRolloutForm", () => {
  it("turns the form into StartRollout, dollars into micro-dollars and percents into rates", () => {
    expect(
      parseRolloutForm(3, {
        ...DEFAULT_ROLLOUT_FORM,
        steps: "10%, 50%, 100%",
        stepMinutes: "30",
        maxErrorPercent: "2",
        maxLatencyMs: "1500",
        minMarginDollars: "0.05",
        minOnlineScore: "0.7",
        minCalls: "50",
      }),
    ).toEqual({
      body: {
        version: 3,
        steps: [10, 50, 100],
        step_minutes: 30,
        bounds: {
          min_calls: 50,
          max_error_rate: 0.02,
          max_latency_p95_ms: 1500,
          min_margin_micros: 50_000,
          min_online_score: 0.7,
        },
      },
      errors: null,
    });
  });

  it("names each bad field as the server would", () => {
    const bad = (changes: Partial<typeof DEFAULT_ROLLOUT_FORM>) =>
      parseRolloutForm(3, { ...DEFAULT_ROLLOUT_FORM, ...changes }).errors;
    expect(bad({ steps: "25, 5, 100" })?.steps).toMatch(/larger than the one before/);
    expect(bad({ steps: "5, 25, 90" })?.steps).toMatch(/last step must be 100/);
    expect(bad({ steps: "100" })?.steps).toMatch(/2 to 10/);
    expect(bad({ steps: "5, 2.5, 100" })?.steps).toMatch(/whole percents/);
    expect(bad({ maxErrorPercent: "120" })?.maxErrorPercent).toMatch(/0 to 100/);
    expect(bad({ minOnlineScore: "2" })?.minOnlineScore).toMatch(/0 to 1/);
    expect(bad({ stepMinutes: "0" })?.stepMinutes).toMatch(/1 to 10,080/);
    expect(bad({ minCalls: "" })?.minCalls).toMatch(/1 to 1,000,000/);
    expect(bad({ maxLatencyMs: "" })).toBeNull();
  });
});

describe("roll out gradually", () => {
  it("starts a rollout from the promote dialog with the steps and bounds typed, by keyboard", async () => {
    const api = stubApi({
      "POST /api/prompts/prompt-1/rollouts": () => jsonResponse(rolloutExperiment, 201),
    });
    renderRoute("/prompts/blog-writer/versions", { auth: createTestAuth("signed-in") });

    const promote = await screen.findAllByRole(
      "button",
      { name: /Promote v3|Promote to production/ },
      { timeout: 5_000 },
    );
    await userEvent.click(promote[0] as HTMLElement);
    const promoteDialog = await screen.findByRole("dialog", { name: "Promote v3 to production?" });
    await userEvent.click(within(promoteDialog).getByRole("button", { name: "Roll out gradually" }));
    const dialog = await screen.findByRole("dialog", { name: "Roll out v3 gradually?" });
    expect(dialog.textContent).toContain("from v2");

    const steps = within(dialog).getByLabelText("Steps (% of callers on v3)");
    await userEvent.clear(steps);
    await userEvent.type(steps, "10, 50, 90");
    await userEvent.click(within(dialog).getByRole("button", { name: "Start rollout" }));
    expect(within(dialog).getByText("The last step must be 100")).toBeDefined();
    expect(steps.getAttribute("aria-invalid")).toBe("true");
    expect(api.callsTo("POST /api/prompts/prompt-1/rollouts")).toHaveLength(0);

    await userEvent.clear(steps);
    await userEvent.type(steps, "10, 50, 100");
    const minutes = within(dialog).getByLabelText("Minutes per step");
    await userEvent.clear(minutes);
    await userEvent.type(minutes, "30");
    await userEvent.type(within(dialog).getByLabelText("Min margin per call ($)"), "0.05");
    // Enter in a field starts it.
    await userEvent.type(within(dialog).getByLabelText("Max p95 latency (ms)"), "2000{Enter}");

    await waitFor(() => expect(api.callsTo("POST /api/prompts/prompt-1/rollouts")).toHaveLength(1));
    expect(api.callsTo("POST /api/prompts/prompt-1/rollouts")[0]?.body).toEqual({
      version: 3,
      steps: [10, 50, 100],
      step_minutes: 30,
      bounds: { min_calls: 20, max_error_rate: 0.05, max_latency_p95_ms: 2000, min_margin_micros: 50_000 },
    });
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  });

  it("shows the server's refusal on the field it names", async () => {
    stubApi({
      "POST /api/prompts/prompt-1/rollouts": () =>
        jsonResponse(
          {
            code: "bad_request",
            message: "Invalid request: bounds.max_error_rate is too high",
            fields: { "bounds.max_error_rate": "is too high" },
          },
          400,
        ),
    });
    renderRoute("/prompts/blog-writer/versions", { auth: createTestAuth("signed-in") });
    const promote = await screen.findAllByRole(
      "button",
      { name: /Promote v3|Promote to production/ },
      { timeout: 5_000 },
    );
    await userEvent.click(promote[0] as HTMLElement);
    const promoteDialog = await screen.findByRole("dialog", { name: "Promote v3 to production?" });
    await userEvent.click(within(promoteDialog).getByRole("button", { name: "Roll out gradually" }));
    const dialog = await screen.findByRole("dialog", { name: "Roll out v3 gradually?" });
    await userEvent.click(within(dialog).getByRole("button", { name: "Start rollout" }));
    expect(await within(dialog).findByText("is too high")).toBeDefined();
    expect(within(dialog).getByLabelText("Max error rate (%)").getAttribute("aria-invalid")).toBe("true");
    expect(within(dialog).getByText(/Invalid request/)).toBeDefined();
  });
});
