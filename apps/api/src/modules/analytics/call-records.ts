import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";
import { conversationMessages, conversations, includedCalls, invocations } from "../../db/schema/index.ts";
import { addToRollups } from "./rollups.ts";

/**
 * The record of one gateway call (docs/decisions/038), defined once here for every writer: the
 * invocation row and its rollups. Billing's call payment (billing/call-payment) composes these
 * into the statements that charge a call in the same transaction; analytics knows nothing of
 * money beyond the figures it is handed (the types below are structural, so analytics imports
 * nothing from billing).
 */

/** A plan's included call that paid for an invocation (billing/call-payment/included-calls.ts). */
export interface CoveringCall {
  subscriptionId: string;
  periodStart: string;
  callId?: string;
}

/** What a call spent from its hold (billing/call-payment/holds.ts `Spent`). */
export interface SpentFigures {
  chargedCents: number;
  feeMicros: number;
  modelCostDeductedMicros: number;
}

export interface InvocationRecord {
  id: string;
  applicationId: string;
  callerUserId: string;
  apiKeyId: string | null;
  /** The member of the paying organization who made the call (decision 084); null for a person's call. */
  memberId?: string | null;
  endUser: string | null;
  mode: "completion" | "chat";
  model: string | null;
  /** The prompt version that answered and the experiment that chose it (decision 057); null for workflows. */
  appVersion?: number | null;
  experimentId?: string | null;
  /**
   * Why the call was made (docs/decisions/078): `customer` by default; only customer calls go
   * to the rollups (customer analytics). Structural, as the column's values.
   */
  purpose?: "customer" | "eval" | "owner_test" | "online_eval";
  status: "success" | "error";
  errorType?: string;
  errorMessage?: string;
  latencyMs: number;
  inputTokens: number;
  outputTokens: number;
  chargedCents?: number;
  /**
   * What the call cost at the model vendor, in micro-dollars (docs/decisions/026): the price
   * table's figure for its usage on the platform's keys; 0 on the creator's own keys and for
   * workflow apps. The settle deducts it from the creator's share.
   */
  modelCostMicros?: number;
  /** The hold paying for it (with `settle`); kept on the row only if `settle` charged it. */
  holdId?: string;
  /** The plan's included call that paid for it, taken when the call started (decision 025). */
  coveredBy?: CoveringCall;
  /**
   * Runs in the same transaction after the invocation row exists: `charged` (from the hold), an
   * included call that covered it instead, or `refused` (nothing could pay: recorded as failed).
   */
  settle?: (tx: Database) => Promise<"charged" | "refused" | { coveredBy: CoveringCall } | SpentFigures>;
  /** When the call happened (default now); the demo seed backdates its calls. */
  createdAt?: Date;
  conversation?: {
    id: string;
    isNew: boolean;
    /** A new conversation's name; by default its first query's start (Dify's auto-generated name). */
    name?: string;
    providerConversationId?: string;
    query: string;
    answer: string;
    inputs: Record<string, unknown>;
  } | null;
}

/**
 * The invocation's columns, mapped from its record once for every writer: the insert below and
 * the batch statement's rows (billing/call-payment/record.ts, as snake_case JSON).
 */
export function invocationRow(record: InvocationRecord, at: Date) {
  return {
    id: record.id,
    applicationId: record.applicationId,
    callerUserId: record.callerUserId,
    apiKeyId: record.apiKeyId,
    memberId: record.memberId ?? null,
    endUser: record.endUser,
    mode: record.mode,
    status: record.status,
    errorType: record.errorType ?? null,
    errorMessage: record.errorMessage?.slice(0, 500) ?? null,
    model: record.model,
    appVersion: record.appVersion ?? null,
    experimentId: record.experimentId ?? null,
    purpose: record.purpose ?? "customer",
    latencyMs: record.latencyMs,
    inputTokens: record.inputTokens,
    outputTokens: record.outputTokens,
    chargedCents: record.chargedCents ?? 0,
    modelCostMicros: record.modelCostMicros ?? 0,
    subscriptionId: record.coveredBy?.subscriptionId ?? null,
    createdAt: at,
  };
}

/**
 * A batch of calls inserted as invocations, as the body of one CTE (billing/call-payment/record.ts,
 * the batch record): the relation `calls` gives the columns of `invocationRow` in snake_case, with
 * what paid for each call: `charged` (cents), `fee`, `model_cost` and `model_cost_deducted`
 * (micros), `paid_from` (its hold), `covered_by` and `period` (its plan's subscription and period).
 */
export const INVOCATIONS_FROM_CALLS = `insert into invocations (id, application_id, caller_user_id, api_key_id, member_id, end_user, mode, status,
       error_type, error_message, model, app_version, experiment_id, latency_ms, input_tokens,
       output_tokens, charged_cents, fee_micros, model_cost_micros, model_cost_deducted_micros, hold_id,
       subscription_id, plan_period_start, purpose, created_at)
     select id, application_id, caller_user_id, api_key_id, member_id, end_user, mode, status, error_type,
       error_message, model, app_version, experiment_id, latency_ms, input_tokens, output_tokens,
       charged, fee, model_cost, model_cost_deducted, paid_from, covered_by, period, purpose, created_at
     from calls
     returning 1`;

