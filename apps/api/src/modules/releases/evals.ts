import {
  type EvalAssertion,
  type EvalAssertionResult,
  type EvalCase,
  type EvalCaseInput,
  type EvalCaseList,
  type EvalChange,
  type EvalComparison,
  type EvalEstimate,
  type EvalResult,
  type EvalRun,
  type IoSchema,
  IoSchemaSchema,
  isUuid,
  MAX_EVAL_CASES,
  type StartEvalRun,
  type UpdateEvalCase,
} from "@promptmint/contracts";
import { and, asc, count, desc, eq, max } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import {
  type ApplicationRow,
  type AppVersionRow,
  applications,
  evalCases,
  evalResults,
  evalRuns,
  type StoredAssertion,
  users,
} from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import { validateAgainstSchema } from "../../lib/input-schema.ts";
import { compilePattern } from "../../lib/safe-pattern.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { centsToMicros, feeMicros } from "../billing/money.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import {
  type EstimatedCase,
  type EstimateRun,
  evalEstimate,
  refuseUnaffordableRun,
  startRunWithinLimit,
} from "./eval-costs.ts";
import { type ExperimentKind, ownSubject } from "./experiment-subjects.ts";
import { kindOfApp, type ReleaseKind, releaseKind } from "./release-kinds.ts";
import { findVersion, versionByNumber } from "./versions.ts";

/**
 * Evals before publishing (issue 31 part 3, docs/decisions/059): an app's test cases, runs of
 * every case against one version, and the comparison of two runs, for a prompt app and a workflow
 * app alike (decision 059, "Workflow apps"): what a run needs of a version's payload is its
 * kind's (release-kinds.ts), never read here. The calls themselves are the
 * gateway's (the owner's own calls, as Test Prompt's): a run is handed `callCase` and `judge`
 * by its route, so this module never imports the gateway (gateway → releases → prompts).
 */

type CaseRow = typeof evalCases.$inferSelect;
type RunRow = typeof evalRuns.$inferSelect;
type ResultRow = typeof evalResults.$inferSelect;

/** Cases of one run answered at once: small, so a run does not crowd the creator's own traffic. */
export const EVAL_CONCURRENCY = 2;
/** Outputs longer than this are kept cut (a case's answer is for reading, not for replay). */
const MAX_KEPT_OUTPUT = 20_000;

/** What the eval routes name an app by: its prompt's id or its workflow's id (decision 075). */
export interface EvalSubjectRef {
  kind: ExperimentKind;
  id: string;
}

/** The subject's app and its kind's side, if the user owns the app (404 naming the noun otherwise). */
export async function ownEvalSubject(
  db: Database,
  owner: LocalUser,
  subject: EvalSubjectRef,
): Promise<{ app: ApplicationRow; id: string; side: ReleaseKind }> {
  const { app, id } = await ownSubject(db, owner, subject.kind, subject.id);
  return { app, id, side: releaseKind(kindOfApp(app)) };
}

/** What a run needs of the version it judges: its number, its default judge and its output schema. */
function evalVersionOf(side: ReleaseKind, row: AppVersionRow) {
  return { version: row.version, model: side.judgeModelOf(row), outputSchema: side.outputSchemaOf(row) };
}

function toCase(row: CaseRow): EvalCase {
  return {
    id: row.id,
    name: row.name,
    inputs: row.inputs,
    query: row.query,
    assertions: row.assertions as EvalAssertion[],
    position: row.position,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export async function listCases(
  db: Database,
  owner: LocalUser,
  subject: EvalSubjectRef,
): Promise<EvalCaseList> {
  const { app, side } = await ownEvalSubject(db, owner, subject);
  const rows = await db
    .select()
    .from(evalCases)
    .where(eq(evalCases.applicationId, app.id))
    .orderBy(asc(evalCases.position), asc(evalCases.createdAt));
  return {
    cases: rows.map(toCase),
    require_passing_eval: await side.requiresPassingEval(db, app),
    max_cases: MAX_EVAL_CASES,
  };
}

/**
 * The latest version's input schema: what a case's inputs are checked against when saved; null
 * when the kind has none of ours (a workflow's provider checks its inputs).
 */
async function latestInputSchema(
  db: Database,
  side: ReleaseKind,
  applicationId: string,
): Promise<IoSchema | null> {
  const latest = await findVersion(db, applicationId, { label: "latest" });
  if (latest) return side.inputSchemaOf(latest);
  return side.kind === "prompt"
    ? IoSchemaSchema.parse({ type: "object", properties: {}, required: [] })
    : null;
}

/** Free-form inputs (no schema of ours): each a string, a number or a boolean, named when not. */
function freeFormProblems(inputs: Record<string, unknown>): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const [name, value] of Object.entries(inputs))
    if (!["string", "number", "boolean"].includes(typeof value) || Number.isNaN(value))
      problems[`inputs.${name}`] = "must be a string, a number or a boolean";
  return problems;
}

