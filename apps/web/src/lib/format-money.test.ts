import { describe, expect, it } from "vitest";
import { formatDeductionMicros, formatMicros } from "./format";

// The money figures (decision 029): two decimals, and enough more that a sub-cent figure never reads as zero.
describe("money figures", () => {
  it("shows whole cents with two decimals and sub-cent amounts with the digits they need", () => {
    expect(formatMicros(600_000)).toBe("$0.60");
    expect(formatMicros(1_234_560_000)).toBe("$1,234.56");
    expect(formatMicros(5_000)).toBe("$0.005");
    expect(formatMicros(1)).toBe("$0.000001");
    expect(formatMicros(86_667)).toBe("$0.086667");
    expect(formatMicros(0)).toBe("$0.00");
  });

  it("shows a fee or a cost taken off as a deduction, and nothing taken as $0.00", () => {
    expect(formatDeductionMicros(60_000)).toBe("-$0.06");
    expect(formatDeductionMicros(5_000)).toBe("-$0.005");
    expect(formatDeductionMicros(-5_000)).toBe("-$0.005");
    expect(formatDeductionMicros(0)).toBe("$0.00");
  });
});
