import { ApiErrorSchema, UuidSchema } from "@promptmint/contracts";
import { z } from "zod";
import type { ExperimentKind } from "./experiment-subjects.ts";

/** What every release route may answer besides its 200. */
export const errors = { 400: ApiErrorSchema, 401: ApiErrorSchema, 404: ApiErrorSchema, 409: ApiErrorSchema };
export const security = [{ bearerAuth: [] }];
export const IdParams = z.object({ id: UuidSchema });

/**
 * Where each kind of app's release routes live (docs/decisions/075): the same routes under
 * `/prompts/{id}/…` and `/workflows/{id}/…`, each with the tag its routes had before (the fuzz
 * shards by it).
 */
export const RELEASE_ROUTE_KINDS: readonly {
  kind: ExperimentKind;
  base: string;
  noun: string;
  tag: string;
}[] = [
  { kind: "prompt", base: "/prompts/:id", noun: "prompt", tag: "prompts" },
  { kind: "workflow", base: "/workflows/:id", noun: "workflow", tag: "workflows" },
];
