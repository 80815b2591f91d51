import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  unique,
  uuid,
} from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { users } from "./auth.ts";
import { bigNumber, createdAt, generatedId, reference, timestamptz, updatedAt } from "./columns.ts";
import type { StoredAssertion, StoredAssertionResult } from "./evals.ts";

/** An app's online evaluation (docs/decisions/076): which live calls are judged, by what, up to what a day. */
export const onlineEvalSettings = pgTable(
  "online_eval_settings",
  {
    applicationId: uuid("application_id")
      .primaryKey()
      .references(() => applications.id, { onDelete: "cascade" }),
    enabled: boolean("enabled").notNull().default(false),
    samplePercent: doublePrecision("sample_percent").notNull(),
    assertions: jsonb("assertions").$type<StoredAssertion[]>().notNull().default([]),
    dailyCapCents: integer("daily_cap_cents").notNull(),
    updatedBy: uuid("updated_by").references(() => users.id, { onDelete: "set null" }),
    updatedAt: updatedAt(),
  },
  (t) => [
    check("online_eval_settings_sample", sql`${t.samplePercent} >= 0.1 AND ${t.samplePercent} <= 100`),
    check("online_eval_settings_cap", sql`${t.dailyCapCents} >= 0 AND ${t.dailyCapCents} <= 100000`),
  ],
);

export type OnlineEvalStatus = "pending" | "running" | "done" | "skipped_cap" | "skipped_funds" | "failed";

/** One sampled customer call and its verdict. */
export const onlineEvalResults = pgTable(
  "online_eval_results",
  {
    id: generatedId(),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    invocationId: uuid("invocation_id").notNull(),
    version: integer("version").notNull(),
    experimentId: uuid("experiment_id"),
    status: text("status").$type<OnlineEvalStatus>().notNull().default("pending"),
    passed: boolean("passed"),
    /** The share of assertions passed (0..1); null when only pass/fail is known (none judged). */
    score: doublePrecision("score"),
    assertionResults: jsonb("assertion_results").$type<StoredAssertionResult[]>().notNull().default([]),
    /** The call's answer, kept cut as eval results keep theirs. */
    output: text("output").notNull().default(""),
    /** What the judge reads with the answer; emptied once the row is judged. */
    inputs: jsonb("inputs").$type<Record<string, unknown>>().notNull().default({}),
    query: text("query"),
    model: text("model").notNull(),
    latencyMs: integer("latency_ms").notNull().default(0),
    callCostMicros: bigNumber("call_cost_micros").notNull().default(0),
    /** What judging it cost the creator's wallet (rubric judges: their model cost). */
    costMicros: bigNumber("cost_micros").notNull().default(0),
    /** The UTC day whose cap its judge calls were counted against. */
    capDay: date("cap_day", { mode: "string" }),
    /** The judge calls' invocation ids (= their model cost holds' ids), written before each is made. */
    judgeInvocationIds: uuid("judge_invocation_ids").array().notNull().default(sql`'{}'`),
    error: text("error"),
    claimedAt: timestamptz("claimed_at"),
    createdAt: createdAt(),
    doneAt: timestamptz("done_at"),
  },
  (t) => [
    unique("online_eval_results_invocation_key").on(t.invocationId),
    index("online_eval_results_app_idx").on(t.applicationId, t.createdAt.desc()),
    index("online_eval_results_open_idx").on(t.createdAt).where(sql`${t.status} IN ('pending', 'running')`),
    check(
      "online_eval_results_status",
      sql`${t.status} IN ('pending', 'running', 'done', 'skipped_cap', 'skipped_funds', 'failed')`,
    ),
    check("online_eval_results_score", sql`${t.score} IS NULL OR (${t.score} >= 0 AND ${t.score} <= 1)`),
    check("online_eval_results_cost", sql`${t.costMicros} >= 0`),
  ],
);

/** What an app's online evals took on one UTC day: in flight (worst cases) and spent (actual). */
export const onlineEvalDays = pgTable(
  "online_eval_days",
  {
    applicationId: reference("application_id", () => applications.id, "cascade"),
    day: date("day", { mode: "string" }).notNull(),
    reservedMicros: bigNumber("reserved_micros").notNull().default(0),
    spentMicros: bigNumber("spent_micros").notNull().default(0),
    /** The highest daily cap any reservation of the day was judged against (reconcile's bound). */
    capMicros: bigNumber("cap_micros").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.applicationId, t.day] }),
    check("online_eval_days_nonnegative", sql`${t.reservedMicros} >= 0 AND ${t.spentMicros} >= 0`),
  ],
);
