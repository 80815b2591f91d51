import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LimitsWorld, PER_IP, PER_KEY, startLimitsWorld } from "./limits-world.ts";
import { recordSecurityFigure } from "./report.ts";

/**
 * Rate limits shared by two API processes through Redis. Runs only when REDIS_URL names a Redis
 * server (CI sets it; vitest.config.ts leaves `*.redis.security.test.ts` out otherwise): without
 * one, each process counts alone, which abuse-limits.security.test.ts covers.
 */
const REDIS_URL = process.env.REDIS_URL;

let world: LimitsWorld;
beforeAll(async () => {
  if (!REDIS_URL) throw new Error("rate-limits.redis.security.test.ts needs REDIS_URL");
  world = await startLimitsWorld({ redisUrl: REDIS_URL });
});
afterAll(async () => {
  await world?.stop();
});

describe("rate limits across two API processes sharing Redis", () => {
  it("lets exactly the per-key limit through when 10× the limit is fired at both processes", async () => {
    const { first, second, creator, upstream, webhookApp, newKey, call } = world;
    const slug = await webhookApp({ priceCents: 1 });
    const key = await newKey(creator);
    const before = upstream.calls;
    const statuses: number[] = [];
    const passedOn = [0, 0];
    // 200 calls in waves of 20 concurrent, alternating between the two processes, each from its
    // own address so only the per-key limit applies.
    for (let wave = 0; wave < 10; wave++) {
      const answers = await Promise.all(
        Array.from({ length: PER_KEY }, (_, i) =>
          call(i % 2 === 0 ? first : second, slug, key, `203.0.113.${(wave * 20 + i) % 250}`),
        ),
      );
      answers.forEach((answer, i) => {
        statuses.push(answer.status);
        if (answer.status === 200) passedOn[i % 2] = (passedOn[i % 2] ?? 0) + 1;
      });
      const limited = answers.find((a) => a.status === 429);
      if (limited) expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // Both processes served calls, and together they let the limit through once, not twice.
    expect(passedOn[0]).toBeGreaterThan(0);
    expect(passedOn[1]).toBeGreaterThan(0);
    const upstreamCalls = upstream.calls - before;
    const overshootPct = (Math.max(0, upstreamCalls - PER_KEY) / PER_KEY) * 100;
    recordSecurityFigure("ratelimit_overshoot_pct", overshootPct);
    expect(statuses).toHaveLength(10 * PER_KEY);
    expect(statuses.filter((s) => s === 200)).toHaveLength(PER_KEY);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9 * PER_KEY);
    expect(upstreamCalls).toBe(PER_KEY);
    expect(overshootPct).toBeLessThanOrEqual(1);
  });

  it("limits one address across keys and processes, and another address is unaffected", async () => {
    const { first, second, creator, webhookApp, newKey, call, nextIp } = world;
    const slug = await webhookApp({ priceCents: 1 });
    const keys = [await newKey(creator), await newKey(creator)];
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < PER_IP + 5; i++) {
      const answer = await call(i % 2 ? first : second, slug, keys[i % 2] as string, ip);
      statuses.push(answer.status);
    }
    expect(statuses.slice(0, PER_IP).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(PER_IP)).toEqual([429, 429, 429, 429, 429]);
    expect((await call(first, slug, keys[0] as string, nextIp())).status).toBe(200);
  });
});
