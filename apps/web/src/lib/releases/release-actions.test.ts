import type { LabelMove } from "@promptmint/contracts";
import { describe, expect, it } from "vitest";
import { previousProduction, primaryAction, wasRolledBack } from "./release-actions";

const move = (from: number | null, to: number, id = `${from}-${to}`): LabelMove => ({
  id,
  name: "production",
  from_version: from,
  to_version: to,
  actor_name: "ada",
  reason: "",
  created_at: "2024-05-02T10:00:00.000Z",
});

// One button per action (docs/decisions/079): each state offers exactly one primary action.
describe("the release header's one action", () => {
  it("promotes the latest when production is older", () => {
    expect(primaryAction({ production: 2, latest: 3, moves: [move(1, 2)] })).toEqual({
      kind: "promote",
      version: 3,
    });
  });

  it("after a rollback from the latest, offers only to promote it again, never also to 'roll back' to it", () => {
    const moves = [move(3, 2), move(2, 3), move(1, 2)];
    expect(wasRolledBack(moves, 2)).toBe(true);
    expect(previousProduction(moves, 2)).toBe(3);
    expect(primaryAction({ production: 2, latest: 3, moves })).toEqual({ kind: "promote", version: 3 });
  });

  it("rolls back to the previous production when production is the latest", () => {
    expect(primaryAction({ production: 3, latest: 3, moves: [move(2, 3)] })).toEqual({
      kind: "rollback",
      version: 2,
    });
    expect(wasRolledBack([move(2, 3)], 3)).toBe(false);
  });

  it("offers nothing when production is the latest and never moved by hand", () => {
    expect(primaryAction({ production: 1, latest: 1, moves: [] })).toBeNull();
    expect(primaryAction({ production: 1, latest: 1, moves: [move(null, 1)] })).toBeNull();
    expect(primaryAction({ production: 1, latest: 1, moves: undefined })).toBeNull();
  });
});
