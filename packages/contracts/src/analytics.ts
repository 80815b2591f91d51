import { z } from "zod";

export const ANALYTICS_WINDOWS = [7, 30, 90] as const;
export const AnalyticsDaysQuerySchema = z.strictObject({
  days: z.coerce
    .number()
    .int()
    .refine((d) => (ANALYTICS_WINDOWS as readonly number[]).includes(d), "must be 7, 30 or 90")
    .default(30),
});

/**
 * A creator's money over a window, the same figures everywhere they are shown (dashboard, app
 * detail, analytics, wallet; docs/decisions/029), all from the daily rollups of successful calls:
 * `gross` what the calls were charged, `fee` the platform's fee of it, `model_cost` what the calls
 * cost at the model vendor (platform keys), `net` = gross − fee − model cost. Micro-dollars.
 */
export const MoneyFiguresSchema = z.object({
  period_days: z.number().int(),
  /** The window as people read it: "Last 30 days" (UTC days, today included). */
  period: z.string(),
  gross_micros: z.number().int(),
  fee_micros: z.number().int(),
  model_cost_micros: z.number().int(),
  net_micros: z.number().int(),
});
export type MoneyFigures = z.infer<typeof MoneyFiguresSchema>;

/**
 * One prompt version's figures over a window (issue 31 part 4), from the per-version daily rollups:
 * the calls it answered, their success rate and mean response time (seconds), tokens, and the
 * money figures of decision 029 (micro-dollars): gross, the platform's fee, the model cost and the
 * creator's margin (`net_micros` = gross − fee − model cost). `version` null gathers the calls that
 * name no version (workflow apps, calls from before versions): the rows of a breakdown always add
 * up exactly to the app's (or the creator's) totals. Refunds are not broken down by version:
 * refunds and disputes are of card payments (top-ups, plan payments), never of single calls.
 */
export const VersionFiguresSchema = z.object({
  version: z.number().int().nullable(),
  /** This version holds the `production` label now (what callers get by default). */
  production: z.boolean(),
  invocations: z.number().int(),
  success_count: z.number().int(),
  error_count: z.number().int(),
  success_rate: z.number().describe("Percent (0–100)"),
  avg_response_time: z.number().describe("Seconds"),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  gross_micros: z.number().int(),
  fee_micros: z.number().int(),
  model_cost_micros: z.number().int(),
  /** Of the model cost, what the creator's share paid when the calls were charged. */
  model_cost_deducted_micros: z.number().int().nullable(),
  net_micros: z.number().int(),
});
export type VersionFigures = z.infer<typeof VersionFiguresSchema>;

/**
 * The creator's figures over the window broken down by app and version: `figures` are exactly
 * `GET /analytics/figures/` (the statement's totals), and each app's versions add up to its share.
 */
export const OwnerVersionFiguresSchema = z.object({
  figures: MoneyFiguresSchema,
  applications: z.array(
    z.object({
      application_name: z.string(),
      application_slug: z.string(),
      application_type: z.enum(["prompt", "workflow"]),
      production_version: z.number().int().nullable(),
      versions: z.array(VersionFiguresSchema),
    }),
  ),
});
export type OwnerVersionFigures = z.infer<typeof OwnerVersionFiguresSchema>;

/** SPEC §3 "Global dashboard response". Rates are percentages (0–100), times in seconds, days in UTC. */
export const GlobalDashboardSchema = z.object({
  overview: z.object({
    total_applications: z.number().int(),
    total_invocations: z.number().int(),
    total_users: z.number().int(),
    success_rate: z.number(),
  }),
  time_series: z.object({
    data: z.array(
      z.object({
        date: z.string().describe("YYYY-MM-DD (UTC)"),
        invocations: z.number().int(),
        success_count: z.number().int(),
        error_count: z.number().int(),
        avg_response_time: z.number(),
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
      }),
    ),
  }),
  applications: z.array(
    z.object({
      application_name: z.string(),
      application_slug: z.string(),
      application_type: z.enum(["prompt", "workflow"]),
      invocations: z.number().int(),
      success_rate: z.number(),
      avg_response_time: z.number(),
      last_used: z.string().describe("ISO date-time, or empty when never used"),
    }),
  ),
  errors: z.array(z.object({ error_type: z.string().nullable(), count: z.number().int() })),
});
export type GlobalDashboard = z.infer<typeof GlobalDashboardSchema>;

/** Usage of one app over the window: the dashboard's and detail page's totals plus SPEC's summary. */
export const AppUsageAnalyticsSchema = z.object({
  total_invocations: z.number().int(),
  total_revenue: z.number().describe("Dollars: the gross of `figures`"),
  figures: MoneyFiguresSchema,
  /** The version `production` points at now; null for workflow apps. */
  production_version: z.number().int().nullable(),
  /** The window's figures per version, newest version first, "no version" last; they add up to `figures`. */
  by_version: z.array(VersionFiguresSchema),
  summary: z.object({
    total_invocations: z.number().int(),
    total_users: z.number().int(),
    total_revenue: z.number(),
    series: z.array(z.object({ date: z.string(), invocations: z.number().int(), revenue: z.number() })),
  }),
});
export type AppUsageAnalytics = z.infer<typeof AppUsageAnalyticsSchema>;

export const AppPerformanceSchema = z.object({
  performance: z.object({
    success_rate: z.number(),
    average_response_time: z.number(),
    series: z.array(
      z.object({
        date: z.string(),
        success_count: z.number().int(),
        error_count: z.number().int(),
        response_time: z.number(),
      }),
    ),
  }),
});
export type AppPerformance = z.infer<typeof AppPerformanceSchema>;

export const RecentInvocationsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
export const RecentInvocationsSchema = z.object({
  recent_invocations: z.array(
    z.object({
      id: z.string(),
      end_user: z.string().nullable(),
      status: z.enum(["success", "error"]),
      response_time: z.number().describe("Seconds"),
      input_tokens: z.number().int(),
      output_tokens: z.number().int(),
      /** The prompt version that answered; null for workflow apps and calls from before versions. */
      version: z.number().int().nullable(),
      /**
       * Whether the call's inputs and answer were kept (a chat turn's message): only such a call
       * can be saved as an eval case (docs/decisions/078).
       */
      content_kept: z.boolean(),
      created_at: z.string(),
    }),
  ),
});
export type RecentInvocations = z.infer<typeof RecentInvocationsSchema>;
