import { z } from "zod";
import { VersionNumberSchema } from "./prompts.ts";
import { RolloutSchema } from "./rollouts.ts";

/**
 * Experiments (docs/decisions/058): an app's production traffic split between versions by
 * percent, sticky per caller, each arm judged by calls, success, latency, tokens, model cost,
 * revenue and the creator's margin, with significance tests that say when a difference is more
 * than noise. A prompt app's arms are prompt versions; a workflow app's are versions of its
 * provider configuration (two Dify, n8n, Flowise or webhook apps, say), whose calls have no model
 * cost from us. Money is integer micro-dollars.
 */

export const ExperimentArmSchema = z.strictObject({
  version: VersionNumberSchema,
  percent: z.number().int().min(1).max(99),
});
export type ExperimentArm = z.infer<typeof ExperimentArmSchema>;

export const StickyBySchema = z.enum(["end_user", "key", "account"]);
export type StickyBy = z.infer<typeof StickyBySchema>;

export const ExperimentRulesSchema = z.strictObject({
  /** An arm whose error rate (0–1) is above this after `min_calls` calls rolls the experiment back. */
  max_error_rate: z.number().min(0).max(1).optional(),
  /** An arm whose creator margin per call (micro-dollars) is below this after `min_calls` rolls back. */
  min_margin_micros: z.number().int().min(-100_000_000).max(100_000_000).optional(),
  /** Calls each arm needs before a rule may judge it, and before a significance test is shown. */
  min_calls: z.number().int().min(10).max(1_000_000).default(100),
  /** Each arm's calls after which a significant winner is promoted to production. */
  promote_winner_after_calls: z.number().int().min(10).max(10_000_000).optional(),
});
export type ExperimentRules = z.infer<typeof ExperimentRulesSchema>;

export const StartExperimentSchema = z.strictObject({
  arms: z.array(ExperimentArmSchema).min(2).max(5),
  /** Whom one caller is: null (the default) is the end user, else the key, else the account. */
  sticky_by: StickyBySchema.nullable().optional(),
  rules: ExperimentRulesSchema.default({ min_calls: 100 }),
});
export type StartExperiment = z.input<typeof StartExperimentSchema>;

export const ExperimentOutcomeSchema = z.enum(["rolled_back", "promoted", "stopped"]);
export type ExperimentOutcome = z.infer<typeof ExperimentOutcomeSchema>;

export const ExperimentSchema = z.object({
  id: z.string(),
  /** Whose versions the arms are: a prompt app's prompt, or a workflow app's provider configuration. */
  app_kind: z.enum(["prompt", "workflow"]),
  /** The prompt (a prompt app's experiment), else null. */
  prompt_id: z.string().nullable(),
  /** The workflow (a workflow app's experiment), else null. */
  workflow_id: z.string().nullable(),
  status: z.enum(["running", "ended"]),
  arms: z.array(ExperimentArmSchema),
  sticky_by: StickyBySchema.nullable(),
  rules: ExperimentRulesSchema,
  /** Where `production` pointed when it started: where a rollback returns it. */
  control_version: z.number().int(),
  started_by_name: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  outcome: ExperimentOutcomeSchema.nullable(),
  winner_version: z.number().int().nullable(),
  end_reason: z.string(),
  /** A guarded rollout's schedule and state (docs/decisions/077), null for a plain experiment. */
  rollout: RolloutSchema.nullable(),
});
export type Experiment = z.infer<typeof ExperimentSchema>;

export const ArmStatsSchema = z.object({
  version: z.number().int(),
  percent: z.number().int(),
  calls: z.number().int(),
  successes: z.number().int(),
  errors: z.number().int(),
  success_rate: z.number().nullable(),
  latency_p50_ms: z.number().nullable(),
  latency_p95_ms: z.number().nullable(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  /** What the model vendor cost (all of it is the creator's: from the call's share or earnings). */
  model_cost_micros: z.number().int(),
  /** Gross: what callers were charged. */
  revenue_micros: z.number().int(),
  fee_micros: z.number().int(),
  /** revenue − fee − model cost: what the creator keeps. */
  margin_micros: z.number().int(),
  margin_per_call_micros: z.number().nullable(),
  /** Failed calls, whose price was given back (never charged): Promptmint's refund per call. */
  refunded_calls: z.number().int(),
  /** Online evals (docs/decisions/076): the arm's mean score over its judged calls, null with none. */
  online_score: z.number().nullable().optional(),
  online_scored_calls: z.number().int().optional(),
});
export type ArmStats = z.infer<typeof ArmStatsSchema>;

const TestSchema = z.object({
  /** Arm minus control. */
  difference: z.number(),
  statistic: z.number(),
  p_value: z.number(),
  /** 95% confidence interval of the difference. */
  ci95: z.tuple([z.number(), z.number()]),
});

export const ArmComparisonSchema = z.object({
  version: z.number().int(),
  control_version: z.number().int(),
  /** False below `min_calls` on either arm: no test is shown then. */
  enough_calls: z.boolean(),
  /** Two-proportion z-test of the success rates. */
  success_rate: TestSchema.nullable(),
  /** Welch's t-test of the creator margin per call (micro-dollars). */
  margin_per_call: TestSchema.extend({ df: z.number() }).nullable(),
  /** "better", "worse" (p < 0.05 on margin, else on success) or "no_difference_yet" / "not_enough_calls". */
  verdict: z.enum(["better", "worse", "no_difference_yet", "not_enough_calls"]),
});
export type ArmComparison = z.infer<typeof ArmComparisonSchema>;

export const ArmSeriesPointSchema = z.object({
  at: z.string(),
  version: z.number().int(),
  calls: z.number().int(),
  success_rate: z.number().nullable(),
  latency_p50_ms: z.number().nullable(),
  revenue_micros: z.number().int(),
  model_cost_micros: z.number().int(),
  margin_micros: z.number().int(),
});
export type ArmSeriesPoint = z.infer<typeof ArmSeriesPointSchema>;

export const ExperimentDetailSchema = z.object({
  experiment: ExperimentSchema,
  arms: z.array(ArmStatsSchema),
  comparisons: z.array(ArmComparisonSchema),
  /** Per arm per time bucket (`bucket_seconds` wide), oldest first. */
  series: z.array(ArmSeriesPointSchema),
  bucket_seconds: z.number().int(),
  /**
   * Set when model cost is not part of the figures: a workflow app's calls have none from us (the
   * provider bills the creator directly), so its arms' margin is revenue less the platform fee.
   */
  model_cost_note: z.string().nullable(),
});
export type ExperimentDetail = z.infer<typeof ExperimentDetailSchema>;

export const ExperimentListSchema = z.object({
  running: ExperimentSchema.nullable(),
  experiments: z.array(ExperimentSchema),
});
export type ExperimentList = z.infer<typeof ExperimentListSchema>;

export const PromoteArmSchema = z.strictObject({
  version: VersionNumberSchema,
  reason: z.string().max(500).optional(),
});
export type PromoteArm = z.infer<typeof PromoteArmSchema>;

export const EndExperimentSchema = z.strictObject({ reason: z.string().max(500).optional() });
export type EndExperiment = z.infer<typeof EndExperimentSchema>;