/**
 * A case's problems, keyed by field: inputs against the latest version's input schema (a query
 * offered to a schema that declares one counts as that input), or free-form ones checked for
 * their types, and each regex on RE2, as input schema patterns are (prompts/input-schema.ts):
 * one RE2 cannot run is named.
 */
async function caseProblems(
  db: Database,
  side: ReleaseKind,
  applicationId: string,
  input: Pick<EvalCaseInput, "inputs" | "query" | "assertions">,
): Promise<Record<string, string>> {
  const problems: Record<string, string> = {};
  input.assertions.forEach((assertion, i) => {
    if (assertion.kind !== "regex") return;
    const compiled = compilePattern(assertion.pattern);
    if (!compiled.ok) problems[`assertions.${i}.pattern`] = compiled.problem;
  });
  const schema = await latestInputSchema(db, side, applicationId);
  if (!schema) return Object.assign(problems, freeFormProblems(input.inputs));
  const offered = { ...input.inputs };
  if (input.query && "query" in schema.properties && offered.query === undefined) offered.query = input.query;
  Object.assign(problems, validateAgainstSchema(schema, offered, "inputs").problems);
  return problems;
}

export async function createCase(
  db: Database,
  owner: LocalUser,
  subject: EvalSubjectRef,
  input: EvalCaseInput,
): Promise<EvalCase> {
  const { app, side } = await ownEvalSubject(db, owner, subject);
  const problems = await caseProblems(db, side, app.id, input);
  if (Object.keys(problems).length > 0) throw invalidFields(problems);
  return db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    // Under the app's row lock, so concurrent creations count (and place) one after the other.
    await t
      .select({ id: applications.id })
      .from(applications)
      .where(eq(applications.id, app.id))
      .for("update");
    const [counted] = await t
      .select({ n: count(), last: max(evalCases.position) })
      .from(evalCases)
      .where(eq(evalCases.applicationId, app.id));
    if ((counted?.n ?? 0) >= MAX_EVAL_CASES)
      throw new AppError(
        "conflict",
        `An app has at most ${MAX_EVAL_CASES} eval cases (a run runs every one): delete one first`,
      );
    const [row] = await t
      .insert(evalCases)
      .values({
        applicationId: app.id,
        name: input.name,
        inputs: input.inputs,
        query: input.query ?? null,
        assertions: input.assertions as StoredAssertion[],
        position: (counted?.last ?? -1) + 1,
      })
      .returning();
    if (!row) throw new Error("eval case insert returned nothing");
    return toCase(row);
  });
}

async function ownCase(db: Database, applicationId: string, caseId: string): Promise<CaseRow> {
  const [row] = isUuid(caseId)
    ? await db
        .select()
        .from(evalCases)
        .where(and(eq(evalCases.id, caseId), eq(evalCases.applicationId, applicationId)))
    : [];
  if (!row) throw notFound("Eval case");
  return row;
}

export async function updateCase(
  db: Database,
  owner: LocalUser,
  subject: EvalSubjectRef,
  caseId: string,
  input: UpdateEvalCase,
): Promise<EvalCase> {
  const { app, side } = await ownEvalSubject(db, owner, subject);
  const current = await ownCase(db, app.id, caseId);
  const next = {
    inputs: input.inputs ?? current.inputs,
    query: input.query !== undefined ? input.query : current.query,
    assertions: input.assertions ?? (current.assertions as EvalAssertion[]),
  };
  const problems = await caseProblems(db, side, app.id, next);
  if (Object.keys(problems).length > 0) throw invalidFields(problems);
  const [row] = await db
    .update(evalCases)
    .set({
      name: input.name ?? current.name,
      inputs: next.inputs,
      query: next.query ?? null,
      assertions: next.assertions as StoredAssertion[],
      position: input.position ?? current.position,
      updatedAt: new Date(),
    })
    .where(eq(evalCases.id, current.id))
    .returning();
  if (!row) throw notFound("Eval case");
  return toCase(row);
}

