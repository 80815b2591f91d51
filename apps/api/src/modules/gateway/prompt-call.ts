import type { GatewayRequestSchema } from "@promptmint/contracts";
import { type IoSchema, IoSchemaSchema } from "@promptmint/contracts";
import { and, asc, desc, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "../../db/client.ts";
import { conversationMessages, conversations } from "../../db/schema/index.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import type { ApplicationRow } from "../applications/applications.service.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import type { ChatMessage, LlmRequest } from "../models/llm.ts";
import { validateAgainstSchema } from "../prompts/input-schema.ts";
import { loadPrompt } from "../prompts/prompts.service.ts";
import { detectVariables, renderTemplate, TemplateError } from "../prompts/template.ts";

export type GatewayInput = z.output<typeof GatewayRequestSchema>;
const HISTORY_TURNS = 20;

export interface PreparedCall {
  llmRequest: LlmRequest;
  outputSchema: IoSchema | null;
  /** For chat: the conversation to continue, or the id a new one will get. */
  conversation: { id: string; isNew: boolean } | null;
  inputs: Record<string, unknown>;
  model: string;
}

/**
 * Turns a Dify-style call into a model request: inputs checked against the input schema (400
 * naming the field), `query` offered to templates that declare it, the template rendered as the
 * user message and the system prompt as system, and for chat the conversation's earlier turns.
 */
export async function prepareCall(
  db: Database,
  options: { app: ApplicationRow; caller: LocalUser; input: GatewayInput; mode: "completion" | "chat" },
): Promise<PreparedCall> {
  const { app, caller, input, mode } = options;
  const { prompt, active } = await loadPrompt(db, app);
  const inputSchema = IoSchemaSchema.parse(active.inputSchema);
  const outputSchema = active.outputSchema ? IoSchemaSchema.parse(active.outputSchema) : null;
  const query = input.query?.trim() ? input.query : undefined;
  if (mode === "chat" && !query) throw invalidFields({ query: "is required for chat messages" });

  const offered = { ...input.inputs };
  if (query !== undefined && "query" in inputSchema.properties && offered.query === undefined)
    offered.query = query;
  const checked = validateAgainstSchema(inputSchema, offered, "inputs");
  if (Object.keys(checked.problems).length > 0) throw invalidFields(checked.problems);

  let userMessage: string;
  let system: string;
  try {
    userMessage = renderTemplate(active.promptTemplate, checked.values);
    system = renderTemplate(active.systemPrompt, checked.values);
    if (query !== undefined && !detectVariables(active.promptTemplate).includes("query")) {
      userMessage = userMessage.trim() ? `${userMessage}\n\n${query}` : query;
    }
  } catch (error) {
    if (error instanceof TemplateError)
      throw new AppError("bad_request", `The app's template could not be filled: ${error.message}`);
    throw error;
  }
  if (!userMessage.trim())
    throw invalidFields({ query: "is required: this app's template renders to an empty prompt" });
  if (outputSchema) {
    system =
      `${system}\n\nAnswer only with one JSON object that matches this JSON schema, and nothing else:\n${JSON.stringify(outputSchema)}`.trim();
  }

  let history: ChatMessage[] = [];
  let conversation: PreparedCall["conversation"] = null;
  if (mode === "chat") {
    if (input.conversation_id) {
      const [existing] = /^[0-9a-f-]{36}$/i.test(input.conversation_id)
        ? await db
            .select({ id: conversations.id })
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
      if (!existing) throw notFound("Conversation");
      const turns = await db
        .select({ query: conversationMessages.query, answer: conversationMessages.answer })
        .from(conversationMessages)
        .where(eq(conversationMessages.conversationId, existing.id))
        .orderBy(desc(conversationMessages.createdAt))
        .limit(HISTORY_TURNS);
      history = turns.reverse().flatMap((turn) => [
        { role: "user" as const, content: turn.query },
        { role: "assistant" as const, content: turn.answer },
      ]);
      conversation = { id: existing.id, isNew: false };
    } else {
      conversation = { id: crypto.randomUUID(), isNew: true };
    }
  }

  return {
    llmRequest: {
      model: prompt.model,
      system,
      messages: [...history, { role: "user", content: userMessage }],
      temperature: prompt.temperature,
      maxTokens: prompt.maxTokens,
      topP: prompt.topP,
      frequencyPenalty: prompt.frequencyPenalty,
      presencePenalty: prompt.presencePenalty,
      outputSchema: outputSchema ?? undefined,
    },
    outputSchema,
    conversation,
    inputs: checked.values,
    model: prompt.model,
  };
}

/** Structured output: the answer must be a JSON object valid against the output schema. */
export function checkStructuredAnswer(answer: string, schema: IoSchema): string {
  const trimmed = answer.trim().replace(/^```(?:json)?\s*|\s*```$/g, "");
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    throw new AppError(
      "upstream_failed",
      "The model's answer was not the JSON object the output schema requires",
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new AppError(
      "upstream_failed",
      "The model's answer was not the JSON object the output schema requires",
    );
  }
  const { problems } = validateAgainstSchema(schema, parsed as Record<string, unknown>, "output");
  const listed = Object.entries(problems);
  if (listed.length > 0) {
    throw new AppError(
      "upstream_failed",
      `The model's answer did not match the output schema: ${listed.map(([f, p]) => `${f} ${p}`).join("; ")}`,
    );
  }
  return JSON.stringify(parsed);
}

export async function listConversationMessages(db: Database, conversationId: string) {
  return db
    .select()
    .from(conversationMessages)
    .where(eq(conversationMessages.conversationId, conversationId))
    .orderBy(asc(conversationMessages.createdAt));
}
