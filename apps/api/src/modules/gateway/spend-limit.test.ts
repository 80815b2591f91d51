import { describe, expect, it } from "vitest";
import { refusal } from "../../test/refusal.ts";
import { createMemoryRateLimiter } from "./rate-limit.ts";

/** docs/decisions/072: a caller's spend per minute, counted at each call's price when admitted. */
describe("spend per minute", () => {
  const limits = { perCallerPerMinute: 1000, perIpPerMinute: 1000, spendPerCallerPerMinuteCents: 500 };

  it("admits calls until the next would pass the budget, then 429 naming the money limit", async () => {
    let t = 0;
    const limiter = createMemoryRateLimiter(limits, () => t);
    for (let i = 0; i < 5; i++) await limiter.spend("key:a", 100);
    t = 20_000;
    const refused = await refusal(limiter.spend("key:a", 1));
    expect(refused.status).toBe(429);
    expect(refused.code).toBe("rate_limited");
    expect(refused.message).toContain("Spend limit of $5.00 per minute");
    expect(refused.message).toContain("$5.00 spent in this minute");
    expect(refused.headers?.["retry-after"]).toBe("40");
    // Another caller has a budget of its own.
    await limiter.spend("key:b", 500);
    // The window ends a minute after it opened.
    t = 60_000;
    await limiter.spend("key:a", 500);
  });

  it("refuses a call that would pass the budget even when a smaller one still fits", async () => {
    const limiter = createMemoryRateLimiter(limits, () => 0);
    await limiter.spend("key:a", 300);
    expect((await refusal(limiter.spend("key:a", 300))).message).toContain("this call costs $3.00");
    await limiter.spend("key:a", 200);
  });

  it("admits the first call of a window whatever its price, and none after it", async () => {
    const limiter = createMemoryRateLimiter(limits, () => 0);
    await limiter.spend("key:a", 2_000);
    await refusal(limiter.spend("key:a", 1));
  });

  it("gives back a price once when the call is refused before it is paid", async () => {
    const limiter = createMemoryRateLimiter(limits, () => 0);
    await limiter.spend("key:a", 400);
    const refusedLater = await limiter.spend("key:a", 100);
    await refusal(limiter.spend("key:a", 100));
    await refusedLater.giveBack();
    await refusedLater.giveBack();
    await limiter.spend("key:a", 100);
    await refusal(limiter.spend("key:a", 100));
  });

  it("counts nothing without a budget or for a free call", async () => {
    const unbudgeted = createMemoryRateLimiter({ perCallerPerMinute: 1, perIpPerMinute: 1 }, () => 0);
    for (let i = 0; i < 3; i++) await unbudgeted.spend("key:a", 1_000_000);
    const limiter = createMemoryRateLimiter(limits, () => 0);
    await limiter.spend("key:a", 500);
    await limiter.spend("key:a", 0);
  });
});
