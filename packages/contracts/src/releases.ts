import { z } from "zod";
import { ExperimentSchema } from "./experiments.ts";

/**
 * What an app's callers get right now (docs/decisions/075): the version `production` points at,
 * and the running experiment splitting the callers who pin nothing (null when none runs). A caller
 * of a running experiment gets the arm its sticky key hashes into, not necessarily production.
 */
export const ServingStateSchema = z.object({
  production_version: z.number().int().nullable(),
  experiment: ExperimentSchema.nullable(),
});
export type ServingState = z.infer<typeof ServingStateSchema>;
