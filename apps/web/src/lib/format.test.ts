import { describe, expect, it } from "vitest";
import {
  formatCents,
  formatDate,
  formatDateTime,
  formatDollars,
  formatNumber,
  formatPercent,
  formatPriceNotice,
  formatRating,
  formatReviewCount,
  formatSeconds,
  scheduledPriceCents,
} from "./format";

describe("format", () => {
  it("shows cents as dollars with 2 decimals", () => {
    expect(formatCents(100)).toBe("$1.00");
    expect(formatCents(1)).toBe("$0.01");
    expect(formatCents(123456)).toBe("$1,234.56");
    expect(formatCents(0)).toBe("$0.00");
  });

  it("shows dollar amounts with 2 decimals, rounding half up", () => {
    expect(formatDollars(12.5)).toBe("$12.50");
    expect(formatDollars(0.125)).toBe("$0.13");
    expect(formatDollars(-3)).toBe("-$3.00");
  });

  it("formats money and counts exactly as Intl.NumberFormat (en-US) would", () => {
    const money = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    const count = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
    const values = [
      0, 0.005, 0.0049, 0.995, 1.005, 2.5, 2.675, 9.995, 12.345, 999.5, 99999.995, 1234567.895, 1e-7,
      13336466856.445, 67086996448.604996, 1e20, -2.5, -1.005, -1234.5,
    ];
    for (const value of values) {
      const sign = value < 0 ? "-" : "";
      expect(formatDollars(value)).toBe(`${sign}$${money.format(Math.abs(value))}`);
      expect(formatNumber(value)).toBe(count.format(value));
    }
  });

  it("shows percentages with one decimal", () => {
    expect(formatPercent(97.54)).toBe("97.5%");
    expect(formatPercent(100)).toBe("100.0%");
    expect(formatPercent(0)).toBe("0.0%");
  });

  it("separates thousands in counts", () => {
    expect(formatNumber(1234567)).toBe("1,234,567");
    expect(formatNumber(12)).toBe("12");
  });

  it("shows seconds with the requested decimals and an s suffix", () => {
    expect(formatSeconds(1.23456, 3)).toBe("1.235s");
    expect(formatSeconds(0.5)).toBe("0.50s");
  });

  it("shows a local date, or the fallback for a missing or invalid one", () => {
    const iso = "2024-03-15T10:00:00.000Z";
    expect(formatDate(iso)).toBe(new Date(iso).toLocaleDateString());
    expect(formatDateTime(iso)).toBe(new Date(iso).toLocaleString());
    expect(formatDate("")).toBe("N/A");
    expect(formatDate(null)).toBe("N/A");
    expect(formatDate("not a date", "Never")).toBe("Never");
  });

  it("announces a raised price with its moment, and nothing when none is announced", () => {
    const at = "2026-03-08T12:00:00.000Z";
    const raised = { price_cents: 5, pending_price_cents: 50, pending_price_at: at };
    expect(formatPriceNotice(raised, " per call")).toBe(
      `Rises to $0.50 per call on ${new Date(at).toLocaleString()}`,
    );
    expect(formatPriceNotice({ pending_price_cents: null, pending_price_at: null })).toBeNull();
    expect(scheduledPriceCents(raised)).toBe(50);
    expect(scheduledPriceCents({ ...raised, pending_price_cents: null, pending_price_at: null })).toBe(5);
  });

  it("shows an average rating with one decimal and counts reviews in words", () => {
    expect(formatRating(4.25)).toBe("4.3");
    expect(formatRating(5)).toBe("5.0");
    expect(formatRating(null)).toBe("–");
    expect(formatReviewCount(1)).toBe("1 review");
    expect(formatReviewCount(0)).toBe("0 reviews");
    expect(formatReviewCount(1204)).toBe("1,204 reviews");
  });
});
