import type { MppConfig } from "../../../config.ts";
import type { PaymentRail } from "./rail.ts";

/** Placeholder until the MPP rail lands (issue 40): MPP stays off while MPP_* are unset. */
export function createMppRail(_config: MppConfig): PaymentRail {
  throw new Error("MPP is not built yet");
}
