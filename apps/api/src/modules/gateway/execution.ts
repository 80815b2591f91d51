import { type GatewayRequestSchema, type IoSchema, isUuid } from "@promptmint/contracts";
import { and, desc, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { type ApplicationRow, conversationMessages, conversations } from "../../db/schema/index.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { StreamPiece, ToolCall } from "../models/tools.ts";
import type { CallWorstCase } from "./call-worst-case.ts";
import { conversationNotExists } from "./dify-errors.ts";

/** A call's input as the upstream may see it: the caller's price cap is the gateway's alone. */
export type GatewayInput = Omit<z.output<typeof GatewayRequestSchema>, "max_price_cents">;

export interface ExecutionResult {
  answer: string;
  inputTokens: number;
  outputTokens: number;
  /** The model or provider that answered (recorded on the invocation). */
  answeredBy: string | null;
  /**
   * What the call cost at the model vendor on the platform's keys, in micro-dollars
   * (models/model-prices.ts); 0 or absent on the creator's own keys and for workflow apps.
   */
  modelCostMicros?: number;
  providerConversationId?: string;
  /** The tools the model called, for the caller to run (prompt apps that allow tools, decision 053). */
  toolCalls?: ToolCall[];
}

/** One prepared gateway call, whatever backs the app: the route runs it blocking or streaming. */
export interface Execution {
  model: string | null;
  /** The version that answers (a prompt's, decision 057; a workflow's, 060), and the experiment that chose it. */
  served?: { version: number; experimentId: string | null };
  /** The answering version's output schema: its answer is then one JSON object matching it. */
  outputSchema?: IoSchema | null;
  /** `name` for a new conversation: empty when the caller turned Dify's `auto_generate_name` off. */
  conversation: { id: string; isNew: boolean; name?: string } | null;
  inputs: Record<string, unknown>;
  /**
   * The most this request can cost at the model vendor on the platform's keys (decision 063);
   * absent where the platform pays no model cost (the creator's keys, workflow apps).
   */
  worstCase?: CallWorstCase;
  /** False when the creator turned logging off: conversation content is not kept. */
  storeContent: boolean;
  /** The longest the call may take: a hold for it expires (and is swept) well after this. */
  deadlineSeconds: number;
  /**
   * The most the model vendor can bill the platform for this call (models/worst-case.ts): held
   * from its creator's wallet when no price pays for it (decision 062). 0 or absent when the
   * platform pays no vendor (the sandbox, the creator's own keys, workflow apps).
   */
  worstCaseModelCostMicros?: number;
  /** The most output tokens the model may answer with (`max_tokens`), for a prompt app. */
  maxOutputTokens?: number;
  generate(): Promise<ExecutionResult>;
  /** Text pieces, and pieces of tool calls when the app passes the caller's tools to its model. */
  stream(): { chunks: AsyncIterable<StreamPiece>; result: Promise<ExecutionResult> };
}

export interface ConversationState {
  id: string;
  isNew: boolean;
  name?: string;
  providerConversationId?: string;
  history: { query: string; answer: string }[];
}

/** The caller's conversation to continue (404 if it is not theirs), or a new one's id. */
export async function resolveConversation(
  db: Database,
  options: { app: ApplicationRow; caller: LocalUser; input: GatewayInput; historyTurns: number },
): Promise<ConversationState> {
  const { app, caller, input } = options;
  if (!input.conversation_id)
    return {
      id: crypto.randomUUID(),
      isNew: true,
      // Dify names a new conversation from its first query unless `auto_generate_name` is false.
      ...(input.auto_generate_name === false ? { name: "" } : {}),
      history: [],
    };
  const [existing] = isUuid(input.conversation_id)
    ? await db
        .select({ id: conversations.id, providerConversationId: conversations.providerConversationId })
        .from(conversations)
        .where(
          and(
            eq(conversations.id, input.conversation_id),
            eq(conversations.applicationId, app.id),
            eq(conversations.callerUserId, caller.id),
            eq(conversations.endUser, input.user ?? ""),
          ),
        )
        .limit(1)
    : [];
  if (!existing) throw conversationNotExists();
  const turns =
    options.historyTurns > 0
      ? await db
          .select({ query: conversationMessages.query, answer: conversationMessages.answer })
          .from(conversationMessages)
          .where(eq(conversationMessages.conversationId, existing.id))
          .orderBy(desc(conversationMessages.createdAt))
          .limit(options.historyTurns)
      : [];
  return {
    id: existing.id,
    isNew: false,
    providerConversationId: existing.providerConversationId ?? undefined,
    history: turns.reverse(),
  };
}

/** A blocking result delivered as a one-chunk stream (providers or modes that cannot stream). */
export function streamOnce(generate: () => Promise<ExecutionResult>): ReturnType<Execution["stream"]> {
  const result = generate();
  result.catch(() => {});
  return {
    result,
    chunks: (async function* () {
      const { answer, toolCalls } = await result;
      if (answer || !toolCalls) yield answer;
      for (const [index, call] of (toolCalls ?? []).entries()) yield { toolCall: { index, ...call } };
    })(),
  };
}
