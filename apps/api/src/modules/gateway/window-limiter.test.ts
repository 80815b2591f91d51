import { describe, expect, it } from "vitest";
import { refusal } from "../../test/refusal.ts";
import { createWindowLimiter } from "./rate-limit.ts";

const TEN_MINUTES = 10 * 60_000;

describe("window limiter, in memory", () => {
  it("lets `limit` calls per key through per window, then 429 with Retry-After until the window ends", async () => {
    let now = 1_000_000;
    const limiter = createWindowLimiter({
      name: "test",
      limit: 3,
      windowMs: TEN_MINUTES,
      what: "registrations from one address",
      now: () => now,
    });
    for (let i = 0; i < 3; i++) await limiter.hit("198.51.100.1");
    now += 60_000;
    const refused = await refusal(limiter.hit("198.51.100.1"));
    expect(refused.status).toBe(429);
    expect(refused.headers?.["retry-after"]).toBe("540");
    expect(refused.message).toMatch(/3 registrations from one address per 10 minutes/);
    await limiter.hit("198.51.100.2");
    now += 9 * 60_000;
    await limiter.hit("198.51.100.1");
  });
});
