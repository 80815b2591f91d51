import { describe, expect, it } from "vitest";
import { ApiClientError } from "../lib/api-client";
import { shouldRetry } from "./query-client";

describe("what the app retries", () => {
  it("retries once a request that got no answer or a transient 5xx", () => {
    expect(shouldRetry(0, new TypeError("Failed to fetch"))).toBe(true);
    for (const status of [502, 503, 504]) expect(shouldRetry(0, new ApiClientError(status, {}))).toBe(true);
    expect(shouldRetry(1, new ApiClientError(503, {}))).toBe(false);
    expect(shouldRetry(1, new TypeError("Failed to fetch"))).toBe(false);
  });

  it("takes any other answer as the answer: 4xx, 500 and a body that does not match its schema", () => {
    for (const status of [400, 401, 403, 404, 409, 422, 429, 500])
      expect(shouldRetry(0, new ApiClientError(status, {}))).toBe(false);
    expect(shouldRetry(0, new Error("Invalid input: expected string"))).toBe(false);
  });
});
