import { createHash } from "node:crypto";
import { and, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, type ExperimentArm, experiments } from "../../db/schema/index.ts";
import { lookupCache } from "../../lib/lookup-cache.ts";
import type { VersionPin } from "./pins.ts";

/** The version that answered a call, and the experiment that chose it: recorded on its invocation. */
export interface ServedVersion {
  version: number;
  experimentId: string | null;
}

/** Which version a call gets: the caller's pin, else `production` (no pin) or an experiment's arm. */
export interface ChosenVersion {
  pin?: VersionPin;
  experimentId: string | null;
}

/**
 * Who a caller is, for keeping them on one arm: the end user the request names, the API key it
 * came with, and the account. A plain string is a key already chosen (end user → key → account).
 */
export interface StickyKeys {
  endUser?: string;
  apiKeyId?: string;
  account: string;
}

export type StickyBy = "end_user" | "key" | "account";

/** What the paid path keeps of an app's running experiment (cached per app, with "none" too). */
export interface RunningExperiment {
  id: string;
  arms: ExperimentArm[];
  stickyBy: StickyBy | null;
}

/** 10,000 buckets: a percent is 100 of them, so a split is exact to the bucket. */
export const BUCKETS = 10_000;

/**
 * The key a caller is kept on one arm by. Null (the default) and `end_user` take the end user,
 * else the key, else the account; `key` ignores the end user; `account` groups all of an account.
 */
export function stickyKeyFor(keys: string | StickyKeys, by: StickyBy | null): string {
  if (typeof keys === "string") return keys;
  if ((by === null || by === "end_user") && keys.endUser) return `user:${keys.endUser}`;
  if (by !== "account" && keys.apiKeyId) return `key:${keys.apiKeyId}`;
  return `account:${keys.account}`;
}

/** A stable bucket in [0, BUCKETS) of a caller in one experiment: the same caller, the same bucket. */
export function bucketOf(experimentId: string, stickyKey: string): number {
  const digest = createHash("sha256").update(`${experimentId}\u0000${stickyKey}`).digest();
  return digest.readUInt32BE(0) % BUCKETS;
}

/** The arm whose cumulative share of the buckets holds `bucket`. */
export function armOf(arms: ExperimentArm[], bucket: number): ExperimentArm {
  let upTo = 0;
  for (const arm of arms) {
    upTo += arm.percent * (BUCKETS / 100);
    if (bucket < upTo) return arm;
  }
  return arms[arms.length - 1] as ExperimentArm;
}

/**
 * The app's running experiment, from the lookup cache ("none" cached too, as null): a start, stop
 * or rule's end is announced by the experiments table's trigger (migration 0041) and forgotten in
 * this process by the service that wrote it, so a paid call spends no query on it.
 */
export async function runningExperimentOf(
  db: Database,
  app: ApplicationRow,
): Promise<RunningExperiment | null> {
  const found = await lookupCache<RunningExperiment | null>(db, "prompts").get(
    `experiment:${app.id}`,
    async () => {
      const [row] = await db
        .select({ id: experiments.id, arms: experiments.arms, stickyBy: experiments.stickyBy })
        .from(experiments)
        .where(and(eq(experiments.applicationId, app.id), eq(experiments.status, "running")))
        .limit(1);
      return row ?? null;
    },
  );
  return found ?? null;
}

/**
 * Start-up (warm-up.ts through preloadPrompts): these apps' running experiments, "none" for the
 * rest, put in the lookup cache unless it was cleared since `generation`.
 */
export async function preloadExperiments(db: Database, appIds: string[], generation: number): Promise<void> {
  if (appIds.length === 0) return;
  const rows = await db
    .select({
      applicationId: experiments.applicationId,
      id: experiments.id,
      arms: experiments.arms,
      stickyBy: experiments.stickyBy,
    })
    .from(experiments)
    .where(and(inArray(experiments.applicationId, appIds), eq(experiments.status, "running")));
  const cache = lookupCache<RunningExperiment | null>(db, "prompts");
  const running = new Map(rows.map(({ applicationId, ...experiment }) => [applicationId, experiment]));
  for (const id of appIds) cache.put(`experiment:${id}`, running.get(id) ?? null, generation);
}

/**
 * Chooses the version a call is answered by (docs/decisions/057, 058, 060), a prompt app's or a
 * workflow app's alike: a caller's pin always wins; without one, the caller's arm of a running
 * experiment (sticky: a stable hash of the experiment and the caller into 10,000 buckets), else
 * `production`.
 */
export async function chooseVersion(
  db: Database,
  app: ApplicationRow,
  { pin, stickyKey }: { pin?: VersionPin; stickyKey: string | StickyKeys },
): Promise<ChosenVersion> {
  if (pin) return { pin, experimentId: null };
  const running = await runningExperimentOf(db, app);
  if (!running) return { experimentId: null };
  const arm = armOf(running.arms, bucketOf(running.id, stickyKeyFor(stickyKey, running.stickyBy)));
  return { pin: { version: arm.version }, experimentId: running.id };
}
