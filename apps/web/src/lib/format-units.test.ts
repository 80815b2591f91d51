import { describe, expect, it } from "vitest";
import {
  formatDuration,
  formatDurationSeconds,
  formatMicrosExact,
  formatNumber,
  formatPoints,
  formatPrice,
  formatPValue,
  formatRate,
  formatRelativeTime,
} from "./format";

// One formatter module (docs/decisions/079): one rule per unit, everywhere.
describe("prices: two decimals, a sub-cent part with the digits it needs, up to six", () => {
  it("never pads to four decimals, never rounds a sub-cent price away", () => {
    expect(formatPrice(100_000)).toBe("$0.10");
    expect(formatPrice(1_500_000)).toBe("$1.50");
    expect(formatPrice(5_000)).toBe("$0.005");
    expect(formatPrice(160)).toBe("$0.00016");
    expect(formatPrice(1)).toBe("$0.000001");
    expect(formatPrice(614_400)).toBe("$0.6144");
    expect(formatPrice(-11_560)).toBe("-$0.01156");
    expect(formatPrice(1_234_560_000)).toBe("$1,234.56");
    expect(formatPrice(0)).toBe("$0.00");
    expect(formatPrice(86_667)).toBe(formatMicrosExact(86_667));
  });
});

describe("durations: one rule", () => {
  it("is milliseconds under a second", () => {
    expect(formatDuration(0)).toBe("0 ms");
    expect(formatDuration(85)).toBe("85 ms");
    expect(formatDuration(999.4)).toBe("999 ms");
  });

  it("is seconds with one decimal from a second to 120 s", () => {
    expect(formatDuration(999.6)).toBe("1.0 s");
    expect(formatDuration(1_000)).toBe("1.0 s");
    expect(formatDuration(1_234)).toBe("1.2 s");
    expect(formatDuration(1_250)).toBe("1.3 s");
    expect(formatDuration(120_000)).toBe("120.0 s");
  });

  it("is minutes with one decimal beyond 120 s", () => {
    expect(formatDuration(120_001)).toBe("2.0 min");
    expect(formatDuration(150_000)).toBe("2.5 min");
    expect(formatDuration(300_000)).toBe("5.0 min");
  });

  it("reads a missing duration as a dash, and seconds by the same rule", () => {
    expect(formatDuration(null)).toBe("–");
    expect(formatDuration(undefined)).toBe("–");
    expect(formatDurationSeconds(0.5)).toBe("500 ms");
    expect(formatDurationSeconds(1.235)).toBe("1.2 s");
    expect(formatDurationSeconds(null)).toBe("–");
  });
});

describe("counts, rates and tests", () => {
  it("separates thousands", () => {
    expect(formatNumber(1_234_567)).toBe("1,234,567");
    expect(formatNumber(-1_000)).toBe("-1,000");
  });

  it("shows rates and differences with one decimal", () => {
    expect(formatRate(0.9754)).toBe("97.5%");
    expect(formatRate(0)).toBe("0.0%");
    expect(formatRate(null)).toBe("–");
    expect(formatPoints(0.052)).toBe("5.2 pts");
    expect(formatPoints(-0.0149, false)).toBe("-1.5");
    expect(formatPValue(0.0004)).toBe("p < 0.001");
    expect(formatPValue(0.0456)).toBe("p = 0.046");
  });
});

describe("times: relative, never raw ISO", () => {
  const now = new Date("2026-11-29T12:00:00.000Z");
  it("says how long ago, or how soon", () => {
    expect(formatRelativeTime("2026-11-29T11:59:40.000Z", now)).toBe("just now");
    expect(formatRelativeTime("2026-11-29T11:55:00.000Z", now)).toBe("5 min ago");
    expect(formatRelativeTime("2026-11-29T09:00:00.000Z", now)).toBe("3 h ago");
    expect(formatRelativeTime("2026-11-29T12:20:00.000Z", now)).toBe("in 20 min");
    expect(formatRelativeTime("2026-11-28T12:00:00.000Z", now)).toBe("1 day ago");
    expect(formatRelativeTime("2026-11-26T12:00:00.000Z", now)).toBe("3 days ago");
  });

  it("falls back to the local date beyond a week, and to the fallback for no date", () => {
    const old = "2026-10-01T12:00:00.000Z";
    expect(formatRelativeTime(old, now)).toBe(new Date(old).toLocaleDateString());
    expect(formatRelativeTime(old, now)).not.toContain("T12:00");
    expect(formatRelativeTime(null, now)).toBe("N/A");
    expect(formatRelativeTime("not a date", now)).toBe("N/A");
  });
});
