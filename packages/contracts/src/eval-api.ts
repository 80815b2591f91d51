import { z } from "zod";
import { EvalRunSchema } from "./evals.ts";
import { UuidSchema } from "./ids.ts";
import { LabelNameSchema, VersionNumberSchema } from "./prompts.ts";

/**
 * A live call saved as an eval case, and evals run from a creator's CI (docs/decisions/078).
 */

/** `POST {base}/evals/cases/from-call`: one customer call of the app, by its invocation id. */
export const SaveCallAsCaseSchema = z.strictObject({
  invocation_id: UuidSchema,
});
export type SaveCallAsCase = z.infer<typeof SaveCallAsCaseSchema>;

/**
 * Which version a CI run evaluates: a number (7), a pin (`v7`), or a label (`production`,
 * `staging`, a creator's own), resolved when the run starts.
 */
export const EvalVersionRefSchema = z.union([
  VersionNumberSchema,
  z.string().regex(/^v[1-9][0-9]{0,9}$/, "must be a version (7 or v7) or a label"),
  LabelNameSchema,
]);

/** `POST /api/v1/apps/{slug}/evals/runs`, with an API key of the app's owner. */
export const StartAppEvalRunSchema = z.strictObject({
  version: EvalVersionRefSchema,
  /** Runs answer when done (decision 059); `false` is refused rather than ignored. */
  wait: z.literal(true, { message: "must be true: a run answers when every case is done" }).optional(),
  judge_model: z.string().max(100).optional(),
  /** As the web's run: required, at least the estimate, when the estimate is large (409 naming it). */
  confirm_cost_micros: z.number().int().min(0).max(1e12).optional(),
});
export type StartAppEvalRun = z.infer<typeof StartAppEvalRunSchema>;

export const AppEvalRunSchema = z.object({
  app: z.object({ slug: z.string(), name: z.string() }),
  /** The version the run evaluated, and the label it was asked by (null when asked by number). */
  version: z.number().int(),
  label: z.string().nullable(),
  /** Every case passed (the CLI's exit 0). */
  passed: z.boolean(),
  /** The cases' model cost plus the judge's, in micro-dollars, paid from the owner's wallet. */
  total_cost_micros: z.number().int(),
  /** The run on the app's Evals page. */
  url: z.string(),
  run: EvalRunSchema,
});
export type AppEvalRun = z.infer<typeof AppEvalRunSchema>;
