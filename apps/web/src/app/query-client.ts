import { QueryClient } from "@tanstack/react-query";
import { ApiClientError } from "../lib/api-client";

/** Answers that say "try again shortly": a proxy or the API itself passing on a passing outage. */
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

/**
 * What is retried, once: a request that never got an answer (the network) and a transient 5xx.
 * Any other answer, a 4xx or a 500, is the answer: retrying it only delays the error box (issue
 * 32: 7–10 s of "Loading…" before a failure showed), so the page says it at once.
 */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (failureCount >= 1) return false;
  if (error instanceof ApiClientError) return TRANSIENT_STATUSES.has(error.status);
  // A fetch that failed before any answer (offline, reset) is a TypeError; a schema mismatch is not retried.
  return error instanceof TypeError;
}

/** Half a second before the one retry: an error box within about a second and a half at worst. */
const RETRY_DELAY_MS = 500;

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { staleTime: 30_000, retry: shouldRetry, retryDelay: RETRY_DELAY_MS },
      mutations: { retry: false },
    },
  });
}
