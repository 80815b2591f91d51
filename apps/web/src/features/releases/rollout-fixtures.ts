import type { Experiment } from "@promptmint/contracts";

/** A running rollout as the API answers it (tests of the rollout dialog and status card). */
export const rolloutExperiment: Experiment = {
  id: "exp-9",
  app_kind: "prompt",
  prompt_id: "prompt-1",
  workflow_id: null,
  status: "running",
  arms: [
    { version: 2, percent: 90 },
    { version: 3, percent: 10 },
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
  rollout: {
    status: "running",
    from_version: 2,
    to_version: 3,
    steps: [10, 50, 100],
    step_index: 0,
    percent: 10,
    step_minutes: 30,
    step_started_at: "2026-11-27T10:00:00.000Z",
    next_step_at: "2026-11-27T10:30:00.000Z",
    bounds: { min_calls: 20, max_error_rate: 0.02 },
    history: [
      { at: "2026-11-27T10:00:00.000Z", percent: 10, action: "start", reason: "Rollout of v3 started" },
    ],
  },
};
