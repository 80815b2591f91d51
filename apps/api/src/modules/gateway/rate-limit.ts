import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../lib/errors.ts";

export interface RateLimitResult {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one call for `key`; throws a 429 AppError (with headers) past the limit. */
  consume(key: string): RateLimitResult;
}

/**
 * A fixed one-minute window per caller, in memory (one process). Issue 9 moves it to Redis so the
 * limit holds across processes. Windows are dropped as they expire so memory stays bounded.
 */
export function createMemoryRateLimiter(limitPerMinute: number, now: () => number = Date.now): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = now();

  return {
    consume(key) {
      const t = now();
      if (t - lastSweep > 60_000) {
        for (const [k, w] of windows) if (t - w.start >= 60_000) windows.delete(k);
        lastSweep = t;
      }
      let window = windows.get(key);
      if (!window || t - window.start >= 60_000) {
        window = { start: t, count: 0 };
        windows.set(key, window);
      }
      const resetSeconds = Math.max(1, Math.ceil((window.start + 60_000 - t) / 1000));
      if (window.count >= limitPerMinute) {
        throw new AppError(
          "rate_limited",
          `Rate limit of ${limitPerMinute} calls per minute exceeded; retry in ${resetSeconds} s`,
          {
            headers: {
              "retry-after": String(resetSeconds),
              "ratelimit-limit": String(limitPerMinute),
              "ratelimit-remaining": "0",
              "ratelimit-reset": String(resetSeconds),
            },
          },
        );
      }
      window.count += 1;
      return { limit: limitPerMinute, remaining: limitPerMinute - window.count, resetSeconds };
    },
  };
}

export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  return {
    "ratelimit-limit": String(result.limit),
    "ratelimit-remaining": String(result.remaining),
    "ratelimit-reset": String(result.resetSeconds),
  };
}

/** The onRequest hook both gateways use: one window per API key, or per user for token callers. */
export function rateLimitHook(rateLimiter: RateLimiter) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = request.user;
    const key = request.apiKeyId ? `key:${request.apiKeyId}` : `user:${caller?.id ?? request.ip}`;
    reply.headers(rateLimitHeaders(rateLimiter.consume(key)));
  };
}
