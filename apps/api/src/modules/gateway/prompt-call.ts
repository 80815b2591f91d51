import { type IoSchema, IoSchemaSchema } from "@promptmint/contracts";
import { and, asc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client.ts";
import {
  type ApplicationRow,
  appLabels,
  appVersions,
  conversationMessages,
  prompts,
} from "../../db/schema/index.ts";
import { AppError, invalidFields } from "../../lib/errors.ts";
import { validateAgainstSchema } from "../../lib/input-schema.ts";
import { lookupCache } from "../../lib/lookup-cache.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { effectivePriceCents } from "../billing/price-changes.ts";
import type { ChatMessage, LlmClient, LlmRequest, LlmResult, ResponseFormat } from "../models/llm.ts";
import { findModel } from "../models/model-catalog.ts";
import { creatorKeyFor } from "../models/model-keys.service.ts";
import { modelCostMicros, netOfFeeMicros, worstCaseCostMicros } from "../models/model-prices.ts";
import type { ToolSettings } from "../models/tools.ts";
import {
  describePin,
  type LoadedPrompt,
  loadPrompt,
  promptVersionOf,
  type VersionPin,
  withSettings,
} from "../prompts/load-prompt.ts";
import { detectVariables, renderTemplate, TemplateError } from "../prompts/template.ts";
import {
  chooseVersion,
  preloadExperiments,
  type ServedVersion,
  type StickyKeys,
} from "../releases/serving.ts";
import { type CreatorPromptCount, callWorstCase, creatorPromptCount } from "./call-worst-case.ts";
import {
  type Execution,
  type ExecutionResult,
  type GatewayInput,
  resolveConversation,
  streamOnce,
} from "./execution.ts";

const HISTORY_TURNS = 20;

/**
 * What an OpenAI-style caller may change of the app's model settings (openai-request.ts), within
 * the app's limits: `maxTokens` never above the app's own, which its price was checked against
 * (models/cost-guard.ts); the caller's instructions come after the app's system prompt, which
 * stays first (docs/decisions/032).
 */
export interface CallerOverrides {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  stop?: string[];
  seed?: number;
  /** The caller's structured output, and the request field it came in (400s name it). */
  responseFormat?: { format: ResponseFormat; param: string };
  instructions?: string;
  /** The caller's tools, passed to the model when the app allows them (decision 053). */
  tools?: ToolSettings;
}

/**
 * Turns a Dify-style call into a model request: inputs checked against the input schema (400
 * naming the field), `query` offered to templates that declare it, the template rendered as the
 * user message and the system prompt as system, and for chat the conversation's earlier turns.
 */
export async function preparePromptExecution(
  db: Database,
  llm: LlmClient,
  options: {
    app: ApplicationRow;
    caller: LocalUser;
    input: GatewayInput;
    mode: "completion" | "chat";
    /** Earlier turns sent by the client (OpenAI style) instead of a stored conversation. */
    history?: ChatMessage[];
    /**
     * Turns after the query, sent by an OpenAI-style client in a tool loop: the model's tool calls
     * and their results, which follow the rendered template (docs/decisions/053).
     */
    followUp?: ChatMessage[];
    /** Opens the creator's own model keys (apps set to `model_keys: creator`). */
    secrets: SecretBox;
    overrides?: CallerOverrides;
    /** The editor's unsaved settings, run by Test Prompt instead of the saved ones. */
    draft?: PromptDraft;
    /**
     * The version or label the caller pinned (docs/decisions/057); without one the call gets
     * `production`, or its arm of a running experiment, sticky per `stickyKey`.
     */
    pin?: VersionPin;
    stickyKey?: string | StickyKeys;
    /**
     * A paying caller's pin is held to the price guard (decision 026): a version the app's price
     * no longer covers is refused, not run at its creator's loss. The platform fee to judge by.
     */
    pinPriceGuard?: { feePercent: number };
  },
): Promise<Execution> {
  const { app, caller, input, mode, overrides = {} } = options;
  const chosen = await chooseVersion(db, app, {
    pin: options.pin,
    stickyKey: options.stickyKey ?? caller.id,
  });
  const callable = await loadCallablePrompt(db, app, chosen.pin);
  if (options.pinPriceGuard && chosen.pin && !chosen.experimentId && caller.id !== app.ownerId)
    refusePinBeyondPrice(app, callable, options.pinPriceGuard.feePercent);
  const prepared = withDraft(callable, options.draft);
  const { prompt, active, inputSchema, outputSchema, templateUsesQuery } = prepared;
  const served: ServedVersion = { version: active.version, experimentId: chosen.experimentId };
  // The app's own output schema wins: a caller's schema cannot replace it (a JSON object it already is).
  if (outputSchema && overrides.responseFormat?.format.type === "json_schema")
    throw invalidFields({
      [overrides.responseFormat.param]:
        "cannot be a json_schema: this app answers with its own output schema",
    });
  const responseFormat = outputSchema ? undefined : overrides.responseFormat;
  // Google's models have no setting for one tool call per answer: refused rather than ignored.
  if (overrides.tools?.parallel === false && findModel(prompt.model)?.provider === "google")
    throw invalidFields({
      parallel_tool_calls: `cannot be false with this app's model (${prompt.model}): it cannot be limited to one tool call per answer`,
    });
  // On the creator's own keys the vendor bills the creator: the call uses their key for the
  // model's provider (503 naming it when none is set) and records no model cost (doc 026).
  const onCreatorKeys = prompt.modelKeys === "creator";
  const provider = findModel(prompt.model)?.provider;
  const apiKey =
    onCreatorKeys && provider && provider !== "sandbox"
      ? await creatorKeyFor(db, options.secrets, app.ownerId, provider, prompt.model)
      : undefined;
  const costOf = (result: LlmResult): number =>
    onCreatorKeys
      ? 0
      : modelCostMicros(
          result.answeredBy,
          {
            inputTokens: result.inputTokens,
            outputTokens: result.outputTokens,
            cachedInputTokens: result.cachedInputTokens,
          },
          new Date(),
        );
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
    if (query !== undefined && !templateUsesQuery) {
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
  if (overrides.instructions?.trim()) {
    system =
      `${system}\n\nFurther instructions from the caller (the instructions above take precedence):\n${overrides.instructions}`.trim();
  }

  let history: ChatMessage[] = options.history ?? [];
  let conversation: Execution["conversation"] = null;
  if (mode === "chat" && !options.history) {
    const state = await resolveConversation(db, { app, caller, input, historyTurns: HISTORY_TURNS });
    history = state.history.flatMap((turn) => [
      { role: "user" as const, content: turn.query },
      { role: "assistant" as const, content: turn.answer },
    ]);
    conversation = { id: state.id, isNew: state.isNew, name: state.name };
  }

  const llmRequest: LlmRequest = {
    model: prompt.model,
    system,
    messages: [...history, { role: "user", content: userMessage }, ...(options.followUp ?? [])],
    temperature: overrides.temperature ?? prompt.temperature,
    maxTokens: Math.min(prompt.maxTokens, overrides.maxTokens ?? prompt.maxTokens),
    topP: overrides.topP ?? prompt.topP,
    frequencyPenalty: overrides.frequencyPenalty ?? prompt.frequencyPenalty,
    presencePenalty: overrides.presencePenalty ?? prompt.presencePenalty,
    stop: overrides.stop,
    seed: overrides.seed,
    outputSchema: outputSchema ?? undefined,
    responseFormat: responseFormat?.format,
    tools: overrides.tools,
    apiKey,
  };
  // What this request may cost at the vendor, from what it carries (decision 063): the paid path
  // refuses it before payment when the call's price does not cover it. The creator's keys bill them.
  const worstCase = onCreatorKeys ? undefined : callWorstCase(llmRequest, creatorCountOf(prepared));
  const generate = async (): Promise<ExecutionResult> => {
    const generated = await llm.generate(llmRequest);
    // An answer that calls tools is not the final one: its text (often none) is not checked.
    const answer = generated.toolCalls
      ? generated.text
      : outputSchema
        ? checkStructuredAnswer(generated.text, outputSchema)
        : responseFormat
          ? checkJsonAnswer(generated.text, responseFormat.format)
          : generated.text;
    return {
      answer,
      inputTokens: generated.inputTokens,
      outputTokens: generated.outputTokens,
      answeredBy: generated.answeredBy,
      modelCostMicros: costOf(generated),
      ...(generated.toolCalls ? { toolCalls: generated.toolCalls } : {}),
    };
  };
  return {
    model: prompt.model,
    served,
    outputSchema,
    conversation,
    inputs: checked.values,
    ...(worstCase ? { worstCase } : {}),
    storeContent: true,
    deadlineSeconds: llm.timeoutSeconds,
    // Only a vendor on the platform's keys bills the platform: the sandbox answers a model whose
    // provider has no key, and the creator's own key bills the creator. The same worst case the
    // input bound judges (decision 063: bytes for what the caller sends, so a megabyte of hostile
    // text is never run through a tokenizer on the paid path), held when no price pays (062).
    worstCaseModelCostMicros:
      worstCase && provider && provider !== "sandbox" && llm.isConfigured(provider) ? worstCase.micros : 0,
    maxOutputTokens: llmRequest.maxTokens,
    generate,
    stream() {
      // A structured answer is only valid once complete, so it is checked and sent whole.
      if (outputSchema) return streamOnce(generate);
      const streamed = llm.stream(llmRequest);
      return {
        chunks: streamed.chunks,
        result: streamed.result.then((r) => ({
          answer: r.text,
          inputTokens: r.inputTokens,
          outputTokens: r.outputTokens,
          answeredBy: r.answeredBy,
          modelCostMicros: costOf(r),
          ...(r.toolCalls ? { toolCalls: r.toolCalls } : {}),
        })),
      };
    },
  };
}
/**
 * Inputs as Dify's service API takes them (BaseAppGenerator._prepare_user_inputs): only the
 * form's variables are read, undeclared ones are left out, and an optional one not sent is
 * empty (its default, if it has one, is applied by the schema check). A required one missing
 * is still refused, naming it. Workflow apps pass inputs on to their provider as they are.
 */
export async function difyInputs(
  db: Database,
  app: ApplicationRow,
  inputs: Record<string, unknown>,
  pin?: VersionPin,
): Promise<Record<string, unknown>> {
  if (app.type !== "prompt") return inputs;
  const { inputSchema } = await loadCallablePrompt(db, app, pin);
  return Object.fromEntries(
    Object.entries(inputSchema.properties).flatMap(([name, property]) => {
      const value = inputs[name];
      if (value !== undefined && value !== null) return [[name, value]];
      const emptyOptional = !inputSchema.required.includes(name) && property.default === undefined;
      return emptyOptional ? [[name, ""]] : [];
    }),
  );
}

interface CallablePrompt extends LoadedPrompt {
  inputSchema: IoSchema;
  outputSchema: IoSchema | null;
  templateUsesQuery: boolean;
}

/** Settings the prompt editor has not saved yet; each one left out keeps the saved value. */
export interface PromptDraft {
  model?: string;
  temperature?: number;
  maxTokens?: number;
  topP?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  systemPrompt?: string;
  promptTemplate?: string;
  inputSchema?: IoSchema;
}

/** Each cached prompt's own prompt, counted once (versions are immutable; a draft is a new object). */
const creatorCounts = new WeakMap<CallablePrompt, CreatorPromptCount>();

function creatorCountOf(callable: CallablePrompt): CreatorPromptCount {
  let found = creatorCounts.get(callable);
  if (!found) {
    found = creatorPromptCount({
      model: callable.prompt.model,
      systemPrompt: callable.active.systemPrompt,
      promptTemplate: callable.active.promptTemplate,
      outputSchema: callable.outputSchema,
    });
    creatorCounts.set(callable, found);
  }
  return found;
}

/** Each cached prompt's worst-case model cost, worked out once (versions are immutable). */
const worstCases = new WeakMap<CallablePrompt, number>();

/**
 * A pinned version other than `production` is callable only while the app's price covers its
 * worst case after the fee, as the price guard demands of every released version (decisions 026,
 * 057): the price may have been lowered since, or the version may use a dearer model. Refused
 * before payment (409), so nothing is charged; on the creator's own keys there is nothing to cover.
 */
function refusePinBeyondPrice(app: ApplicationRow, callable: CallablePrompt, feePercent: number): void {
  const { prompt, active } = callable;
  if (prompt.productionVersionId === active.id || prompt.modelKeys === "creator") return;
  let worst = worstCases.get(callable);
  if (worst === undefined) {
    worst = worstCaseCostMicros({
      model: prompt.model,
      maxTokens: prompt.maxTokens,
      systemPrompt: active.systemPrompt,
      promptTemplate: active.promptTemplate,
      inputSchema: callable.inputSchema,
      outputSchema: callable.outputSchema,
    }).micros;
    worstCases.set(callable, worst);
  }
  if (worst <= 0 || netOfFeeMicros(effectivePriceCents(app), feePercent) >= worst) return;
  throw new AppError(
    "conflict",
    `Version v${active.version} of this app cannot be called at its current price; call its production version or another one`,
  );
}

/** A loaded prompt as the paid path uses it: its schemas parsed once. */
function callablePromptOf(loaded: LoadedPrompt): CallablePrompt {
  return {
    ...loaded,
    inputSchema: IoSchemaSchema.parse(loaded.active.inputSchema),
    outputSchema: loaded.active.outputSchema ? IoSchemaSchema.parse(loaded.active.outputSchema) : null,
    templateUsesQuery: usesQuery(loaded.active.promptTemplate),
  };
}

/**
 * The app's prompt at `production` (or at a pinned version or label) with its schemas parsed once,
 * from the lookup cache (lib/lookup-cache.ts): keyed by the app, and the pin when there is one.
 * A label move forgets the cache in every process, as any write to prompts does.
 */
function loadCallablePrompt(db: Database, app: ApplicationRow, pin?: VersionPin): Promise<CallablePrompt> {
  const key = pin ? `${app.id}@${describePin(pin)}` : app.id;
  return lookupCache<CallablePrompt>(db, "prompts")
    .get(key, async () => callablePromptOf(await loadPrompt(db, app, pin)))
    .then((found) => found as CallablePrompt);
}

/**
 * Start-up (warm-up.ts): the active prompts of these apps (prompt apps among them), in one query,
 * put in the lookup cache as a call would have. Answers how many.
 */
export async function preloadPrompts(db: Database, apps: ApplicationRow[]): Promise<number> {
  const ids = apps.filter((app) => app.type === "prompt").map((app) => app.id);
  if (ids.length === 0) return 0;
  const cache = lookupCache<CallablePrompt>(db, "prompts");
  const generation = cache.generation;
  const rows = await db
    .select({ prompt: prompts, active: appVersions })
    .from(prompts)
    .innerJoin(
      appLabels,
      and(eq(appLabels.applicationId, prompts.applicationId), eq(appLabels.name, "production")),
    )
    .innerJoin(appVersions, eq(appVersions.id, appLabels.versionId))
    .where(inArray(prompts.applicationId, ids));
  for (const row of rows)
    cache.put(
      row.prompt.applicationId,
      callablePromptOf(
        withSettings({ ...row.prompt, productionVersionId: row.active.id }, promptVersionOf(row.active)),
      ),
      generation,
    );
  // Their running experiments too ("none" included), so a first call reads nothing (decision 058).
  await preloadExperiments(db, ids, generation);
  return rows.length;
}

/** Whether a template places the chat `query` itself (else the query follows the rendered template). */
function usesQuery(template: string): boolean {
  try {
    return detectVariables(template).includes("query");
  } catch {
    return false;
  }
}

/** The saved prompt with a draft's settings laid over it (a copy: the cached one is shared). */
function withDraft(saved: CallablePrompt, draft: PromptDraft | undefined): CallablePrompt {
  if (!draft) return saved;
  const { prompt, active } = saved;
  const promptTemplate = draft.promptTemplate ?? active.promptTemplate;
  return {
    ...saved,
    prompt: {
      ...prompt,
      model: draft.model ?? prompt.model,
      temperature: draft.temperature ?? prompt.temperature,
      maxTokens: draft.maxTokens ?? prompt.maxTokens,
      topP: draft.topP ?? prompt.topP,
      frequencyPenalty: draft.frequencyPenalty ?? prompt.frequencyPenalty,
      presencePenalty: draft.presencePenalty ?? prompt.presencePenalty,
    },
    active: { ...active, promptTemplate, systemPrompt: draft.systemPrompt ?? active.systemPrompt },
    inputSchema: draft.inputSchema ?? saved.inputSchema,
    templateUsesQuery: usesQuery(promptTemplate),
  };
}

/** Structured output: the answer must be a JSON object valid against the output schema. */
export function checkStructuredAnswer(answer: string, schema: IoSchema): string {
  const trimmed = stripCodeFence(answer);
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

/**
 * A caller's structured output (`response_format`): the answer must be a JSON object, valid
 * against the caller's schema when one was given (the vendor was asked for it; a model that still
 * answers otherwise is a failed call, not charged).
 */
export function checkJsonAnswer(answer: string, format: ResponseFormat): string {
  const trimmed = stripCodeFence(answer);
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    throw new AppError("upstream_failed", "The model's answer was not the JSON the response format requires");
  }
  if (format.type === "json_schema") {
    const checked = z.fromJSONSchema(format.schema as never).safeParse(parsed);
    if (!checked.success)
      throw new AppError(
        "upstream_failed",
        `The model's answer did not match the response format's schema: ${checked.error.issues[0]?.message}`,
      );
  } else if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new AppError(
      "upstream_failed",
      "The model's answer was not the JSON object the response format requires",
    );
  }
  return trimmed;
}

/**
 * The answer without a Markdown code fence around it. Written out rather than as one regular
 * expression: `\s*```$` backtracks quadratically over a long run of spaces in a large answer.
 */
function stripCodeFence(answer: string): string {
  let text = answer.trim();
  if (text.startsWith("```")) text = text.slice(text.startsWith("```json") ? 7 : 3).trimStart();
  if (text.endsWith("```")) text = text.slice(0, -3).trimEnd();
  return text;
}

export async function listConversationMessages(db: Database, conversationId: string) {
  return db
    .select()
    .from(conversationMessages)
    .where(eq(conversationMessages.conversationId, conversationId))
    .orderBy(asc(conversationMessages.createdAt));
}
