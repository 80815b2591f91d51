import { z } from "zod";
import { VersionNumberSchema } from "./prompts.ts";

/**
 * Evals before publishing (issue 31 part 3, docs/decisions/059): test cases per prompt app, runs
 * of every case against one version on its model, a comparison of two runs case by case, and the
 * margin a run estimates before a single paying call.
 */

/** The most cases an app may have: a run runs every case, two at a time, while its request waits. */
export const MAX_EVAL_CASES = 50;
export const MAX_EVAL_ASSERTIONS = 20;

const text = (max: number) =>
  z.string().min(1, "must not be empty").max(max, `must be at most ${max} characters`);

export const EvalAssertionSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("contains"),
    value: text(1000),
    case_insensitive: z.boolean().optional(),
  }),
  z.strictObject({
    kind: z.literal("not_contains"),
    value: text(1000),
    case_insensitive: z.boolean().optional(),
  }),
  /** RE2 (linear time), as input-schema patterns: one RE2 cannot run is a 400 naming it. */
  z.strictObject({ kind: z.literal("regex"), pattern: text(500) }),
  /** The answer is a JSON object valid against the version's output schema. */
  z.strictObject({ kind: z.literal("output_schema") }),
  z.strictObject({ kind: z.literal("max_cost"), max_cost_micros: z.number().int().min(0).max(1e12) }),
  z.strictObject({ kind: z.literal("max_latency"), max_latency_ms: z.number().int().min(1).max(600_000) }),
  /** Judged by the run's judge model, which answers JSON {pass, reason}. */
  z.strictObject({ kind: z.literal("rubric"), rubric: text(2000) }),
]);
export type EvalAssertion = z.infer<typeof EvalAssertionSchema>;
export type EvalAssertionKind = EvalAssertion["kind"];

export const EvalCaseInputSchema = z.strictObject({
  name: text(200),
  inputs: z.record(z.string(), z.unknown()).default({}),
  /** The chat query (or a `query` input), when the app takes one. */
  query: z.string().max(20_000).nullable().optional(),
  assertions: z.array(EvalAssertionSchema).max(MAX_EVAL_ASSERTIONS, `must be at most ${MAX_EVAL_ASSERTIONS}`),
});
export type EvalCaseInput = z.infer<typeof EvalCaseInputSchema>;
/** A change of a case: each field left out keeps its value. */
export const UpdateEvalCaseSchema = z.strictObject({
  name: EvalCaseInputSchema.shape.name.optional(),
  inputs: z.record(z.string(), z.unknown()).optional(),
  query: EvalCaseInputSchema.shape.query,
  assertions: EvalCaseInputSchema.shape.assertions.optional(),
  position: z.number().int().min(0).max(10_000).optional(),
});
export type UpdateEvalCase = z.infer<typeof UpdateEvalCaseSchema>;

