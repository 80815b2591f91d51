import type { LabelMove } from "@promptmint/contracts";

/** The one thing the release header offers (docs/decisions/079): promote, roll back, or nothing. */
export type PrimaryAction =
  | { kind: "promote"; version: number }
  | { kind: "rollback"; version: number }
  | null;

/** The last move of production, if it was made by hand or by a save (newest first in `moves`). */
function lastProductionMove(moves: LabelMove[], production: number): LabelMove | undefined {
  return moves.find((move) => move.name === "production" && move.to_version === production);
}

/**
 * The version production had before its last move: what a rollback returns it to. Null when
 * production never moved by hand (or moved to where it is from nowhere).
 */
export function previousProduction(moves: LabelMove[], production: number): number | null {
  return lastProductionMove(moves, production)?.from_version ?? null;
}

/** Whether production's last move took it back to an older version: a rollback. */
export function wasRolledBack(moves: LabelMove[], production: number): boolean {
  const from = lastProductionMove(moves, production)?.from_version;
  return from !== undefined && from !== null && from > production;
}

/**
 * One button per action. The states:
 * - production is the latest save and it was released over an older version: `Roll back to` it;
 * - production is the latest and never moved by hand: nothing to do;
 * - a newer version is saved (whether or not production was just rolled back): `Promote` the
 *   latest. After a rollback from the latest that is the same version a "roll back" would name, so
 *   it is offered once, as a promotion; a rollback to an even older version stays one click away in
 *   the timeline.
 */
export function primaryAction(state: {
  production: number;
  latest: number;
  moves: LabelMove[] | undefined;
}): PrimaryAction {
  const { production, latest, moves = [] } = state;
  if (latest !== production) return { kind: "promote", version: latest };
  const previous = previousProduction(moves, production);
  if (previous !== null && previous !== production) return { kind: "rollback", version: previous };
  return null;
}
