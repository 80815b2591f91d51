import { describe, expect, it } from "vitest";
import { shouldRetry } from "./should-retry.ts";

/** docs/decisions/072: only refusals a retry can fix say `x-should-retry: true`. */
describe("shouldRetry", () => {
  it("is true for a rate limit and for answers that say when to come back", () => {
    expect(shouldRetry(429, undefined)).toBe(true);
    expect(shouldRetry(503, "5")).toBe(true);
    expect(shouldRetry(409, "1")).toBe(true);
  });

  it("is false for every other 4xx, the price guard's 409 included", () => {
    for (const status of [400, 401, 402, 403, 404, 405, 409, 412, 413, 415, 422])
      expect(shouldRetry(status, undefined), String(status)).toBe(false);
  });

  it("gives no advice on other 5xx or on success", () => {
    expect(shouldRetry(500, undefined)).toBeUndefined();
    expect(shouldRetry(502, undefined)).toBeUndefined();
    expect(shouldRetry(503, undefined)).toBeUndefined();
    expect(shouldRetry(200, undefined)).toBeUndefined();
  });
});