export const EvalCaseSchema = z.object({
  id: z.string(),
  name: z.string(),
  inputs: z.record(z.string(), z.unknown()),
  query: z.string().nullable(),
  assertions: z.array(EvalAssertionSchema),
  position: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EvalCase = z.infer<typeof EvalCaseSchema>;

export const EvalCaseListSchema = z.object({
  cases: z.array(EvalCaseSchema),
  require_passing_eval: z.boolean(),
  max_cases: z.number().int(),
});
export type EvalCaseList = z.infer<typeof EvalCaseListSchema>;

export const EvalSettingsSchema = z.strictObject({ require_passing_eval: z.boolean() });
export type EvalSettings = z.infer<typeof EvalSettingsSchema>;

export const StartEvalRunSchema = z.strictObject({
  version: VersionNumberSchema,
  /** Judges the rubric assertions: any known model id (the version's own model when left out). */
  judge_model: z.string().max(100).optional(),
  /**
   * The most the owner agrees the run may cost, in micro-dollars (docs/decisions/062): required,
   * at least the estimate, when the estimate is above one dollar or above the wallet (409 otherwise).
   */
  confirm_cost_micros: z.number().int().min(0).max(1e12).optional(),
});
export type StartEvalRun = z.infer<typeof StartEvalRunSchema>;

/** What a run of the version may cost before it starts (docs/decisions/062): every call at its worst case. */
export const EvalEstimateQuerySchema = z.object({
  version: z.coerce.number().pipe(VersionNumberSchema),
  judge_model: z.string().max(100).optional(),
});
export const EvalEstimateSchema = z.object({
  /** Every case call and judge call at its worst case, paid from the owner's wallet as they run. */
  estimate_micros: z.number().int(),
  /** The dearest single call: a wallet below it is refused (402) before the run starts. */
  largest_call_micros: z.number().int(),
  calls: z.number().int(),
  judge_calls: z.number().int(),
  balance_micros: z.number().int(),
  confirm_above_micros: z.number().int(),
  /** The run starts only with `confirm_cost_micros` of at least `estimate_micros`. */
  needs_confirmation: z.boolean(),
  max_concurrent_runs: z.number().int(),
});
export type EvalEstimate = z.infer<typeof EvalEstimateSchema>;

export const EvalRunStatusSchema = z.enum(["queued", "running", "passed", "failed", "error"]);
export type EvalRunStatus = z.infer<typeof EvalRunStatusSchema>;

export const EvalAssertionResultSchema = z.object({
  kind: z.string(),
  passed: z.boolean(),
  detail: z.string(),
});
export type EvalAssertionResult = z.infer<typeof EvalAssertionResultSchema>;

export const EvalResultSchema = z.object({
  case_id: z.string().nullable(),
  case_name: z.string(),
  passed: z.boolean(),
  output: z.string().nullable(),
  assertion_results: z.array(EvalAssertionResultSchema),
  /** The model cost of the case's call (what a paying call of it would cost the creator). */
  cost_micros: z.number().int(),
  /** The judge's model cost for the rubric assertions (not part of the app's cost per call). */
  judge_cost_micros: z.number().int(),
  latency_ms: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  error: z.string().nullable(),
});
export type EvalResult = z.infer<typeof EvalResultSchema>;

export const EvalRunSchema = z.object({
  id: z.string(),
  prompt_id: z.string(),
  version: z.number().int(),
  status: EvalRunStatusSchema,
  judge_model: z.string().nullable(),
  started_by_name: z.string().nullable(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  cases: z.number().int(),
  passed: z.number().int(),
  /** Model cost per call over the run's answered cases: median and 95th percentile (nearest rank). */
  cost_median_micros: z.number().int().nullable(),
  cost_p95_micros: z.number().int().nullable(),
  latency_p50_ms: z.number().int().nullable(),
  latency_p95_ms: z.number().int().nullable(),
  /** The app's price per call when the run started, and the platform's fee then. */
  price_micros: z.number().int().nullable(),
  fee_percent: z.number().nullable(),
  fee_micros: z.number().int().nullable(),
  /** Price minus fee minus cost per call: at the median cost, and at the 95th percentile cost. */
  margin_median_micros: z.number().int().nullable(),
  margin_p95_micros: z.number().int().nullable(),
  judge_cost_micros: z.number().int(),
  error: z.string().nullable(),
  results: z.array(EvalResultSchema).optional(),
});
export type EvalRun = z.infer<typeof EvalRunSchema>;

export const EvalRunListSchema = z.object({ runs: z.array(EvalRunSchema) });
export type EvalRunList = z.infer<typeof EvalRunListSchema>;

export const EvalRunQuerySchema = z.object({
  version: z.coerce.number().pipe(VersionNumberSchema).optional(),
});
export const EvalCompareQuerySchema = z.object({ a: z.string().max(100), b: z.string().max(100) });

/** How a case changed from run a to run b. */
export const EvalChangeSchema = z.enum([
  "fixed",
  "broke",
  "still_passing",
  "still_failing",
  "only_a",
  "only_b",
]);
export type EvalChange = z.infer<typeof EvalChangeSchema>;

export const EvalComparisonSchema = z.object({
  a: EvalRunSchema,
  b: EvalRunSchema,
  cases: z.array(
    z.object({
      case_id: z.string().nullable(),
      case_name: z.string(),
      a: EvalResultSchema.nullable(),
      b: EvalResultSchema.nullable(),
      change: EvalChangeSchema,
    }),
  ),
});
export type EvalComparison = z.infer<typeof EvalComparisonSchema>;
