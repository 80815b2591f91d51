import type { Database } from "../db/client.ts";

/**
 * Short-lived in-process copies of the rows every paid call reads (API key → user, slug → app,
 * app → active prompt), so a call does not spend a database round trip on each.
 *
 * Correctness rests on invalidation, not on the TTL: every service that changes one of these rows
 * calls `forgetLookups` after its write, and a load that raced with a write is not cached (the
 * generation check). The TTL only bounds how long another API process, which cannot see this
 * process's invalidations, may serve a changed row: at most LOOKUP_TTL_MS.
 */
export const LOOKUP_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export type LookupName = "apiKeys" | "applications" | "prompts";

export interface LookupCache<V> {
  /** The cached value, or the loader's (cached unless an invalidation happened meanwhile). */
  get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
  clear(): void;
}

export function createLookupCache<V>(ttlMs: number, now: () => number): LookupCache<V> {
  const entries = new Map<string, { value: V; expires: number }>();
  let generation = 0;
  return {
    async get(key, load) {
      const hit = entries.get(key);
      if (hit && hit.expires > now()) return hit.value;
      const startedAt = generation;
      const value = await load();
      if (value === undefined || startedAt !== generation) return value;
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
      entries.set(key, { value, expires: now() + ttlMs });
      return value;
    },
    clear() {
      generation += 1;
      entries.clear();
    },
  };
}

// Keyed by database handle, so several servers in one process (tests) never share rows.
const registry = new WeakMap<Database, Map<LookupName, LookupCache<unknown>>>();

export function lookupCache<V>(db: Database, name: LookupName): LookupCache<V> {
  let caches = registry.get(db);
  if (!caches) {
    caches = new Map();
    registry.set(db, caches);
  }
  let cache = caches.get(name);
  if (!cache) {
    cache = createLookupCache<unknown>(LOOKUP_TTL_MS, Date.now);
    caches.set(name, cache);
  }
  return cache as LookupCache<V>;
}

/** After a write to keys, apps or prompts: the next call reads them from the database again. */
export function forgetLookups(db: Database, ...names: LookupName[]): void {
  const caches = registry.get(db);
  for (const name of names) caches?.get(name)?.clear();
}
