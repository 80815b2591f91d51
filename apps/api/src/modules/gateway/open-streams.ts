import type { FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../lib/errors.ts";

export interface OpenStreamLimits {
  perKey: number;
  perIp: number;
}

export interface OpenStreams {
  /**
   * Counts a streamed call for its caller (API key, or user) and its client address from now
   * until its response closes, however it closes: ended, failed, or the client gone. Throws a 429
   * naming the limit when either already has its limit open.
   */
  open(request: FastifyRequest, reply: FastifyReply): void;
  /** Streams open now, per caller and per address (for tests and metrics). */
  count(key: { caller?: string; ip?: string }): number;
}

/**
 * A streamed call holds a socket, a response buffer and an upstream call for as long as its
 * client keeps it open, whether or not the client reads: unbounded, 1,000 unread streams grew
 * the process by 290 MB. The rate limit counts calls per minute, not how long they stay open, so
 * open streams are limited on their own, in this process (a stream lives in one process).
 */
export function createOpenStreams(limits: OpenStreamLimits): OpenStreams {
  const open = new Map<string, number>();
  const add = (key: string, delta: number) => {
    const next = (open.get(key) ?? 0) + delta;
    if (next <= 0) open.delete(key);
    else open.set(key, next);
  };
  return {
    open(request, reply) {
      const caller = callerKey(request);
      const ip = `ip:${request.ip}`;
      const refusal =
        (open.get(caller) ?? 0) >= limits.perKey
          ? `at most ${limits.perKey} streamed calls may be open at once per API key`
          : (open.get(ip) ?? 0) >= limits.perIp
            ? `at most ${limits.perIp} streamed calls may be open at once from one address`
            : undefined;
      if (refusal)
        throw new AppError("rate_limited", `Too many open streams: ${refusal}; wait for one to finish`, {
          headers: { "retry-after": "1" },
        });
      // Already gone (aborted while its call was being read): nothing to hold open.
      if (reply.raw.closed) return;
      add(caller, 1);
      add(ip, 1);
      reply.raw.once("close", () => {
        add(caller, -1);
        add(ip, -1);
      });
    },
    count({ caller, ip }) {
      return open.get(caller ? `caller:${caller}` : `ip:${ip}`) ?? 0;
    },
  };
}

function callerKey(request: FastifyRequest): string {
  return `caller:${request.apiKeyId ? `key:${request.apiKeyId}` : `user:${request.user?.id ?? request.ip}`}`;
}
