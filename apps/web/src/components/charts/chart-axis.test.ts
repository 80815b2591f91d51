import { describe, expect, it } from "vitest";
import { dayTicks, tickFormatter, valueTicks } from "./chart-axis";

const days = (count: number) =>
  Array.from({ length: count }, (_, i) => new Date(Date.UTC(2025, 0, 1 + i)).toISOString().slice(0, 10));

describe("chart axes", () => {
  it("labels at most five days, always the last, on a step that depends only on the window", () => {
    expect(dayTicks(days(7))).toEqual(["2025-01-01", "2025-01-03", "2025-01-05", "2025-01-07"]);
    const month = dayTicks(days(30));
    expect(month).toEqual(["2025-01-06", "2025-01-12", "2025-01-18", "2025-01-24", "2025-01-30"]);
    expect(dayTicks(days(90))).toHaveLength(5);
    expect(dayTicks([])).toEqual([]);
  });

  it("steps values by round amounts from zero to a round top", () => {
    expect(valueTicks(0.085, "seconds")).toEqual([0, 0.025, 0.05, 0.075, 0.1]);
    expect(valueTicks(0.09, "dollars")).toEqual([0, 0.025, 0.05, 0.075, 0.1]);
    expect(valueTicks(0.4, "dollars")).toEqual([0, 0.1, 0.2, 0.3, 0.4]);
    expect(valueTicks(37, "count")).toEqual([0, 10, 20, 30, 40]);
    expect(valueTicks(3, "count")).toEqual([0, 1, 2, 3]);
    expect(valueTicks(0, "count")).toEqual([0, 1]);
    expect(valueTicks(0, "dollars")).toEqual([0, 1]);
    expect(valueTicks(1.3, "seconds")).toEqual([0, 0.5, 1, 1.5]);
  });

  it("reads seconds as seconds (SPEC's unit) and dollars with the decimals their step needs", () => {
    const seconds = tickFormatter("seconds", valueTicks(0.085, "seconds"));
    expect(valueTicks(0.085, "seconds").map(seconds)).toEqual(["0", "0.025s", "0.050s", "0.075s", "0.100s"]);
    expect(tickFormatter("seconds", [0, 0.5])(1.5)).toBe("1.50s");
    const cents = tickFormatter("dollars", [0, 0.1]);
    expect([0, 0.1, 0.2].map(cents)).toEqual(["$0.00", "$0.10", "$0.20"]);
    expect(tickFormatter("dollars", [0, 0.025])(0.075)).toBe("$0.075");
    expect(tickFormatter("dollars", [0, 500])(1500)).toBe("$1,500");
    expect(tickFormatter("count", [0, 500])(1500)).toBe("1.5K");
  });
});
