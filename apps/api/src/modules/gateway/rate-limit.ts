import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import { Redis } from "ioredis";
import { AppError } from "../../lib/errors.ts";
import { isWarmUpRequest } from "../../lib/warm-up-requests.ts";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * Counts a call's price against its caller's spend per minute (set by rateLimitHook; absent
     * where no paid limit applies): throws a 429 past the budget, else gives back the price with
     * `giveBack` when the call is then refused before it is paid (call-lifecycle.ts payForCall).
     */
    spendBudget?: (cents: number) => Promise<SpendAdmission>;
  }
}

/** A call's price counted in its caller's spend window; `giveBack` uncounts it (once). */
export interface SpendAdmission {
  giveBack(): Promise<void>;
}

export interface RateLimitResult {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface RateLimiter {
  /**
   * Counts one call for the caller (API key or user) and one for the client's IP address; throws
   * a 429 AppError (with Retry-After and RateLimit headers) when either is past its limit. A key
   * left out is not counted (a request not yet authenticated has only its address).
   */
  consume(keys: { caller?: string; ip?: string }): Promise<RateLimitResult>;
  /**
   * Counts `cents` (a call's price, when it is admitted) against the caller's spend in its current
   * one-minute window; throws a 429 AppError with Retry-After when the call would take the window
   * past `spendPerCallerPerMinuteCents`. The first call of a window is always admitted, so an app
   * priced above the whole budget can still be called once a minute. A limiter without a spend
   * budget admits everything.
   */
  spend(caller: string, cents: number): Promise<SpendAdmission>;
  close(): Promise<void>;
}

export interface RateLimits {
  perCallerPerMinute: number;
  perIpPerMinute: number;
  /** What is counted, as the 429 names it (default: paid calls). */
  names?: { caller: string; ip: string };
  /** Cents a caller may spend per minute (GATEWAY_SPEND_PER_MINUTE_CENTS); none when left out. */
  spendPerCallerPerMinuteCents?: number;
}

const CALL_NAMES = { caller: "calls per minute", ip: "calls per minute from one address" };

/** How many calls `key` made in its current window, this one included, and when the window ends. */
type WindowCounter = (key: string) => Promise<{ count: number; resetMs: number }>;

/**
 * A sum per key per window: `add` adds `amount` unless the window already holds something and the
 * sum would pass `limit` (then nothing is added); `remove` takes an amount added back out.
 */
interface WindowBudget {
  add(
    key: string,
    amount: number,
    limit: number,
  ): Promise<{ admitted: boolean; total: number; resetMs: number }>;
  remove(key: string, amount: number): Promise<void>;
}

const NOTHING_SPENT: SpendAdmission = { giveBack: async () => {} };

/** Cents as dollars for a message: 500 → "$5.00". */
const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

const WINDOW_MS = 60_000;

/**
 * Fixed one-minute windows: a key's window opens at its first call and lasts 60 s. Every call,
 * refused ones included, increments the counter, so exactly `limit` calls pass per window however
 * many processes count into the same Redis.
 */
function createLimiter(
  limits: RateLimits,
  count: WindowCounter,
  close: () => Promise<void>,
  budget?: WindowBudget,
): RateLimiter {
  return {
    async spend(caller, cents) {
      const limit = limits.spendPerCallerPerMinuteCents;
      if (!budget || limit === undefined || cents <= 0) return NOTHING_SPENT;
      const key = `spend:${caller}`;
      const counted = await budget.add(key, cents, limit);
      if (!counted.admitted) {
        const resetSeconds = Math.max(1, Math.ceil(counted.resetMs / 1000));
        throw new AppError(
          "rate_limited",
          `Spend limit of ${dollars(limit)} per minute exceeded: ${dollars(counted.total)} spent in this minute and this call costs ${dollars(cents)}; retry in ${resetSeconds} s`,
          { headers: { "retry-after": String(resetSeconds) } },
        );
      }
      let given = false;
      return {
        async giveBack() {
          if (given) return;
          given = true;
          await budget.remove(key, cents);
        },
      };
    },
    async consume({ caller, ip }) {
      const names = limits.names ?? CALL_NAMES;
      const none = { count: 0, resetMs: WINDOW_MS };
      const [byCaller, byIp] = await Promise.all([
        caller === undefined ? none : count(`caller:${caller}`),
        ip === undefined ? none : count(`ip:${ip}`),
      ]);
      const refusedBy =
        byCaller.count > limits.perCallerPerMinute
          ? { limit: limits.perCallerPerMinute, resetMs: byCaller.resetMs, what: names.caller }
          : byIp.count > limits.perIpPerMinute
            ? { limit: limits.perIpPerMinute, resetMs: byIp.resetMs, what: names.ip }
            : undefined;
      if (refusedBy) {
        const resetSeconds = Math.max(1, Math.ceil(refusedBy.resetMs / 1000));
        throw new AppError(
          "rate_limited",
          `Rate limit of ${refusedBy.limit} ${refusedBy.what} exceeded; retry in ${resetSeconds} s`,
          {
            headers: {
              "retry-after": String(resetSeconds),
              "ratelimit-limit": String(refusedBy.limit),
              "ratelimit-remaining": "0",
              "ratelimit-reset": String(resetSeconds),
            },
          },
        );
      }
      const [limit, counted] =
        caller === undefined ? [limits.perIpPerMinute, byIp] : [limits.perCallerPerMinute, byCaller];
      return {
        limit,
        remaining: limit - counted.count,
        resetSeconds: Math.max(1, Math.ceil(counted.resetMs / 1000)),
      };
    },
    close,
  };
}

function createMemoryCounter(now: () => number, windowMs = WINDOW_MS): WindowCounter {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = now();
  return async (key) => {
    const t = now();
    // Windows are dropped as they expire so memory stays bounded.
    if (t - lastSweep > windowMs) {
      for (const [k, w] of windows) if (t - w.start >= windowMs) windows.delete(k);
      lastSweep = t;
    }
    let window = windows.get(key);
    if (!window || t - window.start >= windowMs) {
      window = { start: t, count: 0 };
      windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetMs: window.start + windowMs - t };
  };
}

function createMemoryBudget(now: () => number, windowMs = WINDOW_MS): WindowBudget {
  const windows = new Map<string, { start: number; total: number }>();
  let lastSweep = now();
  return {
    async add(key, amount, limit) {
      const t = now();
      if (t - lastSweep > windowMs) {
        for (const [k, w] of windows) if (t - w.start >= windowMs) windows.delete(k);
        lastSweep = t;
      }
      let window = windows.get(key);
      if (!window || t - window.start >= windowMs) {
        window = { start: t, total: 0 };
        windows.set(key, window);
      }
      const resetMs = window.start + windowMs - t;
      if (window.total > 0 && window.total + amount > limit)
        return { admitted: false, total: window.total, resetMs };
      window.total += amount;
      return { admitted: true, total: window.total, resetMs };
    },
    async remove(key, amount) {
      const window = windows.get(key);
      if (window) window.total = Math.max(0, window.total - amount);
    },
  };
}

/** Limits counted in this process only (no REDIS_URL, or one process). */
export function createMemoryRateLimiter(limits: RateLimits, now: () => number = Date.now): RateLimiter {
  return createLimiter(limits, createMemoryCounter(now), async () => {}, createMemoryBudget(now));
}

// INCR and the window's expiry in one atomic step: no process can see a counter without a TTL.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}
`;

// The spend window: admitted (1) and added when empty or when the sum stays within the limit, else
// refused (0) and left as it was; either way the window has its expiry.
const SPEND_SCRIPT = `
local total = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local admitted = 1
if total > 0 and total + amount > limit then
  admitted = 0
else
  total = redis.call('INCRBY', KEYS[1], amount)
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {admitted, total, ttl}
`;

// An amount given back to the window it was added to, if that window still exists (never below 0).
const GIVE_BACK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local total = redis.call('DECRBY', KEYS[1], ARGV[1])
if total < 0 then redis.call('INCRBY', KEYS[1], -total) end
return 1
`;

interface RedisCounterOptions {
  url: string;
  keyPrefix: string;
  log: FastifyBaseLogger;
  commandTimeoutMs?: number;
}

/**
 * A window counter shared by every process on one Redis. When Redis cannot answer (not connected,
 * or slower than `commandTimeoutMs`), calls are counted in this process instead, with a warning:
 * the limits keep holding per process rather than failing open entirely or refusing every call.
 * The timeout is generous because a busy event loop can delay reading a reply that already arrived.
 */
function createRedisCounter(
  options: RedisCounterOptions,
  windowMs: number,
): { count: WindowCounter; budget: WindowBudget; close: () => Promise<void> } {
  const redis = new Redis(options.url, {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  const fallback = createMemoryCounter(Date.now, windowMs);
  const fallbackBudget = createMemoryBudget(Date.now, windowMs);
  let degraded = false;
  redis.on("error", (err) => {
    if (!degraded) options.log.warn({ err }, "Redis unreachable: rate limits are counted per process");
    degraded = true;
  });
  redis.on("ready", () => {
    if (degraded) options.log.info("Redis reachable again: rate limits are shared across processes");
    degraded = false;
  });

  const count: WindowCounter = async (key) => {
    if (redis.status !== "ready") {
      if (!degraded) options.log.warn("Redis unreachable: rate limits are counted per process");
      degraded = true;
      return fallback(key);
    }
    try {
      const [count, ttl] = (await redis.eval(HIT_SCRIPT, 1, `${options.keyPrefix}rl:${key}`, windowMs)) as [
        number,
        number,
      ];
      return { count, resetMs: ttl };
    } catch (err) {
      if (!degraded) options.log.warn({ err }, "Redis unreachable: rate limits are counted per process");
      degraded = true;
      return fallback(key);
    }
  };
  const unreachable = (err?: unknown) => {
    if (!degraded) options.log.warn({ err }, "Redis unreachable: rate limits are counted per process");
    degraded = true;
  };
  const budget: WindowBudget = {
    async add(key, amount, limit) {
      if (redis.status !== "ready") {
        unreachable();
        return fallbackBudget.add(key, amount, limit);
      }
      try {
        const [admitted, total, ttl] = (await redis.eval(
          SPEND_SCRIPT,
          1,
          `${options.keyPrefix}rl:${key}`,
          windowMs,
          amount,
          limit,
        )) as [number, number, number];
        return { admitted: admitted === 1, total, resetMs: ttl };
      } catch (err) {
        unreachable(err);
        return fallbackBudget.add(key, amount, limit);
      }
    },
    async remove(key, amount) {
      await fallbackBudget.remove(key, amount);
      if (redis.status !== "ready") return;
      await redis.eval(GIVE_BACK_SCRIPT, 1, `${options.keyPrefix}rl:${key}`, amount).catch((err) => {
        options.log.warn({ err }, "could not give back a refused call's price to its spend window");
      });
    },
  };
  return {
    count,
    budget,
    close: async () => {
      redis.disconnect();
    },
  };
}

/** The gateway's limits shared by every process on one Redis (see createRedisCounter). */
export function createRedisRateLimiter(limits: RateLimits, options: RedisCounterOptions): RateLimiter {
  const { count, budget, close } = createRedisCounter(options, WINDOW_MS);
  return createLimiter(limits, count, close, budget);
}

/**
 * One limit on one kind of key (e.g. an address) over a window of any length: `hit` counts a call
 * and throws a 429 AppError with Retry-After once the key is past `limit` in its window. Counted in
 * Redis when `redis` is given (shared by every process), else in this process.
 */
export interface WindowLimiter {
  hit(key: string): Promise<void>;
  close(): Promise<void>;
}

export function createWindowLimiter(options: {
  /** Names the keys in Redis, apart from the gateway's and other limiters'. */
  name: string;
  limit: number;
  windowMs: number;
  /** What is limited, for the 429's message ("client registrations from one address"). */
  what: string;
  redis?: RedisCounterOptions;
  now?: () => number;
}): WindowLimiter {
  const { count, close } = options.redis
    ? createRedisCounter(options.redis, options.windowMs)
    : { count: createMemoryCounter(options.now ?? Date.now, options.windowMs), close: async () => {} };
  return {
    async hit(key) {
      const counted = await count(`${options.name}:${key}`);
      if (counted.count <= options.limit) return;
      const resetSeconds = Math.max(1, Math.ceil(counted.resetMs / 1000));
      throw new AppError(
        "rate_limited",
        `Rate limit of ${options.limit} ${options.what} per ${Math.round(options.windowMs / 60_000)} minutes exceeded; retry in ${resetSeconds} s`,
        {
          headers: {
            "retry-after": String(resetSeconds),
            "ratelimit-limit": String(options.limit),
            "ratelimit-remaining": "0",
            "ratelimit-reset": String(resetSeconds),
          },
        },
      );
    },
    close,
  };
}

export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  return {
    "ratelimit-limit": String(result.limit),
    "ratelimit-remaining": String(result.remaining),
    "ratelimit-reset": String(result.resetSeconds),
  };
}

/**
 * The onRequest hook both gateways use: one window per API key (or per user), one per IP address.
 * The start-up rehearsal's calls (warm-up.ts) are not counted: they would spend real addresses'
 * windows (127.0.0.1's, shared through Redis by every process).
 */
export function rateLimitHook(rateLimiter: RateLimiter) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (isWarmUpRequest(request)) return;
    const caller = request.apiKeyId ? `key:${request.apiKeyId}` : `user:${request.user?.id ?? request.ip}`;
    reply.headers(rateLimitHeaders(await rateLimiter.consume({ caller, ip: request.ip })));
    // The call's price is counted when it is admitted, once it is known (call-lifecycle.ts).
    request.spendBudget = (cents) => rateLimiter.spend(caller, cents);
  };
}
