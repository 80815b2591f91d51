import type { FastifyRequest } from "fastify";
import { AppError } from "../../lib/errors.ts";
import { isWarmUpRequest } from "../../lib/warm-up-requests.ts";
import type { RateLimiter } from "../gateway/rate-limit.ts";

/** What one process lets MCP clients do besides paid calls (docs/decisions/043-mcp-limits.md). */
export interface McpLimits {
  /** MCP requests (every POST: initialize, tools/list, ping, tools/call, …) per key or user per minute. */
  requestsPerMinute: number;
  /** The same, per client address, counted before authentication. */
  requestsPerMinutePerIp: number;
  /** MCP servers (one per POST being answered) one key or user may have at once. */
  openPerKey: number;
  /** The same, per client address. */
  openPerIp: number;
  /** The same, in the whole process. */
  openTotal: number;
}

export const MCP_REQUEST_NAMES = {
  caller: "MCP requests per minute",
  ip: "MCP requests per minute from one address",
};

export interface McpExchanges {
  /**
   * Counts one MCP server for the caller, its address and the process until `release` (safe to
   * call more than once); throws a 429 naming the limit when any already has its limit open.
   */
  open(request: FastifyRequest): () => void;
  /** Servers open now: in the process, and the number of callers and addresses holding one. */
  readonly load: { open: number; callers: number; addresses: number };
}

/**
 * Every MCP POST gets its own `Server` and transport (stateless, decision 034): they live as long
 * as the request is answered, a tool call for as long as its model takes. Nothing else is kept
 * per client: no session outlives its request. The number alive at once is bounded per caller, per
 * address and per process, counted in this process (a server lives in one process); the maps
 * hold only callers and addresses with a server open now.
 */
export function createMcpExchanges(limits: Pick<McpLimits, "openPerKey" | "openPerIp" | "openTotal">) {
  const open = new Map<string, number>();
  let total = 0;
  const add = (key: string, delta: number) => {
    const next = (open.get(key) ?? 0) + delta;
    if (next <= 0) open.delete(key);
    else open.set(key, next);
  };
  const exchanges: McpExchanges = {
    open(request) {
      const caller = `caller:${callerOf(request)}`;
      const ip = `ip:${request.ip}`;
      const refusal =
        (open.get(caller) ?? 0) >= limits.openPerKey
          ? `at most ${limits.openPerKey} MCP requests may be answered at once per API key`
          : (open.get(ip) ?? 0) >= limits.openPerIp
            ? `at most ${limits.openPerIp} MCP requests may be answered at once from one address`
            : total >= limits.openTotal
              ? `at most ${limits.openTotal} MCP requests are answered at once by this server`
              : undefined;
      if (refusal)
        throw new AppError("rate_limited", `Too many MCP requests in progress: ${refusal}; retry shortly`, {
          headers: { "retry-after": "1" },
        });
      add(caller, 1);
      add(ip, 1);
      total += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        add(caller, -1);
        add(ip, -1);
        total -= 1;
      };
    },
    get load() {
      let callers = 0;
      let addresses = 0;
      for (const key of open.keys()) {
        if (key.startsWith("caller:")) callers += 1;
        else addresses += 1;
      }
      return { open: total, callers, addresses };
    },
  };
  return exchanges;
}

/** The key the paid rate limit counts a caller under (gateway/rate-limit.ts rateLimitHook). */
function callerOf(request: FastifyRequest): string {
  return request.apiKeyId ? `key:${request.apiKeyId}` : `user:${request.user?.id ?? request.ip}`;
}

/**
 * MCP requests per minute: `byAddress` before authentication (a flood of handshakes without
 * credentials is bounded too), `byCaller` once the caller is known. Both answer 429 with
 * Retry-After naming the limit. The start-up rehearsal's requests are not counted.
 */
export function mcpRequestLimits(limiter: RateLimiter) {
  return {
    byAddress: async (request: FastifyRequest) => {
      if (isWarmUpRequest(request)) return;
      await limiter.consume({ ip: request.ip });
    },
    byCaller: async (request: FastifyRequest) => {
      if (isWarmUpRequest(request)) return;
      // No RateLimit headers on success: a tool call's answer carries its paid limit's (preHandler).
      await limiter.consume({ caller: callerOf(request) });
    },
  };
}
