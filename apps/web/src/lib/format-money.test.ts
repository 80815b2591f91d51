import { describe, expect, it } from "vitest";
import { formatDeductionMicros, formatMicros, formatMicrosExact, formatSignedMicros } from "./format";

// Money as people read it: two decimals, the exact figure one hover away (decision 029, issue 32).
describe("money figures", () => {
  it("shows two decimals, a half cent rounded away from zero, and something below half a cent as <$0.01", () => {
    expect(formatMicros(600_000)).toBe("$0.60");
    expect(formatMicros(1_234_560_000)).toBe("$1,234.56");
    expect(formatMicros(83_565_000)).toBe("$83.57");
    expect(formatMicros(83_564_999)).toBe("$83.56");
    expect(formatMicros(-45_000)).toBe("-$0.05");
    expect(formatMicros(5_000)).toBe("$0.01");
    expect(formatMicros(4_999)).toBe("<$0.01");
    expect(formatMicros(1)).toBe("<$0.01");
    expect(formatMicros(0)).toBe("$0.00");
    expect(formatMicros(999_995_000)).toBe("$1,000.00");
  });

  it("shows the exact figure with the sub-cent digits it needs", () => {
    expect(formatMicrosExact(600_000)).toBe("$0.60");
    expect(formatMicrosExact(5_000)).toBe("$0.005");
    expect(formatMicrosExact(1)).toBe("$0.000001");
    expect(formatMicrosExact(86_667)).toBe("$0.086667");
    expect(formatMicrosExact(83_565_000)).toBe("$83.565");
  });

  it("shows a fee or a cost taken off as a deduction, and nothing taken as $0.00", () => {
    expect(formatDeductionMicros(60_000)).toBe("-$0.06");
    expect(formatDeductionMicros(5_000)).toBe("-$0.01");
    expect(formatDeductionMicros(-5_000)).toBe("-$0.01");
    expect(formatDeductionMicros(0)).toBe("$0.00");
  });

  it("signs what came in", () => {
    expect(formatSignedMicros(45_000)).toBe("+$0.05");
    expect(formatSignedMicros(-45_000)).toBe("-$0.05");
  });
});
