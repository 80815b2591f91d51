import type { EvalAssertion, EvalCase } from "@promptmint/contracts";
import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { conversationMessages, evalCaseSources, evalCases, invocations } from "../../db/schema/index.ts";
import { AppError, notFound } from "../../lib/errors.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { formatMicros } from "../billing/money.ts";
import { createCase, type EvalSubjectRef, ownEvalSubject } from "./evals.ts";

/**
 * A live call saved as an eval case in one click (issue 41, docs/decisions/078). The case holds
 * the call's inputs (and query) as they were kept, one editable rubric whose reference is the
 * answer the call gave, and a name noting the call's date and model cost. Only a customer call
 * of the owner's app can be saved (404 otherwise: never says whose), once while its case exists
 * (409), and only when its content was kept (409 saying why).
 */

/** The rubric's text around the reference; the whole stays within the rubric's 2000 characters. */
const RUBRIC_LEAD =
  "Answers like the reference answer a live call of this app gave (the same facts and intent, in the same format; the wording may differ). Reference answer: ";
const MAX_RUBRIC = 2000;

/**
 * The rubric of a saved call: its answer as the reference. Straight double quotes in the answer
 * become single ones, so the offline judge (gateway/eval-call.ts `sandboxVerdict`, which checks
 * phrases in "…") does not read pieces of the reference as phrases the answer must contain.
 */
export function referenceRubric(answer: string): string {
  const room = MAX_RUBRIC - RUBRIC_LEAD.length - 2;
  const flat = answer.replaceAll('"', "'").trim();
  const reference = flat.length > room ? `${flat.slice(0, room - 1)}…` : flat;
  return `${RUBRIC_LEAD}“${reference}”`;
}

/** The case's name: when the call was made and what it cost at the model vendor. */
export function savedCallName(at: Date, modelCostMicros: number, invocationId: string): string {
  const when = `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return `Live call ${invocationId.slice(0, 8)} of ${when} (model cost ${formatMicros(modelCostMicros)})`;
}

export async function saveCallAsCase(
  db: Database,
  owner: LocalUser,
  subject: EvalSubjectRef,
  invocationId: string,
): Promise<EvalCase> {
  const { app } = await ownEvalSubject(db, owner, subject);
  const [call] = await db
    .select({
      id: invocations.id,
      status: invocations.status,
      mode: invocations.mode,
      modelCostMicros: invocations.modelCostMicros,
      createdAt: invocations.createdAt,
      conversationId: invocations.conversationId,
    })
    .from(invocations)
    .where(
      and(
        eq(invocations.id, invocationId),
        eq(invocations.applicationId, app.id),
        eq(invocations.purpose, "customer"),
      ),
    )
    .limit(1);
  if (!call) throw notFound("Call");
  const [saved] = await db
    .select({ caseId: evalCaseSources.caseId })
    .from(evalCaseSources)
    .where(eq(evalCaseSources.invocationId, call.id));
  if (saved)
    throw new AppError("conflict", `This call is saved as an eval case already (case ${saved.caseId})`, {
      fields: { invocation_id: "is saved as an eval case already" },
    });
  if (call.status !== "success")
    throw new AppError("conflict", "This call failed: only an answered call can be saved as an eval case", {
      fields: { invocation_id: "is a failed call" },
    });
  const [message] = call.conversationId
    ? await db
        .select({
          query: conversationMessages.query,
          answer: conversationMessages.answer,
          inputs: conversationMessages.inputs,
        })
        .from(conversationMessages)
        .where(eq(conversationMessages.id, call.id))
    : [];
  const inputs = (message?.inputs ?? {}) as Record<string, unknown>;
  if (!message || (message.answer === "" && message.query === "" && Object.keys(inputs).length === 0))
    throw new AppError(
      "conflict",
      call.mode === "completion"
        ? "This call's inputs were not kept: completion calls keep no content (only chat calls keep their inputs, query and answer, as the conversation's messages), so it cannot be saved as an eval case. Add the case by hand on the Evals page."
        : "This call's inputs were not kept (the app does not log its calls' content), so it cannot be saved as an eval case. Add the case by hand on the Evals page.",
      { fields: { invocation_id: "is a call whose inputs were not kept" } },
    );
  const assertions: EvalAssertion[] = message.answer.trim()
    ? [{ kind: "rubric", rubric: referenceRubric(message.answer) }]
    : [];
  const created = await createCase(db, owner, subject, {
    name: savedCallName(call.createdAt, call.modelCostMicros, call.id),
    inputs,
    query: message.query || null,
    assertions,
  });
  // Two saves at once: one keeps its case, the other's is taken back and answered 409.
  const [kept] = await db
    .insert(evalCaseSources)
    .values({ invocationId: call.id, caseId: created.id, applicationId: app.id })
    .onConflictDoNothing()
    .returning({ caseId: evalCaseSources.caseId });
  if (!kept) {
    await db.delete(evalCases).where(eq(evalCases.id, created.id));
    throw new AppError("conflict", "This call is saved as an eval case already", {
      fields: { invocation_id: "is saved as an eval case already" },
    });
  }
  return created;
}
