import { z } from "zod";
import { VersionNumberSchema } from "./prompts.ts";

/**
 * Guarded rollouts (docs/decisions/077): a candidate version's share of an app's production traffic
 * raised step by step (5% → 25% → 100% by default) while it stays within bounds, rolled back by
 * itself when it does not. A rollout is an experiment (arms [production, candidate]) with a
 * schedule, so serving, pages and figures treat it as one. Money is integer micro-dollars.
 */

export const RolloutBoundsSchema = z.strictObject({
  /** The candidate's error rate (0–1) in the current step above this rolls back. */
  max_error_rate: z.number().min(0).max(1).optional(),
  /** The candidate's p95 latency (ms) in the current step above this rolls back. */
  max_latency_p95_ms: z.number().int().min(1).max(600_000).optional(),
  /** The candidate's creator margin per call (micro-dollars) in the current step below this rolls back. */
  min_margin_micros: z.number().int().min(-100_000_000).max(100_000_000).optional(),
  /** The candidate's mean online eval score (0–1) in the current step below this rolls back. */
  min_online_score: z.number().min(0).max(1).optional(),
  /** Candidate calls a step needs before its bounds judge it and before it may advance. */
  min_calls: z.number().int().min(1).max(1_000_000).default(20),
});
export type RolloutBounds = z.infer<typeof RolloutBoundsSchema>;

export const RolloutStepsSchema = z
  .array(z.number().int().min(1).max(100))
  .min(1)
  .max(10)
  .superRefine((steps, ctx) => {
    for (let i = 1; i < steps.length; i++)
      if ((steps[i] as number) <= (steps[i - 1] as number))
        ctx.addIssue({ code: "custom", path: [i], message: "steps must be strictly increasing" });
    if (steps[steps.length - 1] !== 100)
      ctx.addIssue({ code: "custom", path: [steps.length - 1], message: "the last step must be 100" });
  });

export const StartRolloutSchema = z.strictObject({
  /** The candidate: the version whose share grows. */
  version: VersionNumberSchema,
  /** The candidate's percent at each step, strictly increasing, ending at 100. */
  steps: RolloutStepsSchema.default([5, 25, 100]),
  /** How long each step lasts at least (it also needs `bounds.min_calls` candidate calls). */
  step_minutes: z.number().int().min(1).max(10_080).default(60),
  bounds: RolloutBoundsSchema,
  reason: z.string().max(500).optional(),
});
export type StartRollout = z.input<typeof StartRolloutSchema>;

export const RolloutActionSchema = z.enum(["start", "advance", "hold", "rollback", "complete", "stop"]);
export type RolloutAction = z.infer<typeof RolloutActionSchema>;

export const RolloutHistoryEntrySchema = z.object({
  at: z.string(),
  /** The candidate's percent after this entry. */
  percent: z.number(),
  action: RolloutActionSchema,
  reason: z.string(),
});
export type RolloutHistoryEntry = z.infer<typeof RolloutHistoryEntrySchema>;

export const RolloutStatusSchema = z.enum(["running", "completed", "rolled_back", "stopped"]);
export type RolloutStatus = z.infer<typeof RolloutStatusSchema>;

export const RolloutSchema = z.object({
  status: RolloutStatusSchema,
  /** Production when the rollout started: where a rollback or stop returns it. */
  from_version: z.number().int(),
  /** The candidate. */
  to_version: z.number().int(),
  steps: z.array(z.number().int()),
  /** Index into `steps` of the current step. */
  step_index: z.number().int(),
  /** The candidate's share of unpinned callers now (0 after a rollback or stop, 100 when completed). */
  percent: z.number().int(),
  step_minutes: z.number().int(),
  /** When the current step began (the database's clock): its calls are the ones judged. */
  step_started_at: z.string(),
  /** When the current step may advance (null once ended). */
  next_step_at: z.string().nullable(),
  bounds: RolloutBoundsSchema,
  history: z.array(RolloutHistoryEntrySchema),
});
export type Rollout = z.infer<typeof RolloutSchema>;

export const StopRolloutSchema = z.strictObject({ reason: z.string().max(500).optional() });
export type StopRollout = z.infer<typeof StopRolloutSchema>;