export async function deleteCase(
  db: Database,
  owner: LocalUser,
  subject: EvalSubjectRef,
  caseId: string,
): Promise<void> {
  const { app } = await ownEvalSubject(db, owner, subject);
  const current = await ownCase(db, app.id, caseId);
  await db.delete(evalCases).where(eq(evalCases.id, current.id));
}

export async function setRequirePassingEval(
  db: Database,
  owner: LocalUser,
  subject: EvalSubjectRef,
  required: boolean,
): Promise<EvalCaseList> {
  const { app, side } = await ownEvalSubject(db, owner, subject);
  await side.setRequirePassingEval(db, app, required);
  return listCases(db, owner, subject);
}

// ---------------------------------------------------------------------------------------------
// Runs

/** One case's call on the version, as the gateway answered it (the owner's own call). */
export interface CaseCallResult {
  output: string | null;
  error: string | null;
  costMicros: number;
  latencyMs: number;
  inputTokens: number;
  outputTokens: number;
  invocationId: string | null;
}

/** Runs one case on the run's version (the route wires the gateway's paid path in). */
export type CallCase = (input: {
  inputs: Record<string, unknown>;
  query: string | null;
}) => Promise<CaseCallResult>;

/** The judge's verdict on a rubric: the model answers JSON {pass, reason}. */
export interface JudgeVerdict {
  pass: boolean;
  reason: string;
  costMicros: number;
}
export type Judge = (input: {
  rubric: string;
  inputs: Record<string, unknown>;
  query: string | null;
  output: string;
}) => Promise<JudgeVerdict>;

/** The value at the nearest rank of the `p`th percentile of sorted integers (exact: no interpolation). */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] ?? null;
}

/** Judges one answer by the case's assertions, the rubric ones by `judge`. */
export async function judgeCase(
  assertions: readonly EvalAssertion[],
  call: CaseCallResult,
  context: {
    outputSchema: IoSchema | null;
    inputs: Record<string, unknown>;
    query: string | null;
    judge: Judge | null;
  },
): Promise<{ results: EvalAssertionResult[]; judgeCostMicros: number }> {
  const results: EvalAssertionResult[] = [];
  let judgeCostMicros = 0;
  const output = call.output;
  for (const assertion of assertions) {
    const verdict = (passed: boolean, detail: string) =>
      results.push({ kind: assertion.kind, passed, detail });
    // Cost and latency are judged on a failed call too; the others need an answer.
    if (assertion.kind === "max_cost") {
      verdict(
        call.costMicros <= assertion.max_cost_micros,
        `cost ${call.costMicros} µ$ ${call.costMicros <= assertion.max_cost_micros ? "≤" : ">"} ${assertion.max_cost_micros} µ$`,
      );
      continue;
    }
    if (assertion.kind === "max_latency") {
      verdict(
        call.latencyMs <= assertion.max_latency_ms,
        `latency ${call.latencyMs} ms ${call.latencyMs <= assertion.max_latency_ms ? "≤" : ">"} ${assertion.max_latency_ms} ms`,
      );
      continue;
    }
    if (output === null) {
      verdict(false, `no answer: ${call.error ?? "the model did not answer"}`);
      continue;
    }
    switch (assertion.kind) {
      case "contains":
      case "not_contains": {
        const fold = assertion.case_insensitive ?? false;
        const found = fold
          ? output.toLowerCase().includes(assertion.value.toLowerCase())
          : output.includes(assertion.value);
        const wanted = assertion.kind === "contains";
        verdict(
          found === wanted,
          `${found ? "contains" : "does not contain"} "${assertion.value}"${fold ? " (ignoring case)" : ""}`,
        );
        break;
      }
      case "regex": {
        const compiled = compilePattern(assertion.pattern);
        if (!compiled.ok) verdict(false, `pattern ${compiled.problem}`);
        else {
          const matched = compiled.pattern.test(output);
          verdict(matched, `${matched ? "matches" : "does not match"} /${assertion.pattern}/`);
        }
        break;
      }
      case "output_schema": {
        if (!context.outputSchema) {
          verdict(false, "this version has no output schema");
          break;
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(output);
        } catch {
          verdict(false, "the answer is not JSON");
          break;
        }
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
          verdict(false, "the answer is not a JSON object");
          break;
        }
        const problems = Object.entries(
          validateAgainstSchema(context.outputSchema, parsed as Record<string, unknown>, "output").problems,
        );
        verdict(
          problems.length === 0,
          problems.length === 0
            ? "valid against the output schema"
            : problems.map(([field, problem]) => `${field} ${problem}`).join("; "),
        );
        break;
      }
      case "rubric": {
        if (!context.judge) {
          verdict(false, "no judge model");
          break;
        }
        try {
          const judged = await context.judge({
            rubric: assertion.rubric,
            inputs: context.inputs,
            query: context.query,
            output,
          });
          judgeCostMicros += judged.costMicros;
          verdict(judged.pass, judged.reason);
        } catch (error) {
          verdict(false, `the judge could not answer: ${error instanceof Error ? error.message : "error"}`);
        }
        break;
      }
    }
  }
  return { results, judgeCostMicros };
}

