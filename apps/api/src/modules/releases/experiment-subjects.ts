import { isUuid } from "@promptmint/contracts";
import { and, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import {
  type ApplicationRow,
  applications,
  type ExperimentArm,
  experiments,
  prompts,
  promptVersions,
  workflows,
  workflowVersions,
} from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import type { LookupName } from "../../lib/lookup-cache.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { refuseUncoveredPrice } from "../prompts/cost-guard.ts";
import { refuseUnevaluatedRelease } from "../prompts/eval-gate.ts";
import { promoteVersion, versionCostSettings } from "../prompts/prompts.service.ts";
import { promoteWorkflowVersion } from "../workflows/workflows.service.ts";

/**
 * What an experiment splits traffic between the versions of (docs/decisions/058): a prompt app's
 * prompt, or a workflow app's provider configuration (decision 060). Everything else about an
 * experiment (the table, serving, figures, significance, rules, the ends) is one code path for
 * both (experiments.service.ts); what differs per kind of app is here, and only here.
 */
export type ExperimentKind = "prompt" | "workflow";

export interface ExperimentSubject {
  kind: ExperimentKind;
  /** The prompt's or the workflow's id (both one per application). */
  id: string;
  app: ApplicationRow;
}

export interface ReleaseActor {
  id: string | null;
  reason: string;
}

/**
 * One kind of app's side of an experiment. Methods (not function-valued fields) on purpose: each
 * kind's `Version` is its own row type.
 */
interface SubjectKind<Version> {
  /** What a 404 names ("Prompt", "Workflow"). */
  noun: string;
  /** The experiments column that names the subject. */
  column: typeof experiments.promptId | typeof experiments.workflowId;
  /** The caches a move of `production` leaves stale in this process (other processes hear the triggers). */
  lookups: LookupName[];
  /** The subject with this id, if the owner owns its app (404 naming the noun otherwise). */
  own(db: Database, owner: LocalUser, id: string): Promise<ExperimentSubject>;
  /** Those of these versions that exist, by number. */
  versions(db: Database, subject: ExperimentSubject, numbers: number[]): Promise<Map<number, Version>>;
  /**
   * What keeps an existing version from being an arm, by its field (`arms.N.version`): for a
   * prompt, other inputs than the first arm's; for a workflow, no provider to call.
   */
  armProblems(arms: ExperimentArm[], byNumber: Map<number, Version>): Record<string, string>;
  /**
   * What refuses a version that will serve paid calls (every arm at the start, a promoted arm at
   * the end), outside any transaction: the price guard for a prompt; nothing for a workflow (its
   * cost is its provider's, not metered by us: decision 060).
   */
  guardServing(db: Database, subject: ExperimentSubject, version: Version, feePercent: number): Promise<void>;
  /**
   * Locks the subject's row until the transaction ends (as its label moves and saves do, so they
   * take turns) and answers the version `production` points at.
   */
  lock(tx: Database, subject: ExperimentSubject): Promise<number | null>;
  /** Moves `production` to the version, in the caller's transaction, through the kind's one release gate. */
  promote(tx: Database, subject: ExperimentSubject, version: Version, actor: ReleaseActor): Promise<void>;
}

type PromptVersionRow = typeof promptVersions.$inferSelect;
type WorkflowVersionRow = typeof workflowVersions.$inferSelect;

const promptKind: SubjectKind<PromptVersionRow> = {
  noun: "Prompt",
  column: experiments.promptId,
  lookups: ["prompts"],
  async own(db, owner, id) {
    if (!isUuid(id)) throw notFound("Prompt");
    const [row] = await db
      .select({ app: applications, id: prompts.id })
      .from(prompts)
      .innerJoin(applications, eq(applications.id, prompts.applicationId))
      .where(and(eq(prompts.id, id), eq(applications.ownerId, owner.id)))
      .limit(1);
    if (!row) throw notFound("Prompt");
    return { kind: "prompt", id: row.id, app: row.app };
  },
  async versions(db, subject, numbers) {
    const rows = await db
      .select()
      .from(promptVersions)
      .where(and(eq(promptVersions.promptId, subject.id), inArray(promptVersions.version, numbers)));
    return new Map(rows.map((row) => [row.version, row]));
  },
  armProblems(arms, byNumber) {
    // A caller's inputs valid on one arm must not be refused by another.
    const problems: Record<string, string> = {};
    const first = byNumber.get(arms[0]?.version ?? 0);
    arms.forEach((arm, i) => {
      const version = byNumber.get(arm.version);
      if (
        i > 0 &&
        JSON.stringify(version?.inputSchema ?? null) !== JSON.stringify(first?.inputSchema ?? null)
      )
        problems[`arms.${i}.version`] =
          `v${arm.version} takes other inputs than v${first?.version} (its input_schema differs): callers of one arm would be refused by the other`;
    });
    return problems;
  },
  async guardServing(db, subject, version, feePercent) {
    await refuseUncoveredPrice(db, {
      app: subject.app,
      feePercent,
      settings: await versionCostSettings(db, subject.app, version),
    });
    // Production was released already; any other arm is released to its callers by the start.
    const [prompt] = await db.select().from(prompts).where(eq(prompts.id, subject.id)).limit(1);
    if (prompt) await refuseUnevaluatedRelease(db, prompt, version);
  },
  async lock(tx, subject) {
    const [locked] = await tx
      .select({ activeVersionId: prompts.activeVersionId })
      .from(prompts)
      .where(eq(prompts.id, subject.id))
      .for("update");
    if (!locked?.activeVersionId) return null;
    const [production] = await tx
      .select({ version: promptVersions.version })
      .from(promptVersions)
      .where(eq(promptVersions.id, locked.activeVersionId));
    return production?.version ?? null;
  },
  async promote(tx, subject, version, actor) {
    const [prompt] = await tx.select().from(prompts).where(eq(prompts.id, subject.id)).for("update");
    if (!prompt) throw notFound("Prompt");
    await promoteVersion(tx, prompt, version, actor);
  },
};

const workflowKind: SubjectKind<WorkflowVersionRow> = {
  noun: "Workflow",
  column: experiments.workflowId,
  // The app's own provider fields follow production (promoteWorkflowVersion), and the running
  // experiment is cached with the prompts' lookups (serving.ts).
  lookups: ["applications", "prompts"],
  async own(db, owner, id) {
    if (!isUuid(id)) throw notFound("Workflow");
    const [row] = await db
      .select({ app: applications, id: workflows.id })
      .from(workflows)
      .innerJoin(applications, eq(applications.id, workflows.applicationId))
      .where(and(eq(workflows.id, id), eq(applications.ownerId, owner.id)))
      .limit(1);
    if (!row) throw notFound("Workflow");
    return { kind: "workflow", id: row.id, app: row.app };
  },
  async versions(db, subject, numbers) {
    const rows = await db
      .select()
      .from(workflowVersions)
      .where(and(eq(workflowVersions.workflowId, subject.id), inArray(workflowVersions.version, numbers)));
    return new Map(rows.map((row) => [row.version, row]));
  },
  armProblems(arms, byNumber) {
    // A workflow has no input schema of ours (its provider checks inputs): arms may be different
    // providers. An arm without one would fail every call it is given.
    const problems: Record<string, string> = {};
    arms.forEach((arm, i) => {
      if (!byNumber.get(arm.version)?.providerSlug)
        problems[`arms.${i}.version`] = `v${arm.version} has no provider configured: its calls could not run`;
    });
    return problems;
  },
  async guardServing() {},
  async lock(tx, subject) {
    const [locked] = await tx
      .select({ activeVersion: workflows.activeVersion })
      .from(workflows)
      .where(eq(workflows.id, subject.id))
      .for("update");
    if (!locked) throw notFound("Workflow");
    return locked.activeVersion;
  },
  async promote(tx, subject, version, actor) {
    await promoteWorkflowVersion(tx, subject.app, subject.id, version, actor);
  },
};

/**
 * The kind's side of an experiment. Answered as `SubjectKind<unknown>`: the generic code passes
 * each kind only the versions that kind's own `versions` found.
 */
export function subjectKind(kind: ExperimentKind): SubjectKind<unknown> {
  return (kind === "prompt" ? promptKind : workflowKind) as SubjectKind<unknown>;
}

/** The subject an experiment row runs on. */
export function subjectOf(
  experiment: Pick<typeof experiments.$inferSelect, "promptId" | "workflowId">,
  app: ApplicationRow,
): ExperimentSubject {
  if (experiment.workflowId) return { kind: "workflow", id: experiment.workflowId, app };
  if (experiment.promptId) return { kind: "prompt", id: experiment.promptId, app };
  // The table's check (migration 0045) makes this unreachable.
  throw new Error(`experiment names neither a prompt nor a workflow`);
}
