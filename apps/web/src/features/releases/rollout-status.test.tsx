import type { Experiment, PromptVersion } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture, promptConfigFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";
import { rolloutExperiment } from "./rollout-fixtures";
import { boundsText } from "./rollout-status";

const base = promptConfigFixture().active_version;
const v3: PromptVersion = { ...base, id: "version-3", version: 3, is_active: false, labels: ["latest"] };
const v2: PromptVersion = { ...base, id: "version-2", version: 2, is_active: true, labels: ["production"] };

const advanced: Experiment = {
  ...rolloutExperiment,
  arms: [
    { version: 2, percent: 50 },
    { version: 3, percent: 50 },
  ],
  rollout: {
    ...(rolloutExperiment.rollout as NonNullable<Experiment["rollout"]>),
    step_index: 1,
    percent: 50,
    next_step_at: "2026-11-27T11:10:00.000Z",
    history: [
      { at: "2026-11-27T10:00:00.000Z", percent: 10, action: "start", reason: "Rollout of v3 started" },
      {
        at: "2026-11-27T10:30:00.000Z",
        percent: 10,
        action: "hold",
        reason: "Held at 10%: 4 of 20 candidate calls",
      },
      {
        at: "2026-11-27T10:40:00.000Z",
        percent: 50,
        action: "advance",
        reason: "Advanced to 50%: within bounds",
      },
    ],
  },
};

function stubApi(running: Experiment | null, extra = {}) {
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
    "GET /api/prompts/prompt-1/experiments/": () =>
      jsonResponse({ running, experiments: running ? [running] : [] }),
    ...extra,
  });
}

describe("rollout status", () => {
  it("says the candidate's share, the steps, the next step, the bounds and the history, and stops by a confirmation", async () => {
    const api = stubApi(advanced, {
      "POST /api/prompts/prompt-1/rollouts/current/stop": () =>
        jsonResponse({ ...advanced, status: "ended", outcome: "rolled_back" }),
    });
    renderRoute("/prompts/blog-writer/versions", { auth: createTestAuth("signed-in") });

    const card = await screen.findByRole("region", { name: "Rolling out v3" }, { timeout: 5_000 });
    expect(card.textContent).toContain("v3 gets 50% of callers who pin no version; v2 the other 50%.");
    expect(within(card).getByRole("progressbar").getAttribute("aria-valuenow")).toBe("50");
    const steps = within(within(card).getByRole("list", { name: "Steps" })).getAllByRole("listitem");
    expect(steps.map((step) => step.textContent)).toEqual(["10%", "50% (now)", "100%"]);
    expect(card.textContent).toContain("30 min per step");
    expect(card.textContent).toContain("error rate ≤ 2%");
    const history = within(within(card).getByRole("region", { name: "Rollout history" })).getAllByRole(
      "listitem",
    );
    expect(history.map((item) => item.textContent?.split(" ·")[0])).toEqual([
      "Advanced at 50%",
      "Held at 10%",
      "Started at 10%",
    ]);

    await userEvent.click(within(card).getByRole("button", { name: "Stop rollout" }));
    const dialog = await screen.findByRole("dialog", { name: "Stop this rollout?" });
    expect(dialog.textContent).toContain("goes back to v2");
    await userEvent.click(within(dialog).getByRole("button", { name: "Stop rollout" }));
    await waitFor(() =>
      expect(api.callsTo("POST /api/prompts/prompt-1/rollouts/current/stop")).toHaveLength(1),
    );
  });

  it("advances now: a refusal's reason is shown in the card, an advance is sent once", async () => {
    let refuse = true;
    const api = stubApi(advanced, {
      "POST /api/prompts/prompt-1/rollouts/current/advance": () =>
        refuse
          ? jsonResponse(
              {
                error: "conflict",
                message:
                  "Held at 50%: 1 of 20 candidate calls in this step: the next step needs 20 calls on v3 first",
              },
              409,
            )
          : jsonResponse({
              ...advanced,
              rollout: { ...advanced.rollout, percent: 100, status: "completed" },
            }),
    });
    renderRoute("/prompts/blog-writer/versions", { auth: createTestAuth("signed-in") });
    const card = await screen.findByRole("region", { name: "Rolling out v3" }, { timeout: 5_000 });
    await userEvent.click(within(card).getByRole("button", { name: "Advance now" }));
    expect(await within(card).findByText(/the next step needs 20 calls on v3 first/)).toBeDefined();
    refuse = false;
    await userEvent.click(within(card).getByRole("button", { name: "Advance now" }));
    await waitFor(() =>
      expect(api.callsTo("POST /api/prompts/prompt-1/rollouts/current/advance")).toHaveLength(2),
    );
  });

  it("shows nothing for a plain experiment or none", async () => {
    stubApi({ ...rolloutExperiment, rollout: null });
    renderRoute("/prompts/blog-writer/versions", { auth: createTestAuth("signed-in") });
    await screen.findByRole("list", { name: "Versions" }, { timeout: 5_000 });
    expect(screen.queryByRole("region", { name: /Rolling out/ })).toBeNull();
  });

  it("words the bounds", () => {
    expect(
      boundsText({ min_calls: 1000, max_error_rate: 0.025, max_latency_p95_ms: 2500, min_online_score: 0.8 }),
    ).toBe(
      "error rate ≤ 2.5%, p95 latency ≤ 2.5 s, online eval score ≥ 0.8, judged after 1,000 calls per step",
    );
  });
});
