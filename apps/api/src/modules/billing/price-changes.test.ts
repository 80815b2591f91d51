import { describe, expect, it } from "vitest";
import { effectivePriceCents, type PriceColumns, priceFields, setPrice } from "./price-changes.ts";

const DAY = 86_400_000;
const now = new Date("2026-03-01T12:00:00.000Z");
const later = (ms: number) => new Date(now.getTime() + ms);
const notice = { now, noticeMs: 7 * DAY };
const plain = (priceCents: number): PriceColumns => ({
  priceCents,
  pendingPriceCents: null,
  pendingPriceAt: null,
});

describe("setPrice", () => {
  it("announces an increase for the end of the notice period and keeps charging the old price until then", () => {
    const raised = setPrice(plain(10), 5000, notice);
    expect(raised).toEqual({ priceCents: 10, pendingPriceCents: 5000, pendingPriceAt: later(7 * DAY) });
    expect(effectivePriceCents(raised, now)).toBe(10);
    expect(effectivePriceCents(raised, later(7 * DAY - 1))).toBe(10);
    expect(effectivePriceCents(raised, later(7 * DAY))).toBe(5000);
  });

  it("applies a decrease at once and withdraws an announced increase", () => {
    expect(setPrice(plain(100), 40, notice)).toEqual(plain(40));
    const raised = setPrice(plain(100), 500, notice);
    expect(setPrice(raised, 100, notice)).toEqual(plain(100));
    expect(setPrice(raised, 60, notice)).toEqual(plain(60));
  });

  it("leaves the row alone when an editor saves the price the creator already set", () => {
    const raised = setPrice(plain(10), 50, notice);
    expect(setPrice(raised, 50, { ...notice, now: later(DAY) })).toEqual(raised);
    // An increase already due is not folded in: a late renewal still finds the price its period ended at.
    expect(setPrice(raised, 50, { ...notice, now: later(8 * DAY) })).toEqual(raised);
  });

  it("restarts the notice for a higher increase, and keeps the announced moment for a lower one", () => {
    const raised = setPrice(plain(10), 50, notice);
    const higher = setPrice(raised, 80, { ...notice, now: later(3 * DAY) });
    expect(higher).toEqual({ priceCents: 10, pendingPriceCents: 80, pendingPriceAt: later(10 * DAY) });
    const lower = setPrice(raised, 30, { ...notice, now: later(3 * DAY) });
    expect(lower).toEqual({ priceCents: 10, pendingPriceCents: 30, pendingPriceAt: later(7 * DAY) });
  });

  it("builds a new increase on a due one: the due price is the price, the new one waits its notice", () => {
    const raised = setPrice(plain(10), 50, notice);
    expect(setPrice(raised, 80, { ...notice, now: later(8 * DAY) })).toEqual({
      priceCents: 50,
      pendingPriceCents: 80,
      pendingPriceAt: later(15 * DAY),
    });
  });
});

describe("priceFields", () => {
  it("shows the price now and the increase still to come, and nothing pending once it applies", () => {
    const raised = setPrice(plain(10), 50, notice);
    expect(priceFields(raised, now)).toEqual({
      price_cents: 10,
      pending_price_cents: 50,
      pending_price_at: later(7 * DAY).toISOString(),
    });
    expect(priceFields(raised, later(7 * DAY))).toEqual({
      price_cents: 50,
      pending_price_cents: null,
      pending_price_at: null,
    });
  });
});
