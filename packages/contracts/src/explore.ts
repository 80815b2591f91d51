import { z } from "zod";
import { AppTypeSchema, InteractionModeSchema, MAX_PRICE_CENTS } from "./applications.ts";
import { PackageSchema } from "./billing.ts";
import { MaxPriceCentsSchema } from "./gateway.ts";
import { IoSchemaSchema } from "./prompts.ts";
import { RatingSummarySchema } from "./reviews.ts";

export const EXPLORE_PAGE_SIZE = 24;

const priceBound = z.coerce
  .number({ error: "must be a whole number of cents" })
  .int("must be a whole number of cents")
  .min(0, "must be at least 0")
  .max(MAX_PRICE_CENTS, `must be at most ${MAX_PRICE_CENTS}`);

/** Explore's orders: price is the lowest price per call first; newest the latest published first. */
export const EXPLORE_SORTS = ["recommended", "top_rated", "most_used", "newest", "price"] as const;
export type ExploreSort = (typeof EXPLORE_SORTS)[number];

/** Below this many calls in 30 days an app's health figures are not shown ("Not enough calls yet"). */
export const HEALTH_MIN_CALLS = 10;

/**
 * An app's measured health over the last 30 UTC days (today included) from its real calls, eval
 * traffic left out (docs/decisions/081). The figures are null below HEALTH_MIN_CALLS calls.
 * `uptime`: the share of calls not failed by the app, its upstream or the platform (a caller's
 * payment or departure is not the app's failure); `error_rate`: the share of calls that failed for
 * any reason; `median_latency_ms`: of the answered calls, within 1% (three significant digits).
 */
export const AppHealthSchema = z.object({
  calls_30d: z.number().int(),
  enough_calls: z.boolean(),
  uptime: z.number().nullable(),
  error_rate: z.number().nullable(),
  median_latency_ms: z.number().int().nullable(),
});
export type AppHealth = z.infer<typeof AppHealthSchema>;

/** `GET /explore/apps`: search and filters of the public catalogue. Unknown parameters are refused. */
export const ExploreQuerySchema = z.strictObject({
  q: z.string().trim().max(100, "must be at most 100 characters").optional(),
  type: AppTypeSchema.optional(),
  mode: InteractionModeSchema.optional(),
  min_price_cents: priceBound.optional(),
  max_price_cents: priceBound.optional(),
  /** The order (docs/decisions/081): `recommended` mixes usage, rating and freshness. */
  sort: z.enum(EXPLORE_SORTS, { error: `must be one of ${EXPLORE_SORTS.join(", ")}` }).default("recommended"),
  page: z.coerce
    .number({ error: "must be a whole number" })
    .int("must be a whole number")
    .min(1, "must be at least 1")
    .max(10_000, "must be at most 10000")
    .default(1),
});
export type ExploreQuery = z.input<typeof ExploreQuerySchema>;

/** A live public or embeddable app as anyone may see it: no owner id, no provider settings. */
export const ExploreAppSchema = z.object({
  name: z.string(),
  slug: z.string(),
  description: z.string(),
  type: AppTypeSchema,
  interaction_mode: InteractionModeSchema,
  price_cents: z.number().int(),
  /** An announced increase: the price per call from `pending_price_at` on (null when none). */
  pending_price_cents: z.number().int().nullable(),
  pending_price_at: z.string().nullable(),
  creator_name: z.string(),
  updated_at: z.string(),
  /** The app takes OpenAI-style tools (function calling) and can take part in an agent's tool loop. */
  accepts_tools: z.boolean(),
  rating: RatingSummarySchema,
  health: AppHealthSchema,
});
export type ExploreApp = z.infer<typeof ExploreAppSchema>;

export const ExploreAppListSchema = z.object({
  data: z.array(ExploreAppSchema),
  page: z.number().int(),
  page_size: z.number().int(),
  total: z.number().int(),
  has_more: z.boolean(),
});
export type ExploreAppList = z.infer<typeof ExploreAppListSchema>;

export const ExploreAppDetailSchema = ExploreAppSchema.extend({
  /** The inputs a call sends (`inputs`); workflow apps declare none and take a `query`. */
  input_schema: IoSchemaSchema,
  /** Whether a call needs `query` (chat apps and workflows) besides the inputs. */
  takes_query: z.boolean(),
  /** The app's plans that can be subscribed to now. */
  plans: z.array(PackageSchema),
  /**
   * The most input tokens one call may carry at the current price, the app's own prompt included,
   * counted as one token per UTF-8 byte of what the caller sends (docs/decisions/063); a larger
   * call is refused with 413 `input_too_large` and costs nothing. Null: no limit (the app runs on
   * its creator's model keys, or is a workflow).
   */
  max_input_tokens: z.number().int().nullable(),
  /**
   * The free calls each new consumer may try, paid by the creator (docs/decisions/080); 0 or
   * absent: no trial. Whether the signed-in caller used it: `GET /api/app/{slug}/trial/`.
   */
  trial_calls: z.number().int().optional(),
});
export type ExploreAppDetail = z.infer<typeof ExploreAppDetailSchema>;

/** `POST /explore/apps/{slug}/try`: one blocking call as the signed-in user, charged like any call. */
export const TryAppRequestSchema = z.strictObject({
  inputs: z.record(z.string(), z.unknown()).default({}),
  query: z.string().max(100_000).optional(),
  /** The most this call may cost (the page sends the price it showed). */
  max_price_cents: MaxPriceCentsSchema.optional(),
});
export type TryAppRequest = z.input<typeof TryAppRequestSchema>;
