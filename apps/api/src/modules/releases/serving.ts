import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import type { VersionPin } from "../prompts/load-prompt.ts";

/** The version that answered a call, and the experiment that chose it: recorded on its invocation. */
export interface ServedVersion {
  version: number;
  experimentId: string | null;
}

/** Which version a call gets: the caller's pin, else `production` (no pin) or an experiment's arm. */
export interface ChosenVersion {
  pin?: VersionPin;
  experimentId: string | null;
}

/**
 * Chooses the version a call is answered by (docs/decisions/057): a caller's pin always wins;
 * without one, `production`.
 */
export async function chooseVersion(
  _db: Database,
  _app: ApplicationRow,
  { pin }: { pin?: VersionPin; stickyKey: string },
): Promise<ChosenVersion> {
  if (pin) return { pin, experimentId: null };
  return { experimentId: null };
}