/** Whom the rollups count a call for: its end user, else the calling account. */
export const userKeyOf = (record: Pick<InvocationRecord, "endUser" | "callerUserId">) =>
  record.endUser ?? `account:${record.callerUserId}`;

/**
 * Records one gateway call, and for a successful chat turn the conversation and its message,
 * in one transaction: analytics and billing read invocations, so none may be lost.
 */
export async function recordInvocation(db: Database, record: InvocationRecord): Promise<void> {
  const at = record.createdAt ?? new Date();
  const conversation = record.status === "success" ? record.conversation : null;
  const row = {
    ...invocationRow(record, at),
    conversationId: conversation?.id ?? null,
    holdId: record.settle ? (record.holdId ?? null) : null,
    planPeriodStart: record.coveredBy ? sql`${record.coveredBy.periodStart}::timestamptz` : null,
  };
  const rollup = (charged: number, refused = false, feeMicros = 0, modelCostDeductedMicros = 0) => ({
    applicationId: record.applicationId,
    at,
    status: refused ? ("error" as const) : record.status,
    errorType: refused ? "payment_failed" : (record.errorType ?? null),
    latencyMs: record.latencyMs,
    inputTokens: record.inputTokens,
    outputTokens: record.outputTokens,
    revenueCents: record.status === "success" ? charged : 0,
    feeMicros: record.status === "success" ? feeMicros : 0,
    modelCostMicros: record.modelCostMicros ?? 0,
    modelCostDeductedMicros,
    appVersion: record.appVersion ?? null,
    userKey: userKeyOf(record),
    purpose: record.purpose ?? "customer",
  });
  if (!conversation && !record.settle && !record.coveredBy?.callId) {
    // Nothing to settle and no conversation: the row and its rollups are one statement, atomic on
    // its own, so a busy app's recording costs one round trip instead of four.
    await addToRollups(db, rollup(row.chargedCents), db.insert(invocations).values(row));
    return;
  }
  await db.transaction(async (tx) => {
    if (conversation?.isNew) {
      await tx.insert(conversations).values({
        id: conversation.id,
        applicationId: record.applicationId,
        callerUserId: record.callerUserId,
        endUser: record.endUser ?? "",
        name: conversation.name ?? conversation.query.slice(0, 60),
        providerConversationId: conversation.providerConversationId ?? null,
      });
    } else if (conversation) {
      const providerId = conversation.providerConversationId
        ? { providerConversationId: conversation.providerConversationId }
        : {};
      await tx
        .update(conversations)
        .set({ updatedAt: new Date(), ...providerId })
        .where(eq(conversations.id, conversation.id));
    }
    if (conversation) {
      await tx.insert(conversationMessages).values({
        id: record.id,
        conversationId: conversation.id,
        query: conversation.query,
        answer: conversation.answer,
        inputs: conversation.inputs,
      });
    }
    await tx.insert(invocations).values(row);
    // The included call taken for this call before it ran is its own now (decision 025).
    if (record.coveredBy?.callId)
      await tx.delete(includedCalls).where(eq(includedCalls.id, record.coveredBy.callId));
    let charged = row.chargedCents;
    let fee = 0;
    let deducted = 0;
    const settled = record.settle ? await record.settle(tx as unknown as Database) : ("charged" as const);
    if (typeof settled === "object" && "chargedCents" in settled) {
      // Charged at a lower price than the call started at when a decrease applied meanwhile.
      // An embedded call records 0 charged (its owner pays the platform), yet spends its hold.
      if (row.chargedCents > 0) {
        charged = settled.chargedCents;
        fee = settled.feeMicros;
      }
      deducted = settled.modelCostDeductedMicros;
      await tx
        .update(invocations)
        .set({
          chargedCents: charged,
          feeMicros: settled.feeMicros,
          modelCostDeductedMicros: settled.modelCostDeductedMicros,
        })
        .where(and(eq(invocations.id, record.id), eq(invocations.createdAt, at)));
    } else if (settled !== "charged") {
      charged = 0;
      await tx
        .update(invocations)
        .set(
          settled === "refused"
            ? { chargedCents: 0, holdId: null, status: "error", errorType: "payment_failed" }
            : {
                chargedCents: 0,
                holdId: null,
                subscriptionId: settled.coveredBy.subscriptionId,
                planPeriodStart: sql`${settled.coveredBy.periodStart}::timestamptz`,
              },
        )
        .where(and(eq(invocations.id, record.id), eq(invocations.createdAt, at)));
    }
    // Last before commit, so the rollup rows are locked for as short a time as possible.
    await addToRollups(tx as unknown as Database, rollup(charged, settled === "refused", fee, deducted));
  });
}
