import type { ExploreSort } from "@promptmint/contracts";

/**
 * Explore's order (docs/decisions/081), in one place: the recommended score mixes usage, rating
 * and freshness, each scaled to 0..1; the other sorts use one of its parts.
 */
export const RANKING = {
  /** The weights of usage, rating and freshness in the recommended score (they sum to 1). */
  usageWeight: 0.5,
  ratingWeight: 0.35,
  freshnessWeight: 0.15,
  /** The Bayesian prior: every app starts as if it had `priorWeight` reviews of `priorMean` stars. */
  priorMean: 3.5,
  priorWeight: 5,
  /** Usage reaches its full score at this many distinct callers and calls in 30 days (log scale). */
  callersAtFull: 1_000,
  callsAtFull: 100_000,
  /** Freshness halves for every this many days since the app was last updated. */
  halfLifeDays: 30,
} as const;

const DAY_MS = 86_400_000;

/** What Explore knows of an app to order it. */
export interface RankSignals {
  slug: string;
  /** Distinct callers (end users, else accounts) in the last 30 days. */
  callers30d: number;
  /** Calls in the last 30 days (eval traffic left out, as the rollups count). */
  calls30d: number;
  ratingCount: number;
  ratingSum: number;
  priceCents: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The average rating pulled towards the prior: one 5-star review scores 3.75, 100 of 4.8 score 4.74. */
export function bayesianRating(count: number, sum: number): number {
  return (RANKING.priorWeight * RANKING.priorMean + sum) / (RANKING.priorWeight + count);
}

/** Callers and calls on a log scale, 0 (none) to 1 (at or past the `…AtFull` figures). */
export function usageScore(callers: number, calls: number): number {
  const scale = (value: number, full: number) =>
    Math.min(1, Math.log1p(Math.max(0, value)) / Math.log1p(full));
  return (scale(callers, RANKING.callersAtFull) + scale(calls, RANKING.callsAtFull)) / 2;
}

/** 1 when updated now, halving every `halfLifeDays` (an update dated in the future counts as now). */
export function freshnessScore(updatedAt: Date, now: Date): number {
  const ageDays = Math.max(0, now.getTime() - updatedAt.getTime()) / DAY_MS;
  return 0.5 ** (ageDays / RANKING.halfLifeDays);
}

/** The recommended score, 0..1: the documented mix of usage, rating and freshness. */
export function recommendedScore(app: RankSignals, now: Date): number {
  const rating = (bayesianRating(app.ratingCount, app.ratingSum) - 1) / 4;
  return (
    RANKING.usageWeight * usageScore(app.callers30d, app.calls30d) +
    RANKING.ratingWeight * rating +
    RANKING.freshnessWeight * freshnessScore(app.updatedAt, now)
  );
}

/** The apps in the order of `sort`; ties (and equal scores) fall back to the slug, so pages are stable. */
export function rankApps<T extends RankSignals>(apps: T[], sort: ExploreSort, now: Date): T[] {
  const key = (app: T): number[] => {
    switch (sort) {
      case "recommended":
        return [-recommendedScore(app, now)];
      case "top_rated":
        return [-bayesianRating(app.ratingCount, app.ratingSum), -app.ratingCount];
      case "most_used":
        return [-usageScore(app.callers30d, app.calls30d), -app.calls30d];
      case "newest":
        return [-app.createdAt.getTime()];
      case "price":
        return [app.priceCents];
    }
  };
  const keyed = apps.map((app) => ({ app, key: key(app) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < a.key.length; i++) {
      const difference = (a.key[i] ?? 0) - (b.key[i] ?? 0);
      if (difference !== 0) return difference;
    }
    return a.app.slug < b.app.slug ? -1 : a.app.slug > b.app.slug ? 1 : 0;
  });
  return keyed.map((entry) => entry.app);
}
