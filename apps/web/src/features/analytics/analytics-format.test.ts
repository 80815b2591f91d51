import { describe, expect, it } from "vitest";
import {
  formatChartDay,
  formatChartDayLong,
  formatCompactNumber,
  formatErrorType,
  formatInvocationId,
} from "../../lib/analytics-format";
import { parseAnalyticsWindow } from "../../lib/analytics-window";
import { sliceErrors } from "./top-errors-card";

describe("analytics formats", () => {
  it("shows series days short on axes and in full in tooltips, as the UTC day they name", () => {
    expect(formatChartDay("2025-11-03")).toBe("Nov 3");
    expect(formatChartDay("2025-01-31")).toBe("Jan 31");
    expect(formatChartDayLong("2025-11-03")).toBe("Nov 3, 2025");
    expect(formatChartDay("not a day")).toBe("not a day");
  });

  it("abbreviates large counts on axes", () => {
    expect(formatCompactNumber(950)).toBe("950");
    expect(formatCompactNumber(1500)).toBe("1.5K");
    expect(formatCompactNumber(2_000_000)).toBe("2M");
  });

  it("names an invocation by its first 8 characters and an ellipsis", () => {
    expect(formatInvocationId("3f2a9c1e-7b4d-4e8a-9c0d-1a2b3c4d5e6f")).toBe("3f2a9c1e…");
    expect(formatInvocationId("short")).toBe("short");
  });

  it("reads a missing or blank error type as 'Unknown Error'", () => {
    expect(formatErrorType(null)).toBe("Unknown Error");
    expect(formatErrorType("  ")).toBe("Unknown Error");
    expect(formatErrorType("upstream_timeout")).toBe("upstream_timeout");
  });

  it("merges errors shown under the same name and orders them largest first", () => {
    expect(
      sliceErrors([
        { error_type: "rate_limited", count: 2 },
        { error_type: null, count: 1 },
        { error_type: "", count: 4 },
      ]),
    ).toEqual([
      { name: "Unknown Error", value: 5 },
      { name: "rate_limited", value: 2 },
    ]);
  });

  it("accepts only the 7, 30 and 90 day windows, defaulting to 30", () => {
    expect(parseAnalyticsWindow("7")).toBe(7);
    expect(parseAnalyticsWindow("90")).toBe(90);
    expect(parseAnalyticsWindow("14")).toBe(30);
    expect(parseAnalyticsWindow(null)).toBe(30);
  });
});
