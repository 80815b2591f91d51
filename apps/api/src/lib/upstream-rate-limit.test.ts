import { describe, expect, it } from "vitest";
import { upstreamRateLimited } from "./upstream-rate-limit.ts";

describe("an upstream's 429 passed on", () => {
  it("is a 429 with the wait the upstream gave in milliseconds, as Retry-After and retry-after-ms", () => {
    const error = upstreamRateLimited({ "Retry-After-Ms": "1500", "retry-after": "9" });
    expect(error).toMatchObject({ status: 429, code: "upstream_rate_limited" });
    expect(error.headers).toEqual({ "retry-after": "2", "retry-after-ms": "1500" });
  });

  it("takes seconds or an HTTP date from retry-after", () => {
    expect(upstreamRateLimited({ "retry-after": "7" }).headers).toEqual({ "retry-after": "7" });
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    const dated = Number(upstreamRateLimited({ "retry-after": inTenSeconds }).headers?.["retry-after"]);
    expect(dated).toBeGreaterThanOrEqual(9);
    expect(dated).toBeLessThanOrEqual(10);
  });

  it("tells the caller to wait one second when the upstream named no wait, and at most 60", () => {
    expect(upstreamRateLimited(undefined).headers).toEqual({ "retry-after": "1" });
    expect(upstreamRateLimited({ "retry-after": "soon" }).headers).toEqual({ "retry-after": "1" });
    expect(upstreamRateLimited({ "retry-after": "86400" }).headers).toEqual({ "retry-after": "60" });
  });

  it("names the upstream that limited the call", () => {
    expect(upstreamRateLimited({}, "n8n").message).toBe(
      "n8n is rate limiting requests (HTTP 429); retry after 1 s",
    );
  });
});
