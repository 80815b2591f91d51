import { z } from "zod";
import { EvalAssertionSchema } from "./evals.ts";

/**
 * Online evaluation of live calls (docs/decisions/076): a share of an app's customer calls is
 * judged by the app's assertions after it is answered; a rubric's judge is paid from the creator's
 * wallet, at most `daily_cap_cents` a UTC day.
 */

export const MAX_ONLINE_EVAL_ASSERTIONS = 10;

export const OnlineEvalSettingsSchema = z.strictObject({
  enabled: z.boolean(),
  /** The share of customer calls judged, in percent (0.1 to 100). */
  sample_percent: z.number().min(0.1, "must be at least 0.1").max(100, "must be at most 100"),
  assertions: z
    .array(EvalAssertionSchema)
    .min(1, "must have at least 1 assertion")
    .max(MAX_ONLINE_EVAL_ASSERTIONS, `must be at most ${MAX_ONLINE_EVAL_ASSERTIONS}`),
  /** The most rubric judges may cost the creator's wallet a UTC day, in cents. */
  daily_cap_cents: z.number().int().min(0).max(100_000),
});
export type OnlineEvalSettings = z.infer<typeof OnlineEvalSettingsSchema>;

export const OnlineEvalVersionSummarySchema = z.object({
  version: z.number().int(),
  experiment_id: z.string().nullable(),
  scored_calls: z.number().int(),
  passed_calls: z.number().int(),
  pass_rate: z.number().nullable(),
  mean_score: z.number().nullable(),
  eval_cost_micros: z.number().int(),
  revenue_micros: z.number().int(),
  margin_micros: z.number().int(),
});
export type OnlineEvalVersionSummary = z.infer<typeof OnlineEvalVersionSummarySchema>;

export const OnlineEvalRecentSchema = z.object({
  invocation_id: z.string(),
  version: z.number().int(),
  passed: z.boolean(),
  score: z.number().nullable(),
  created_at: z.string(),
});
export type OnlineEvalRecent = z.infer<typeof OnlineEvalRecentSchema>;

export const OnlineEvalSummarySchema = z.object({
  settings: OnlineEvalSettingsSchema.nullable(),
  spent_today_micros: z.number().int(),
  cap_reached: z.boolean(),
  versions: z.array(OnlineEvalVersionSummarySchema),
  recent: z.array(OnlineEvalRecentSchema),
});
export type OnlineEvalSummary = z.infer<typeof OnlineEvalSummarySchema>;
