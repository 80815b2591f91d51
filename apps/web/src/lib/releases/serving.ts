import { ExperimentSchema } from "@promptmint/contracts";
import { z } from "zod";
import { apiRequest } from "../api-client";
import { defineQuery } from "../define-query";
import { type ReleaseApp, releaseBase, releaseQueryKey } from "./app-ref";

/*
 * The shared contract of `GET {base}/serving` (packages/contracts/src/releases.ts ServingState,
 * H1) and of an experiment's rollout (contracts/src/rollouts.ts RolloutSchema, H4), as the web
 * reads them. Written here against the agreed shape until both land in the contracts package;
 * at merge, import ServingStateSchema and RolloutSchema from @promptmint/contracts instead.
 */
export const ServingRolloutSchema = z.object({
  status: z.enum(["running", "completed", "rolled_back", "stopped"]),
  from_version: z.number().int(),
  to_version: z.number().int(),
  steps: z.array(z.number().int()),
  step_index: z.number().int(),
  percent: z.number().int(),
  step_minutes: z.number().int(),
  next_step_at: z.string().nullable(),
});
export type ServingRollout = z.infer<typeof ServingRolloutSchema>;

export const ServingExperimentSchema = ExperimentSchema.extend({
  rollout: ServingRolloutSchema.nullable().optional(),
});
export type ServingExperiment = z.infer<typeof ServingExperimentSchema>;

export const ServingStateSchema = z.object({
  production_version: z.number().int().nullable(),
  experiment: ServingExperimentSchema.nullable(),
});
export type ServingState = z.infer<typeof ServingStateSchema>;

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
