import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holds, signInFailures } from "../db/schema/index.ts";
import { createRedisRateLimiter } from "../modules/gateway/rate-limit.ts";
import { createCaller, fundWallet } from "../test/caller.ts";
import { signUp, startSignIn } from "../test/oidc-client.ts";
import { type LimitsWorld, PER_IP, PER_KEY, startLimitsWorld } from "./limits-world.ts";

/**
 * Limits and abuse on two API processes, with Redis when REDIS_URL is set and without it otherwise
 * (the limits shared through Redis are rate-limits.redis.security.test.ts's).
 */
let world: LimitsWorld;
beforeAll(async () => {
  world = await startLimitsWorld({ redisUrl: process.env.REDIS_URL });
});
afterAll(async () => {
  await world?.stop();
});

describe("rate limits in one API process", () => {
  it("ignores X-Forwarded-For from a client that is not a trusted proxy", async () => {
    const { first, creator, webhookApp, newKey } = world;
    const slug = await webhookApp({ priceCents: 1 });
    const key = await newKey(creator);
    const statuses: number[] = [];
    for (let i = 0; i < PER_IP + 2; i++) {
      const response = await first.app.inject({
        method: "POST",
        url: `/api/app/${slug}/completion-messages`,
        remoteAddress: "192.0.2.77",
        headers: {
          authorization: `Bearer ${key}`,
          "x-forwarded-for": `203.0.113.${i}`,
          "content-type": "application/json",
        },
        payload: { inputs: {}, query: "hi" },
      });
      statuses.push(response.statusCode);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
  });

  it("keeps limiting in memory, with a warning, when Redis cannot be reached", async () => {
    const warnings: string[] = [];
    const log = {
      warn: (...args: unknown[]) => warnings.push(args.map(String).join(" ")),
      info: () => {},
    } as never;
    const limiter = createRedisRateLimiter(
      { perCallerPerMinute: 3, perIpPerMinute: 100 },
      { url: "redis://127.0.0.1:1", keyPrefix: "pm-unreachable:", log, commandTimeoutMs: 200 },
    );
    try {
      const results: string[] = [];
      for (let i = 0; i < 5; i++) {
        results.push(
          await limiter.consume({ caller: "key:k", ip: "1.2.3.4" }).then(
            () => "ok",
            (e: { status?: number }) => String(e.status),
          ),
        );
      }
      expect(results).toEqual(["ok", "ok", "ok", "429", "429"]);
      expect(warnings.some((w) => w.includes("Redis unreachable"))).toBe(true);
    } finally {
      await limiter.close();
    }
  });
});

describe("abuse of the paid path", () => {
  it("sends a zero-balance caller's flood to 402 without a single upstream call", async () => {
    const { first, second, upstream, webhookApp, newKey, call, nextIp } = world;
    const slug = await webhookApp({ priceCents: 50 });
    const broke = await createCaller(first.baseUrl, "Broke Caller");
    const key = await newKey(broke);
    const before = upstream.calls;
    const ip = nextIp();
    const answers = await Promise.all(
      Array.from({ length: PER_KEY }, (_, i) => call(i % 2 ? first : second, slug, key, ip)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(PER_KEY).fill(402));
    expect(upstream.calls - before).toBe(0);
  });

  it("charges nothing and leaves no hold when the upstream answers too much, too late or not JSON", async () => {
    const { first, second, upstream, webhookApp, newKey, call, nextIp } = world;
    const consumer = await createCaller(first.baseUrl, "Paying Caller");
    await fundWallet(consumer, 1000);
    const key = await newKey(consumer);
    const slug = await webhookApp({ priceCents: 25, timeoutSeconds: 1 });
    const balance = async () =>
      ((await consumer.api("GET", "/api/wallet/")).body.balance_micros / 10_000) as number;
    const start = await balance();
    expect(start).toBe(1000);

    upstream.set("huge");
    const huge = await call(first, slug, key, nextIp());
    expect(huge.status).toBe(502);
    expect(huge.body?.message).toMatch(/exceeded/);

    upstream.set("malformed");
    const malformed = await call(second, slug, key, nextIp());
    expect(malformed.status).toBe(502);

    upstream.set("hang");
    const began = Date.now();
    const slow = await call(first, slug, key, nextIp());
    expect(slow.status).toBe(504);
    // Only tells the app's timeout from the default 300 s: no load on the machine reaches it (decision 066).
    expect(Date.now() - began).toBeLessThan(30_000);
    upstream.set("ok");

    expect(await balance()).toBe(start);
    const db = first.database.db;
    const open = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(holds)
      .where(and(eq(holds.status, "held")));
    expect(open[0]?.n).toBe(0);

    // And a good answer is charged once, so the checks above could have failed.
    expect((await call(second, slug, key, nextIp())).status).toBe(200);
    expect(await balance()).toBe(start - 25);
  });
});

describe("sign-in throttling under a password-guessing loop", () => {
  it("checks at most 5 guesses, concurrent or not, then refuses even the right password until the window passes", async () => {
    const { first, second } = world;
    const person = await signUp(first.baseUrl, { password: "Right-horse-42" });
    const journeys = await Promise.all(Array.from({ length: 20 }, () => startSignIn(first.baseUrl)));
    const guesses = await Promise.all(
      journeys.map((journey, i) =>
        journey.submit("login", { email: person.email, password: `wrong-guess-${i}` }),
      ),
    );
    // A burst: however the 20 interleave, at most 5 passwords are actually checked.
    const burstChecked = guesses.filter((g) => g.status === 401).length;
    const throttled = guesses.filter((g) => g.status === 429).length;
    expect(burstChecked).toBeLessThanOrEqual(5);
    expect(burstChecked + throttled).toBe(20);
    // Then a steady loop: only the rest of the 5 are checked, everything after is refused.
    const loop: number[] = [];
    for (let i = 0; i < 8; i++) {
      const guess = await (await startSignIn(second.baseUrl)).submit("login", {
        email: person.email,
        password: `loop-guess-${i}`,
      });
      loop.push(guess.status);
    }
    expect(burstChecked + loop.filter((s) => s === 401).length).toBe(5);
    expect(loop.slice(5 - burstChecked).every((s) => s === 429)).toBe(true);

    const right = await (await startSignIn(first.baseUrl)).submit("login", {
      email: person.email,
      password: "Right-horse-42",
    });
    expect(right.status).toBe(429);
    expect(right.tokens).toBeUndefined();

    // The 15-minute window passes.
    await first.database.db
      .update(signInFailures)
      .set({ failedAt: new Date(Date.now() - 16 * 60_000) })
      .where(eq(signInFailures.email, person.email));
    const later = await (await startSignIn(second.baseUrl)).submit("login", {
      email: person.email,
      password: "Right-horse-42",
    });
    expect(later.tokens?.access_token).toBeTruthy();
  });
});
