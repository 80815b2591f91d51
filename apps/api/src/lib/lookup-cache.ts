import { changeFeedOf } from "../db/change-feed.ts";
import type { Database } from "../db/client.ts";

/**
 * In-process copies of the rows every paid call reads (API key → user, slug → app, app → active
 * prompt), so a call does not spend a database round trip on each.
 *
 * Correctness rests on invalidation, not on the TTL. In this process, every service that changes one
 * of these rows calls `forgetLookups` after its write. Across processes, the database announces
 * every committed change to the tables behind them (migration 0029) on the handle's change feed
 * (db/change-feed.ts), and each process drops the copies that table feeds. A load that raced with
 * either is not cached (the generation check). While the feed listens, copies are kept
 * WATCHED_LOOKUP_TTL_MS (a bound on what a missed notice could cost, not a refresh rate); while it
 * does not (lost, reconnecting, or a handle without one), only LOOKUP_TTL_MS, and losing it drops
 * every copy at once (docs/decisions/040-lookup-change-feed.md).
 */
export const LOOKUP_TTL_MS = 5_000;
export const WATCHED_LOOKUP_TTL_MS = 10 * 60_000;
const MAX_ENTRIES = 10_000;

export type LookupName = "apiKeys" | "applications" | "prompts" | "memberships";
const ALL_LOOKUPS: LookupName[] = ["apiKeys", "applications", "prompts", "memberships"];

/** Which copies a change to each table can make stale (what each lookup reads, and joins). */
const FED_BY: Record<string, LookupName[]> = {
  api_keys: ["apiKeys"],
  users: ["apiKeys", "memberships"],
  suspensions: ["apiKeys", "applications", "memberships"],
  // Who may act for an organization, and so whose organization keys still work (decision 084).
  organization_members: ["memberships", "apiKeys"],
  // A key limited to apps names them by slug (keys.service.ts allowedSlugsOf).
  applications: ["applications", "prompts", "apiKeys"],
  prompts: ["prompts"],
  // Every app's versions and labels, `production` among them (migration 0054, decision 075).
  app_versions: ["prompts"],
  app_labels: ["prompts"],
  // Each app's running experiment is cached with its prompts (releases/serving.ts; migration 0041).
  experiments: ["prompts"],
  // Each app's online eval sampling is cached with its prompts (releases/online-evals.ts; migration 0055).
  online_eval_settings: ["prompts"],
};
/** The tables whose changes the lookups must hear (migration 0029 puts a trigger on each). */
export const LOOKUP_TABLES = Object.keys(FED_BY);

export interface LookupCache<V> {
  /** The cached value, or the loader's (cached unless an invalidation happened meanwhile). */
  get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
  /** Caches a value read elsewhere (start-up's preload), unless an invalidation happened since `generation`. */
  put(key: string, value: V, generation: number): void;
  /** Bumped by every clear: read it before a load whose result will be `put`. */
  readonly generation: number;
  /** The cached value if there is one, without loading. */
  peek(key: string): V | undefined;
  clear(): void;
}

export function createLookupCache<V>(ttl: number | (() => number), now: () => number): LookupCache<V> {
  const ttlMs = typeof ttl === "number" ? () => ttl : ttl;
  const entries = new Map<string, { value: V; expires: number }>();
  let generation = 0;
  const fresh = (key: string) => {
    const hit = entries.get(key);
    return hit && hit.expires > now() ? hit : undefined;
  };
  const put = (key: string, value: V, startedAt: number) => {
    if (startedAt !== generation) return;
    if (!entries.has(key) && entries.size >= MAX_ENTRIES)
      entries.delete(entries.keys().next().value as string);
    entries.set(key, { value, expires: now() + ttlMs() });
  };
  return {
    async get(key, load) {
      const hit = fresh(key);
      if (hit) return hit.value;
      const startedAt = generation;
      const value = await load();
      if (value !== undefined) put(key, value, startedAt);
      return value;
    },
    put,
    get generation() {
      return generation;
    },
    peek: (key) => fresh(key)?.value,
    clear() {
      generation += 1;
      entries.clear();
    },
  };
}

// Keyed by database handle, so several servers in one process (tests) never share rows.
const registry = new WeakMap<Database, Map<LookupName, LookupCache<unknown>>>();

function cachesOf(db: Database): Map<LookupName, LookupCache<unknown>> {
  const caches = registry.get(db);
  if (caches) return caches;
  const made = new Map<LookupName, LookupCache<unknown>>();
  registry.set(db, made);
  const feed = changeFeedOf(db);
  const ttl = () => (feed?.live ? WATCHED_LOOKUP_TTL_MS : LOOKUP_TTL_MS);
  for (const name of ALL_LOOKUPS)
    made.set(
      name,
      createLookupCache<unknown>(ttl, () => Date.now()),
    );
  feed?.subscribe((table) => {
    for (const name of (table && FED_BY[table]) || ALL_LOOKUPS) made.get(name)?.clear();
  });
  return made;
}

export function lookupCache<V>(db: Database, name: LookupName): LookupCache<V> {
  return cachesOf(db).get(name) as LookupCache<V>;
}

/** After a write to keys, apps or prompts: the next call reads them from the database again. */
export function forgetLookups(db: Database, ...names: LookupName[]): void {
  const caches = registry.get(db);
  for (const name of names) caches?.get(name)?.clear();
}
