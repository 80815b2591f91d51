import { describe, expect, it } from "vitest";
import { labelLines } from "./top-errors-card";

describe("Top Errors slice labels", () => {
  it("keep a name that fits on one line whole", () => {
    expect(labelLines("unavailable", 12)).toEqual(["unavailable"]);
  });

  it("wrap snake_case and spaced names after their separators instead of cutting them", () => {
    expect(labelLines("upstream_timeout", 10)).toEqual(["upstream_", "timeout"]);
    expect(labelLines("Unknown Error", 8)).toEqual(["Unknown", "Error"]);
    expect(labelLines("rate_limit_exceeded", 11)).toEqual(["rate_limit_", "exceeded"]);
  });

  it("split a word longer than a line", () => {
    expect(labelLines("authentication", 8)).toEqual(["authenti", "cation"]);
  });

  it("cut what does not fit in two lines with an ellipsis", () => {
    expect(labelLines("the upstream provider took far too long", 10)).toEqual(["the", "upstream…"]);
  });
});
