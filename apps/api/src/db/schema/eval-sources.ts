import { index, pgTable, uuid } from "drizzle-orm/pg-core";
import { applications } from "./applications.ts";
import { createdAt, reference } from "./columns.ts";
import { evalCases } from "./evals.ts";

/**
 * The live call an eval case was saved from (docs/decisions/078, migration 0057): one case per
 * call while the case exists. No foreign key to `invocations` (partitioned, dropped by day).
 */
export const evalCaseSources = pgTable(
  "eval_case_sources",
  {
    invocationId: uuid("invocation_id").primaryKey(),
    caseId: reference("case_id", () => evalCases.id, "cascade"),
    applicationId: reference("application_id", () => applications.id, "cascade"),
    createdAt: createdAt(),
  },
  (t) => [index("eval_case_sources_case_idx").on(t.caseId)],
);
