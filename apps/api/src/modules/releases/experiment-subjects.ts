import { isUuid } from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, applications, prompts, workflows } from "../../db/schema/index.ts";
import { notFound } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { kindOfApp } from "./release-kinds.ts";

/**
 * What the release routes name an app by (docs/decisions/058, 075): a prompt app's prompt id under
 * `/prompts/{id}/…`, a workflow app's workflow id under `/workflows/{id}/…`. Everything behind
 * them (versions, labels, experiments, evals) is keyed by the application.
 */
export type ExperimentKind = "prompt" | "workflow";

export interface ExperimentSubject {
  kind: ExperimentKind;
  /** The prompt's or the workflow's id (both one per application). */
  id: string;
  app: ApplicationRow;
}

export interface ReleaseActor {
  id: string | null;
  reason: string;
}

/** The subject with this id, if the owner owns its app (404 naming the noun otherwise). */
export async function ownSubject(
  db: Database,
  owner: LocalUser,
  kind: ExperimentKind,
  id: string,
): Promise<ExperimentSubject> {
  const noun = kind === "prompt" ? "Prompt" : "Workflow";
  if (!isUuid(id)) throw notFound(noun);
  const table = kind === "prompt" ? prompts : workflows;
  const [row] = await db
    .select({ app: applications, id: table.id })
    .from(table)
    .innerJoin(applications, eq(applications.id, table.applicationId))
    .where(and(eq(table.id, id), eq(applications.ownerId, owner.id)))
    .limit(1);
  if (!row) throw notFound(noun);
  return { kind, id: row.id, app: row.app };
}

/** The subject of an app (its prompt's or its workflow's id). */
export async function subjectOfApp(db: Database, app: ApplicationRow): Promise<ExperimentSubject> {
  const kind = kindOfApp(app);
  const table = kind === "prompt" ? prompts : workflows;
  const [row] = await db.select({ id: table.id }).from(table).where(eq(table.applicationId, app.id)).limit(1);
  if (!row) throw notFound(kind === "prompt" ? "Prompt" : "Workflow");
  return { kind, id: row.id, app };
}
