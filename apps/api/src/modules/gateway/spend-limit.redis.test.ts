import { randomBytes } from "node:crypto";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { refusal } from "../../test/refusal.ts";
import { createRedisRateLimiter } from "./rate-limit.ts";

/** Runs only with REDIS_URL (vitest.config.ts leaves `*.redis.*test.ts` out otherwise; CI sets it). */
const REDIS_URL = process.env.REDIS_URL ?? "";

describe("spend per minute, in Redis", () => {
  it("is one budget for every process, and a price given back is spendable again", async () => {
    if (!REDIS_URL) throw new Error("spend-limit.redis.test.ts needs REDIS_URL");
    const options = {
      url: REDIS_URL,
      keyPrefix: `pm-test-${randomBytes(6).toString("hex")}:`,
      log: pino({ level: "silent" }),
    };
    const limits = { perCallerPerMinute: 1000, perIpPerMinute: 1000, spendPerCallerPerMinuteCents: 500 };
    const [a, b] = [createRedisRateLimiter(limits, options), createRedisRateLimiter(limits, options)];
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await a.spend("key:x", 300);
      const second = await b.spend("key:x", 200);
      const refused = await refusal(a.spend("key:x", 100));
      expect(refused.message).toContain("$5.00 spent in this minute");
      expect(Number(refused.headers?.["retry-after"])).toBeGreaterThan(50);
      await second.giveBack();
      await b.spend("key:x", 200);
      await refusal(b.spend("key:x", 1));
    } finally {
      await a.close();
      await b.close();
    }
  });
});
