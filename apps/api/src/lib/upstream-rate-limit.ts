import { AppError } from "./errors.ts";

/** When a vendor's 429 names no wait (retry-after, retry-after-ms), the caller is told to wait this long. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;
/** A vendor's wait longer than this is capped: an SDK gives up on waits it deems too long anyway. */
const MAX_RETRY_AFTER_SECONDS = 60;

/**
 * An upstream's 429 as ours (a 429 the caller's SDK backs off from and retries; the call is failed and
 * charged nothing): the wait the vendor asked for, in seconds for `Retry-After` and, when the
 * vendor gave milliseconds, `retry-after-ms` too (the openai SDK prefers it).
 */
export function upstreamRateLimited(
  vendorHeaders: Record<string, string> | undefined,
  upstream = "The model provider",
): AppError {
  const header = (name: string) =>
    Object.entries(vendorHeaders ?? {})
      .find(([key]) => key.toLowerCase() === name)?.[1]
      ?.trim() ?? "";
  const millis = header("retry-after-ms");
  const after = header("retry-after");
  let waitMs: number | undefined;
  if (/^\d+(\.\d+)?$/.test(millis)) waitMs = Number(millis);
  else if (/^\d+(\.\d+)?$/.test(after)) waitMs = Number(after) * 1000;
  else if (Number.isFinite(Date.parse(after))) waitMs = Math.max(0, Date.parse(after) - Date.now());
  const cappedMs = Math.min(waitMs ?? DEFAULT_RETRY_AFTER_SECONDS * 1000, MAX_RETRY_AFTER_SECONDS * 1000);
  const headers: Record<string, string> = { "retry-after": String(Math.ceil(cappedMs / 1000)) };
  if (/^\d+(\.\d+)?$/.test(millis)) headers["retry-after-ms"] = String(Math.round(cappedMs));
  return new AppError(
    "upstream_rate_limited",
    `${upstream} is rate limiting requests (HTTP 429); retry after ${headers["retry-after"]} s`,
    { headers },
  );
}
