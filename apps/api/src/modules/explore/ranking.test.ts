import { describe, expect, it } from "vitest";
import {
  bayesianRating,
  freshnessScore,
  RANKING,
  type RankSignals,
  rankApps,
  recommendedScore,
  usageScore,
} from "./ranking.ts";

const now = new Date("2026-11-29T12:00:00Z");
const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);

function app(slug: string, signals: Partial<RankSignals> = {}): RankSignals {
  return {
    slug,
    callers30d: 0,
    calls30d: 0,
    ratingCount: 0,
    ratingSum: 0,
    priceCents: 10,
    createdAt: daysAgo(10),
    updatedAt: daysAgo(10),
    ...signals,
  };
}

describe("the ranking formula (decision 081)", () => {
  it("weights sum to one", () => {
    expect(RANKING.usageWeight + RANKING.ratingWeight + RANKING.freshnessWeight).toBeCloseTo(1, 12);
  });

  it("does not let one 5-star review beat a hundred of 4.8", () => {
    expect(bayesianRating(1, 5)).toBeCloseTo(3.75, 10);
    expect(bayesianRating(100, 480)).toBeCloseTo(4.738, 3);
    expect(bayesianRating(0, 0)).toBe(RANKING.priorMean);
    const sorted = rankApps(
      [
        app("one-five", { ratingCount: 1, ratingSum: 5 }),
        app("hundred", { ratingCount: 100, ratingSum: 480 }),
      ],
      "top_rated",
      now,
    );
    expect(sorted.map((a) => a.slug)).toEqual(["hundred", "one-five"]);
  });

  it("scales usage on a log scale, from 0 with no calls to 1 at the full figures and beyond", () => {
    expect(usageScore(0, 0)).toBe(0);
    expect(usageScore(RANKING.callersAtFull, RANKING.callsAtFull)).toBeCloseTo(1, 12);
    expect(usageScore(10 * RANKING.callersAtFull, 10 * RANKING.callsAtFull)).toBe(1);
    // Ten times the calls is worth far less than ten times the score.
    expect(usageScore(10, 1000) / usageScore(1, 100)).toBeLessThan(2);
  });

  it("halves freshness every half-life, and never rewards a future date", () => {
    expect(freshnessScore(now, now)).toBe(1);
    expect(freshnessScore(daysAgo(RANKING.halfLifeDays), now)).toBeCloseTo(0.5, 12);
    expect(freshnessScore(daysAgo(2 * RANKING.halfLifeDays), now)).toBeCloseTo(0.25, 12);
    expect(freshnessScore(new Date(now.getTime() + 86_400_000), now)).toBe(1);
  });

  it("mixes the three parts with their weights", () => {
    const signals = app("mixed", {
      callers30d: 10,
      calls30d: 200,
      ratingCount: 4,
      ratingSum: 18,
      updatedAt: daysAgo(15),
    });
    const expected =
      RANKING.usageWeight * usageScore(10, 200) +
      RANKING.ratingWeight * ((bayesianRating(4, 18) - 1) / 4) +
      RANKING.freshnessWeight * 0.5 ** (15 / RANKING.halfLifeDays);
    expect(recommendedScore(signals, now)).toBeCloseTo(expected, 12);
  });

  it("recommends a used, well-rated app over a fresh unused one and an old unrated one", () => {
    const apps = [
      app("fresh-unused", { updatedAt: now, createdAt: now }),
      app("used-rated", {
        callers30d: 40,
        calls30d: 900,
        ratingCount: 12,
        ratingSum: 56,
        updatedAt: daysAgo(20),
      }),
      app("old-unrated", { callers30d: 3, calls30d: 20, updatedAt: daysAgo(300), createdAt: daysAgo(300) }),
    ];
    expect(rankApps(apps, "recommended", now).map((a) => a.slug)).toEqual([
      "used-rated",
      "fresh-unused",
      "old-unrated",
    ]);
    expect(rankApps(apps, "most_used", now).map((a) => a.slug)).toEqual([
      "used-rated",
      "old-unrated",
      "fresh-unused",
    ]);
    expect(rankApps(apps, "newest", now).map((a) => a.slug)).toEqual([
      "fresh-unused",
      "used-rated",
      "old-unrated",
    ]);
  });

  it("orders by price, lowest first, ties by slug", () => {
    const apps = [app("b", { priceCents: 5 }), app("c", { priceCents: 1 }), app("a", { priceCents: 5 })];
    expect(rankApps(apps, "price", now).map((a) => a.slug)).toEqual(["c", "a", "b"]);
  });
});
