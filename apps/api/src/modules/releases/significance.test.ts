import { describe, expect, it } from "vitest";
import { ruleDecision } from "./experiment-rules.ts";
import { armOf, BUCKETS, bucketOf, stickyKeyFor } from "./serving.ts";
import { normalCdf, studentCritical95, studentTwoSidedP, twoProportionZ, welchT } from "./significance.ts";

describe("significance", () => {
  it("matches the tables: normal, Student's t and its 95% critical values", () => {
    expect(normalCdf(1.96)).toBeCloseTo(0.975, 4);
    expect(normalCdf(-1.645)).toBeCloseTo(0.05, 3);
    expect(studentTwoSidedP(2.228, 10)).toBeCloseTo(0.05, 3);
    expect(studentTwoSidedP(0, 5)).toBeCloseTo(1, 6);
    expect(studentCritical95(10)).toBeCloseTo(2.228, 2);
    expect(studentCritical95(1000)).toBeCloseTo(1.962, 2);
  });

  it("two-proportion z-test: 90/100 against 80/100 is p ≈ 0.05; equal rates are no difference", () => {
    const test = twoProportionZ(80, 100, 90, 100);
    expect(test?.difference).toBeCloseTo(0.1, 10);
    expect(test?.statistic).toBeCloseTo(1.98, 2);
    expect(test?.p_value).toBeCloseTo(0.0477, 3);
    expect(twoProportionZ(50, 100, 50, 100)?.p_value).toBeCloseTo(1, 6);
    expect(twoProportionZ(100, 100, 100, 100)?.p_value).toBe(1);
    expect(twoProportionZ(0, 0, 1, 1)).toBeNull();
  });

  it("Welch's t-test: a known example, and no test below two calls", () => {
    // Means 20 and 22, variances 4 and 9, 30 calls each: t = 2 / sqrt(13/30) ≈ 3.04, df ≈ 50.
    const test = welchT({ n: 30, mean: 20, variance: 4 }, { n: 30, mean: 22, variance: 9 });
    expect(test?.statistic).toBeCloseTo(3.038, 2);
    expect(test?.df).toBeCloseTo(50.1, 0);
    expect(test?.p_value).toBeLessThan(0.01);
    expect(test?.ci95[0]).toBeGreaterThan(0);
    expect(welchT({ n: 1, mean: 1, variance: 0 }, { n: 5, mean: 2, variance: 1 })).toBeNull();
  });
});

describe("arms", () => {
  it("buckets are stable and fall in range; arms take their cumulative share", () => {
    const bucket = bucketOf("e1", "user:a");
    expect(bucketOf("e1", "user:a")).toBe(bucket);
    expect(bucket).toBeGreaterThanOrEqual(0);
    expect(bucket).toBeLessThan(BUCKETS);
    const arms = [
      { version: 1, percent: 10 },
      { version: 2, percent: 90 },
    ];
    expect(armOf(arms, 0).version).toBe(1);
    expect(armOf(arms, 999).version).toBe(1);
    expect(armOf(arms, 1000).version).toBe(2);
    expect(armOf(arms, 9999).version).toBe(2);
  });

  it("sticks by end user by default, by key or account when asked", () => {
    const keys = { endUser: "u", apiKeyId: "k", account: "a" };
    expect(stickyKeyFor(keys, null)).toBe("user:u");
    expect(stickyKeyFor(keys, "end_user")).toBe("user:u");
    expect(stickyKeyFor(keys, "key")).toBe("key:k");
    expect(stickyKeyFor(keys, "account")).toBe("account:a");
    expect(stickyKeyFor({ account: "a" }, null)).toBe("account:a");
    expect(stickyKeyFor("user:x", "account")).toBe("user:x");
  });
});

describe("rules", () => {
  const arm = (version: number, calls: number, errors: number, margin: number) => ({
    version,
    percent: 50,
    calls,
    successes: calls - errors,
    errors,
    success_rate: calls ? (calls - errors) / calls : null,
    latency_p50_ms: null,
    latency_p95_ms: null,
    input_tokens: 0,
    output_tokens: 0,
    model_cost_micros: 0,
    revenue_micros: 0,
    fee_micros: 0,
    margin_micros: margin,
    margin_per_call_micros: calls ? margin / calls : null,
    refunded_calls: errors,
  });
  const experiment = {
    controlVersion: 1,
    rules: { min_calls: 20, max_error_rate: 0.1, min_margin_micros: 100, promote_winner_after_calls: 50 },
  };

  it("waits for min_calls, then rolls back on errors or a thin margin", () => {
    expect(ruleDecision(experiment, [arm(1, 19, 19, 0), arm(2, 19, 19, 0)], [])).toBeNull();
    expect(ruleDecision(experiment, [arm(1, 30, 0, 30_000), arm(2, 30, 4, 30_000)], [])).toMatchObject({
      outcome: "rolled_back",
      reason: expect.stringMatching(/v2's error rate 13\.3%/),
    });
    expect(ruleDecision(experiment, [arm(1, 30, 0, 30_000), arm(2, 30, 0, 2_000)], [])).toMatchObject({
      outcome: "rolled_back",
      reason: expect.stringMatching(/v2's margin per call 67 µ\$ is below 100/),
    });
  });

  it("promotes only a significant winner after N calls per arm", () => {
    const arms = [arm(1, 60, 0, 60_000), arm(2, 60, 0, 90_000)];
    const comparison = {
      version: 2,
      control_version: 1,
      enough_calls: true,
      success_rate: null,
      margin_per_call: null,
    };
    expect(ruleDecision(experiment, arms, [{ ...comparison, verdict: "no_difference_yet" }])).toBeNull();
    expect(ruleDecision(experiment, arms, [{ ...comparison, verdict: "better" }])).toMatchObject({
      outcome: "promoted",
      version: 2,
    });
    expect(ruleDecision(experiment, arms, [{ ...comparison, verdict: "worse" }])).toMatchObject({
      outcome: "promoted",
      version: 1,
    });
    expect(
      ruleDecision(
        experiment,
        [arm(1, 40, 0, 40_000), arm(2, 40, 0, 90_000)],
        [{ ...comparison, verdict: "better" }],
      ),
    ).toBeNull();
  });
});
