import { describe, expect, it } from "vitest";
import { hasChanges, lineDiff, sideBySide } from "./line-diff";

describe("lineDiff", () => {
  it("keeps common lines and marks removed then added ones, with both sides' line numbers", () => {
    const lines = lineDiff("a\nb\nc\nd", "a\nB\nc\nd\ne");
    expect(lines.map((line) => [line.kind, line.text, line.oldLine, line.newLine])).toEqual([
      ["same", "a", 1, 1],
      ["removed", "b", 2, null],
      ["added", "B", null, 2],
      ["same", "c", 3, 3],
      ["same", "d", 4, 4],
      ["added", "e", null, 5],
    ]);
    expect(hasChanges(lines)).toBe(true);
  });

  it("finds the longest common subsequence in the changed middle", () => {
    const kinds = lineDiff("x\n1\n2\n3\ny", "x\n2\n3\n4\ny").map((line) => `${line.kind[0]}${line.text}`);
    expect(kinds).toEqual(["sx", "r1", "s2", "s3", "a4", "sy"]);
  });

  it("reads identical and empty texts as unchanged, and an empty side as all added or removed", () => {
    expect(hasChanges(lineDiff("same\ntext", "same\ntext"))).toBe(false);
    expect(lineDiff("", "")).toEqual([]);
    expect(lineDiff("", "new").map((line) => line.kind)).toEqual(["added"]);
    expect(lineDiff("old\nlines", "").map((line) => line.kind)).toEqual(["removed", "removed"]);
    expect(hasChanges(lineDiff("a\r\nb", "a\nb"))).toBe(false);
  });

  it("pairs removed and added runs side by side, padding the shorter run", () => {
    const rows = sideBySide(lineDiff("a\nb\nc", "a\nB\nC\nD"));
    expect(rows.map((row) => [row.left?.text ?? null, row.right?.text ?? null])).toEqual([
      ["a", "a"],
      ["b", "B"],
      ["c", "C"],
      [null, "D"],
    ]);
  });
});
