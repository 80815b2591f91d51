import { randomBytes } from "node:crypto";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { refusal } from "../../test/refusal.ts";
import { createWindowLimiter } from "./rate-limit.ts";

/** Runs only with REDIS_URL (vitest.config.ts leaves `*.redis.*test.ts` out otherwise; CI sets it). */
const REDIS_URL = process.env.REDIS_URL ?? "";
const TEN_MINUTES = 10 * 60_000;

describe("window limiter, in Redis", () => {
  it("counts in Redis, shared by every process", async () => {
    if (!REDIS_URL) throw new Error("window-limiter.redis.test.ts needs REDIS_URL");
    const log = pino({ level: "silent" });
    const options = {
      name: "test",
      limit: 2,
      windowMs: TEN_MINUTES,
      what: "registrations from one address",
      redis: { url: REDIS_URL, keyPrefix: `pm-test-${randomBytes(6).toString("hex")}:`, log },
    };
    const [a, b] = [createWindowLimiter(options), createWindowLimiter(options)];
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await a.hit("203.0.113.9");
      await b.hit("203.0.113.9");
      const refused = await refusal(a.hit("203.0.113.9"));
      expect(Number(refused.headers?.["retry-after"])).toBeGreaterThan(590);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
