import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  uuid,
} from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { users } from "./auth.ts";
import { bigNumber, createdAt, generatedId, reference, timestamptz, updatedAt } from "./columns.ts";

/** One assertion of an eval case, as stored (docs/decisions/059; contracts' EvalAssertion). */
export type StoredAssertion = Record<string, unknown> & { kind: string };
/** One assertion's verdict on one result. */
export interface StoredAssertionResult {
  kind: string;
  passed: boolean;
  detail: string;
}

/** A test case of an app (a prompt's or a workflow's): inputs (and chat query) with the assertions its answer must meet. */
export const evalCases = pgTable(
  "eval_cases",
  {
    id: generatedId(),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    name: text("name").notNull(),
    inputs: jsonb("inputs").$type<Record<string, unknown>>().notNull().default({}),
    query: text("query"),
    assertions: jsonb("assertions").$type<StoredAssertion[]>().notNull().default([]),
    position: integer("position").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index("eval_cases_app_idx").on(t.applicationId, t.position)],
);

/** A run of every case against one version, with its totals and the margin it estimates. */
export const evalRuns = pgTable(
  "eval_runs",
  {
    id: generatedId(),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    version: integer("version").notNull(),
    status: text("status", { enum: ["queued", "running", "passed", "failed", "error"] })
      .notNull()
      .default("queued"),
    judgeModel: text("judge_model"),
    startedBy: uuid("started_by").references(() => users.id, { onDelete: "set null" }),
    startedAt: timestamptz("started_at").notNull().defaultNow(),
    finishedAt: timestamptz("finished_at"),
    cases: integer("cases").notNull().default(0),
    passed: integer("passed").notNull().default(0),
    costMedianMicros: bigNumber("cost_median_micros"),
    costP95Micros: bigNumber("cost_p95_micros"),
    latencyP50Ms: integer("latency_p50_ms"),
    latencyP95Ms: integer("latency_p95_ms"),
    priceMicros: bigNumber("price_micros"),
    feePercent: doublePrecision("fee_percent"),
    marginMedianMicros: bigNumber("margin_median_micros"),
    marginP95Micros: bigNumber("margin_p95_micros"),
    error: text("error"),
  },
  (t) => [
    index("eval_runs_app_version_idx").on(t.applicationId, t.version, t.status),
    index("eval_runs_app_started_idx").on(t.applicationId, t.startedAt),
    check("eval_runs_status_check", sql`${t.status} in ('queued', 'running', 'passed', 'failed', 'error')`),
  ],
);

/** One case's result in a run. */
export const evalResults = pgTable(
  "eval_results",
  {
    id: generatedId(),
    runId: reference("run_id", () => evalRuns.id, "cascade"),
    caseId: uuid("case_id").references(() => evalCases.id, { onDelete: "set null" }),
    caseName: text("case_name").notNull(),
    position: integer("position").notNull().default(0),
    passed: boolean("passed").notNull(),
    output: text("output"),
    assertionResults: jsonb("assertion_results").$type<StoredAssertionResult[]>().notNull().default([]),
    costMicros: bigNumber("cost_micros").notNull().default(0),
    judgeCostMicros: bigNumber("judge_cost_micros").notNull().default(0),
    latencyMs: integer("latency_ms").notNull().default(0),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    invocationId: uuid("invocation_id"),
    error: text("error"),
    createdAt: createdAt(),
  },
  (t) => [index("eval_results_run_idx").on(t.runId, t.position)],
);