/** Runs `work` over `items`, `limit` at a time, keeping their order in the answer. */
async function pooled<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
) {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      out[index] = await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The cases a run of the app runs, in order (400 when there are none). */
async function runCases(db: Database, applicationId: string): Promise<CaseRow[]> {
  const cases = await db
    .select()
    .from(evalCases)
    .where(eq(evalCases.applicationId, applicationId))
    .orderBy(asc(evalCases.position), asc(evalCases.createdAt))
    .limit(MAX_EVAL_CASES);
  if (cases.length === 0) throw new AppError("bad_request", "Add an eval case before running the evals");
  return cases;
}

/** The judge of a run: the one asked for, else the version's model when a case has a rubric. */
function judgeModelOf(cases: CaseRow[], asked: string | undefined, versionModel: string): string | null {
  const needsJudge = cases.some((c) => (c.assertions as EvalAssertion[]).some((a) => a.kind === "rubric"));
  return needsJudge ? (asked ?? versionModel) : (asked ?? null);
}

function estimatedCase(c: CaseRow): EstimatedCase {
  const rubrics = (c.assertions as EvalAssertion[]).flatMap((a) => (a.kind === "rubric" ? [a.rubric] : []));
  return { inputs: c.inputs as Record<string, unknown>, query: c.query, rubrics };
}

/** What a run of the version would cost at most, and whether it needs confirming (decision 062). */
export async function estimateEvalRun(
  db: Database,
  options: {
    owner: LocalUser;
    subject: EvalSubjectRef;
    version: number;
    judgeModel?: string;
    knownModels: ReadonlySet<string>;
    estimateFor: (app: ApplicationRow, version: number) => EstimateRun;
  },
): Promise<EvalEstimate> {
  const { app, side } = await ownEvalSubject(db, options.owner, options.subject);
  const version = await versionByNumber(db, app.id, options.version).then(
    (row) => evalVersionOf(side, row),
    () => {
      throw invalidFields({ version: `is not a version of this app (v${options.version})` });
    },
  );
  if (options.judgeModel !== undefined && !options.knownModels.has(options.judgeModel))
    throw invalidFields({ judge_model: "is not a known model" });
  const cases = await runCases(db, app.id);
  const judgeModel = judgeModelOf(cases, options.judgeModel, version.model);
  const bound = await options.estimateFor(app, version.version)(cases.map(estimatedCase), judgeModel);
  return evalEstimate(db, options.owner, bound);
}

/**
 * Runs every case of the app against one version and judges the answers (docs/decisions/059).
 * Bounded (at most MAX_EVAL_CASES cases, EVAL_CONCURRENCY at a time), so it runs while the
 * request waits; each result is written as it comes, so `GET …/runs/:rid` shows the progress.
 * The totals: cost per call (median, 95th percentile) and latency over the answered cases, and
 * the margin of a paying call at those costs: price − the platform's fee − cost.
 */
export async function runEval(
  db: Database,
  {
    owner,
    subject,
    body,
    feePercent,
    knownModels,
    callCaseFor,
    judgeFor,
    estimateFor,
    topUpUrl,
  }: {
    owner: LocalUser;
    subject: EvalSubjectRef;
    body: StartEvalRun;
    feePercent: number;
    knownModels: ReadonlySet<string>;
    /** The worst case of the run's calls on the version (gateway/eval-call.ts; decision 062). */
    estimateFor: (app: ApplicationRow, version: number) => EstimateRun;
    /** Where a 402 sends the owner to top up. */
    topUpUrl: string;
    /** The gateway's call of one case on the version (the owner's own call). */
    callCaseFor: (app: ApplicationRow, version: number) => CallCase;
    /** The gateway's call of the judge model on a rubric. */
    judgeFor: (app: ApplicationRow, model: string) => Judge;
  },
): Promise<EvalRun> {
  const { app, id: subjectId, side } = await ownEvalSubject(db, owner, subject);
  const version = await versionByNumber(db, app.id, body.version).then(
    (row) => evalVersionOf(side, row),
    () => {
      throw invalidFields({ version: `is not a version of this app (v${body.version})` });
    },
  );
  if (body.judge_model !== undefined && !knownModels.has(body.judge_model))
    throw invalidFields({ judge_model: "is not a known model" });
  const cases = await runCases(db, app.id);
  const judgeModel = judgeModelOf(cases, body.judge_model, version.model);
  const priceMicros = centsToMicros(effectivePriceCents(app));
  // Every call of the run is paid from the owner's wallet as it runs; the run as a whole is
  // bounded first (decision 062): refused when the wallet cannot pay its dearest call, confirmed
  // when large, and at most MAX_CONCURRENT_EVAL_RUNS at once.
  const estimate = await evalEstimate(
    db,
    owner,
    await estimateFor(app, version.version)(cases.map(estimatedCase), judgeModel),
  );
  refuseUnaffordableRun(estimate, body.confirm_cost_micros, topUpUrl);

  const [run] = await startRunWithinLimit(db, owner, (tx) =>
    tx
      .insert(evalRuns)
      .values({
        applicationId: app.id,
        version: version.version,
        status: "running",
        judgeModel,
        startedBy: owner.id,
        cases: cases.length,
        priceMicros,
        feePercent,
      })
      .returning(),
  );
  if (!run) throw new Error("eval run insert returned nothing");

  const outputSchema = version.outputSchema;
  const callCase = callCaseFor(app, version.version);
  const judge = judgeModel ? judgeFor(app, judgeModel) : null;
  try {
    const results = await pooled(cases, EVAL_CONCURRENCY, async (c, position) => {
      const call = await callCase({ inputs: c.inputs, query: c.query });
      const { results: assertionResults, judgeCostMicros } = await judgeCase(
        c.assertions as EvalAssertion[],
        call,
        { outputSchema, inputs: c.inputs, query: c.query, judge },
      );
      const passed = call.error === null && assertionResults.every((r) => r.passed);
      const [row] = await db
        .insert(evalResults)
        .values({
          runId: run.id,
          caseId: c.id,
          caseName: c.name,
          position,
          passed,
          output: call.output === null ? null : call.output.slice(0, MAX_KEPT_OUTPUT),
          assertionResults,
          costMicros: call.costMicros,
          judgeCostMicros,
          latencyMs: call.latencyMs,
          inputTokens: call.inputTokens,
          outputTokens: call.outputTokens,
          invocationId: call.invocationId,
          error: call.error,
        })
        .returning();
      return row as ResultRow;
    });
    const answered = results.filter((r) => r.error === null);
    const costs = answered.map((r) => r.costMicros).sort((a, b) => a - b);
    const latencies = answered.map((r) => r.latencyMs).sort((a, b) => a - b);
    const costMedian = percentile(costs, 50);
    const costP95 = percentile(costs, 95);
    const fee = feeMicros(priceMicros, feePercent);
    const passedCount = results.filter((r) => r.passed).length;
    await db
      .update(evalRuns)
      .set({
        status: passedCount === results.length ? "passed" : "failed",
        finishedAt: new Date(),
        passed: passedCount,
        costMedianMicros: costMedian,
        costP95Micros: costP95,
        latencyP50Ms: percentile(latencies, 50),
        latencyP95Ms: percentile(latencies, 95),
        marginMedianMicros: costMedian === null ? null : priceMicros - fee - costMedian,
        marginP95Micros: costP95 === null ? null : priceMicros - fee - costP95,
      })
      .where(eq(evalRuns.id, run.id));
  } catch (error) {
    await db
      .update(evalRuns)
      .set({
        status: "error",
        finishedAt: new Date(),
        error: error instanceof Error ? error.message : "The run failed",
      })
      .where(eq(evalRuns.id, run.id));
    if (!(error instanceof AppError)) throw error;
  }
  return runWithResults(db, app.id, run.id, subjectId);
}

function toResult(row: ResultRow): EvalResult {
  return {
    case_id: row.caseId,
    case_name: row.caseName,
    passed: row.passed,
    output: row.output,
    assertion_results: row.assertionResults,
    cost_micros: row.costMicros,
    judge_cost_micros: row.judgeCostMicros,
    latency_ms: row.latencyMs,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    error: row.error,
  };
}

function toRun(row: RunRow, subjectId: string, startedByName: string | null, results?: ResultRow[]): EvalRun {
  const fee =
    row.priceMicros === null || row.feePercent === null ? null : feeMicros(row.priceMicros, row.feePercent);
  return {
    id: row.id,
    // The prompt's id, or the workflow's for a workflow app (the shape is shared: decision 059).
    prompt_id: subjectId,
    version: row.version,
    status: row.status,
    judge_model: row.judgeModel,
    started_by_name: startedByName,
    started_at: row.startedAt.toISOString(),
    finished_at: row.finishedAt?.toISOString() ?? null,
    cases: row.cases,
    passed: row.passed,
    cost_median_micros: row.costMedianMicros,
    cost_p95_micros: row.costP95Micros,
    latency_p50_ms: row.latencyP50Ms,
    latency_p95_ms: row.latencyP95Ms,
    price_micros: row.priceMicros,
    fee_percent: row.feePercent,
    fee_micros: fee,
    margin_median_micros: row.marginMedianMicros,
    margin_p95_micros: row.marginP95Micros,
    judge_cost_micros: results?.reduce((sum, r) => sum + r.judgeCostMicros, 0) ?? 0,
    error: row.error,
    ...(results ? { results: results.map(toResult) } : {}),
  };
}

export async function listRuns(
  db: Database,
  owner: LocalUser,
  subject: EvalSubjectRef,
  version?: number,
): Promise<EvalRun[]> {
  const { app, id } = await ownEvalSubject(db, owner, subject);
  const rows = await db
    .select({ run: evalRuns, by: users.username })
    .from(evalRuns)
    .leftJoin(users, eq(users.id, evalRuns.startedBy))
    .where(
      version === undefined
        ? eq(evalRuns.applicationId, app.id)
        : and(eq(evalRuns.applicationId, app.id), eq(evalRuns.version, version)),
    )
    .orderBy(desc(evalRuns.startedAt))
    .limit(100);
  return rows.map((row) => toRun(row.run, id, row.by ?? null));
}

async function runWithResults(
  db: Database,
  applicationId: string,
  runId: string,
  subjectId: string,
): Promise<EvalRun> {
  const [row] = isUuid(runId)
    ? await db
        .select({ run: evalRuns, by: users.username })
        .from(evalRuns)
        .leftJoin(users, eq(users.id, evalRuns.startedBy))
        .where(and(eq(evalRuns.id, runId), eq(evalRuns.applicationId, applicationId)))
    : [];
  if (!row) throw notFound("Eval run");
  const results = await db
    .select()
    .from(evalResults)
    .where(eq(evalResults.runId, runId))
    .orderBy(asc(evalResults.position));
  return toRun(row.run, subjectId, row.by ?? null, results);
}

export async function getRun(
  db: Database,
  owner: LocalUser,
  subject: EvalSubjectRef,
  runId: string,
): Promise<EvalRun> {
  const { app, id } = await ownEvalSubject(db, owner, subject);
  return runWithResults(db, app.id, runId, id);
}

function changeOf(a: EvalResult | null, b: EvalResult | null): EvalChange {
  if (!a) return "only_b";
  if (!b) return "only_a";
  if (a.passed && b.passed) return "still_passing";
  if (!a.passed && !b.passed) return "still_failing";
  return b.passed ? "fixed" : "broke";
}

/** Two runs case by case (matched by case; a case in one run only is shown on its side). */
export async function compareRuns(
  db: Database,
  owner: LocalUser,
  subject: EvalSubjectRef,
  a: string,
  b: string,
): Promise<EvalComparison> {
  const { app, id } = await ownEvalSubject(db, owner, subject);
  const [runA, runB] = await Promise.all([
    runWithResults(db, app.id, a, id),
    runWithResults(db, app.id, b, id),
  ]);
  const keyOf = (r: EvalResult) => r.case_id ?? `name:${r.case_name}`;
  const rows = new Map<
    string,
    { case_id: string | null; case_name: string; a: EvalResult | null; b: EvalResult | null }
  >();
  for (const result of runA.results ?? [])
    rows.set(keyOf(result), { case_id: result.case_id, case_name: result.case_name, a: result, b: null });
  for (const result of runB.results ?? []) {
    const found = rows.get(keyOf(result));
    if (found) found.b = result;
    else
      rows.set(keyOf(result), { case_id: result.case_id, case_name: result.case_name, a: null, b: result });
  }
  const { results: _a, ...summaryA } = runA;
  const { results: _b, ...summaryB } = runB;
  return {
    a: summaryA,
    b: summaryB,
    cases: [...rows.values()].map((row) => ({ ...row, change: changeOf(row.a, row.b) })),
  };
}
