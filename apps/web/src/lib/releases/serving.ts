import { type Experiment, type Rollout, ServingStateSchema } from "@promptmint/contracts";
import { apiRequest } from "../api-client";
import { defineQuery } from "../define-query";
import { type ReleaseApp, releaseBase, releaseQueryKey } from "./app-ref";

// `GET {base}/serving` (contracts/src/releases.ts, decision 075); an experiment's `rollout` is the
// guarded rollout it runs for (contracts/src/rollouts.ts, decision 077).
export type ServingExperiment = Experiment;
export type ServingRollout = Rollout;

export function servingQueryKey(app: Pick<ReleaseApp, "kind" | "id">) {
  return [...releaseQueryKey(app), "serving"] as const;
}

/**
 * `GET {base}/serving`: what callers who pin nothing get right now: production, or the running
 * experiment's split. Every place that says what callers get reads it.
 */
const serving = defineQuery({
  key: servingQueryKey,
  fetch: (app: Pick<ReleaseApp, "kind" | "id">, signal) =>
    apiRequest(`${releaseBase(app)}/serving`, { schema: ServingStateSchema, signal }),
  refetchInterval: 30_000,
});

export const useServing = (app: Pick<ReleaseApp, "kind" | "id">) =>
  serving.useQuery({ kind: app.kind, id: app.id });

/** `v1 50% · v2 50%`: an experiment's arms in the order they were started. */
export function splitText(experiment: Pick<ServingExperiment, "arms">, separator = " · "): string {
  return experiment.arms.map((arm) => `v${arm.version} ${arm.percent}%`).join(separator);
}

/** The sentence a page says about callers while an experiment runs. */
export function experimentRunningText(experiment: Pick<ServingExperiment, "arms">): string {
  return `Experiment running: ${splitText(experiment)} — callers are split`;
}

/** A rollout's state in words: where it is and what comes next. */
export function rolloutText(rollout: ServingRollout, now: Date = new Date()): string {
  const next = rollout.steps[rollout.step_index + 1];
  const head = `Rollout of v${rollout.to_version}: ${rollout.percent}% of callers (step ${rollout.step_index + 1} of ${rollout.steps.length})`;
  if (rollout.status !== "running") return `${head}, ${rollout.status.replace("_", " ")}`;
  if (next === undefined) return `${head}; completes at the next check`;
  if (!rollout.next_step_at) return `${head}; next ${next}%`;
  const minutes = Math.max(0, Math.round((Date.parse(rollout.next_step_at) - now.getTime()) / 60_000));
  const when =
    minutes < 1
      ? "within a minute"
      : minutes < 120
        ? `in ${minutes} min`
        : `in ${Math.round(minutes / 60)} h`;
  return `${head}; next ${next}% ${when} if within bounds`;
}
