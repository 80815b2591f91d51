import type { IoSchema } from "@promptmint/contracts";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow, AppVersionKind, AppVersionRow, ExperimentArm } from "../../db/schema/index.ts";
import type { LookupName } from "../../lib/lookup-cache.ts";
import { type LabelActor, pointLabel } from "./labels.ts";
import { PRODUCTION } from "./pins.ts";

/**
 * What `releases` needs of one kind of app (docs/decisions/075). `releases` sits below `prompts`
 * and `workflows`: it stores versions, labels, moves, pins, experiments and evals for every kind
 * and reads no payload itself. Each kind implements this and is registered where the app is wired
 * (services.ts), so prompts → releases and workflows → releases, never the other way.
 */
export interface ReleaseKind {
  kind: AppVersionKind;
  /** What a 404 names ("Prompt", "Workflow"). */
  noun: string;
  /** The caches a move of `production` leaves stale in this process (other processes hear the triggers). */
  lookups: LookupName[];
  /**
   * What keeps existing versions from being arms of one experiment, by field (`arms.N.version`):
   * for a prompt, other inputs than the first arm's; for a workflow, no provider to call.
   */
  armProblems(arms: ExperimentArm[], byNumber: Map<number, AppVersionRow>): Record<string, string>;
  /**
   * What refuses a version that will serve paid calls (every arm at an experiment's start, a
   * version about to take `production`), outside any transaction: the price guard and the eval
   * gate for a prompt; nothing for a workflow (its cost is its provider's: decision 060).
   */
  guardServing(db: Database, app: ApplicationRow, version: AppVersionRow, feePercent: number): Promise<void>;
  /**
   * The release gate inside the move's transaction (a prompt app requiring a passing eval run).
   * `publishing`: the app goes live with this version, judged even if it is production already.
   */
  gate(
    tx: Database,
    app: ApplicationRow,
    version: VersionRef,
    options: { publishing: boolean },
  ): Promise<void>;
  /** After `production` moved, in the same transaction: a workflow app's own provider fields follow it. */
  afterProduction(tx: Database, app: ApplicationRow, version: VersionRef): Promise<void>;

  // Evals (docs/decisions/059, "Workflow apps"): what a run needs of a version, read by its kind.
  /** What an eval case's inputs are checked against; null: free-form (strings, numbers, booleans). */
  inputSchemaOf(version: AppVersionRow): IoSchema | null;
  /** What an `output_schema` assertion checks the answer against; null when the version has none. */
  outputSchemaOf(version: AppVersionRow): IoSchema | null;
  /** The judge of rubric assertions when the run names none. */
  judgeModelOf(version: AppVersionRow): string;
  /** Whether a version takes `production` only after a passing eval run of it (decision 059). */
  requiresPassingEval(db: Database, app: ApplicationRow): Promise<boolean>;
  /** Sets that requirement; a kind without the gate refuses `true` (400 naming the field). */
  setRequirePassingEval(db: Database, app: ApplicationRow, required: boolean): Promise<void>;
  /**
   * One version as the versions list shows it (`GET {base}/versions/`): the kind's payload as its
   * response fields, beside what every kind shows (author, labels, whether it is production).
   */
  listedVersion(version: AppVersionRow, context: ListedVersionContext): unknown;
  /**
   * Restoring (`POST {base}/versions/`): the old version's payload saved again as the app's new
   * latest version through the kind's save path (its price guard included), taking `production`
   * as a save would (only with `promote`, or before the app is live). Answers the kind's config.
   */
  restore(db: Database, app: ApplicationRow, source: AppVersionRow, input: RestoreInput): Promise<unknown>;
}

/** What every kind's versions list shows beside the payload. */
export interface ListedVersionContext {
  production: AppVersionRow | null;
  labels: readonly { name: string; version: number }[];
  author: string | null;
}

/** A restore as the kind saves it: who, the change note, whether it takes `production`. */
export interface RestoreInput {
  authorId: string;
  changelog: string;
  promote: boolean;
  feePercent: number;
}

/** What a release needs to know of a version: which it is (a kind reads its payload itself). */
export type VersionRef = Pick<AppVersionRow, "id" | "applicationId" | "version">;

const kinds = new Map<AppVersionKind, ReleaseKind>();

/** Wiring (services.ts): each kind of app tells releases what it needs. Registering again replaces. */
export function registerReleaseKind(kind: ReleaseKind): void {
  kinds.set(kind.kind, kind);
}

export function releaseKind(kind: AppVersionKind): ReleaseKind {
  const found = kinds.get(kind);
  if (!found) throw new Error(`release kind ${kind} is not registered (services.ts registers both)`);
  return found;
}

/** The kind of an app's versions, by its type. */
export function kindOfApp(app: Pick<ApplicationRow, "type">): AppVersionKind {
  return app.type === "workflow" ? "workflow" : "prompt";
}

/**
 * Moves `production` to a version inside the caller's transaction: what callers get changes at
 * commit. Every promotion passes through here (a save that promotes, a label move, an experiment's
 * winner or rollback), so each kind's release gate is in one place. `gated: false` only for the
 * automatic promotion of an app that is not live (nobody calls it). Answers whether it moved.
 */
export async function releaseProduction(
  tx: Database,
  app: ApplicationRow,
  version: VersionRef,
  actor: LabelActor,
  { gated = true, publishing = false }: { gated?: boolean; publishing?: boolean } = {},
): Promise<boolean> {
  const side = releaseKind(kindOfApp(app));
  if (gated) await side.gate(tx, app, version, { publishing });
  const moved = await pointLabel(tx, app.id, PRODUCTION, version, actor);
  if (moved) await side.afterProduction(tx, app, version);
  return moved;
}
