import type { FastifyInstance } from "fastify";

/**
 * The header the official OpenAI SDKs (and other Stainless-built clients) read before retrying a
 * failed request: `true` retries, `false` does not, whatever the status. Without it they retry 408,
 * 409, 429 and 5xx, two more times by default.
 */
export const SHOULD_RETRY_HEADER = "x-should-retry";

/**
 * Whether sending the same request again can succeed (docs/decisions/072): a rate limit (429), an
 * answer that says when to come back (`Retry-After`: a 503 while the database is away, a 409 while
 * the same Idempotency-Key is still being answered) yes; any other 4xx (a bad request, a key or
 * wallet that must be fixed first, a version refused at its price, an input too large) no. Other
 * 5xx are left to the client's own judgement (undefined).
 */
export function shouldRetry(status: number, retryAfter: unknown): boolean | undefined {
  if (status === 429) return true;
  if (retryAfter !== undefined && (status === 409 || status === 503)) return true;
  if (status >= 400 && status < 500) return false;
  return undefined;
}

/** Every error answer of the API (/api/…, the gateways included) says whether to retry it. */
export function installShouldRetry(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply, payload) => {
    if (reply.statusCode < 400 || reply.hasHeader(SHOULD_RETRY_HEADER)) return payload;
    if (!request.url.startsWith("/api/")) return payload;
    const retry = shouldRetry(reply.statusCode, reply.getHeader("retry-after"));
    if (retry !== undefined) reply.header(SHOULD_RETRY_HEADER, String(retry));
    return payload;
  });
}
