import type { GatewayResponse } from "@promptmint/contracts";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Database } from "../../db/client.ts";
import type { ApplicationRow } from "../../db/schema/index.ts";
import type { AdmissionGate } from "../../lib/admission.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { markStage } from "../../lib/stage-timings.ts";
import type { LocalUser } from "../auth/auth.service.ts";
import { type AuthGuards, currentUser } from "../auth/authenticate.ts";
import type { AgentPayments } from "../billing/agent-payments/index.ts";
import type { CallPayments } from "../billing/call-payment/index.ts";
import type { ReceiptSigner } from "../billing/call-receipts-signing.ts";
import type { ChatMessage, LlmClient } from "../models/llm.ts";
import { pinFrom, type VersionPin } from "../releases/pins.ts";
import type { StickyKeys } from "../releases/serving.ts";
import { answerPaidCall, type CallMeta, type CallPresenter } from "./call-lifecycle.ts";
import { difyPriceFields } from "./charge.ts";
import { errorEvent } from "./dify-errors.ts";
import type { Execution, ExecutionResult, GatewayInput } from "./execution.ts";
import type { OpenStreams } from "./open-streams.ts";
import type { CallCharge } from "./paid-call.ts";
import { preparePromptExecution } from "./prompt-call.ts";
import type { RateLimiter } from "./rate-limit.ts";
import type { RunningTasks } from "./running-tasks.ts";
import { prepareWorkflowExecution } from "./workflow-call.ts";

export type Mode = "completion" | "chat";

/** What every paid endpoint needs (Dify-style, OpenAI-style and the Explore page's 'Try it'). */
export interface GatewayDeps {
  db: Database;
  guards: AuthGuards;
  llm: LlmClient;
  rateLimiter: RateLimiter;
  admission: AdmissionGate;
  openStreams: OpenStreams;
  secrets: SecretBox;
  safeFetch: SafeFetch;
  feePercent: number;
  publicUrl: string;
  /** The call payments (billing/call-payment), built once at start-up (app.ts). */
  payments: CallPayments;
  /** Payment by agents without an account (x402, billing/agent-payments); undefined when off. */
  agentPayments?: AgentPayments;
  /** Signs paid calls' receipts (billing/call-receipts-signing.ts); none are given without it. */
  receipts?: ReceiptSigner;
}

/** The mode an app is called in when the caller does not choose: chat only for chat prompt apps. */
export function naturalModeOf(application: ApplicationRow): Mode {
  return application.type === "prompt" && application.interactionMode === "chat" ? "chat" : "completion";
}

/**
 * A call made ready to run, whatever backs the app: a prompt (inputs checked, template rendered) or
 * a workflow (provider and its settings). `history` is the earlier turns an OpenAI-style client sent.
 */
export function prepareExecution(
  {
    db,
    llm,
    secrets,
    safeFetch,
    feePercent,
  }: Pick<GatewayDeps, "db" | "llm" | "secrets" | "safeFetch" | "feePercent">,
  options: {
    app: ApplicationRow;
    caller: LocalUser;
    input: GatewayInput;
    mode: Mode;
    history?: ChatMessage[];
    /** The version or label the caller pinned, and the request field it came in (400s name it). */
    pin?: { pin: VersionPin; field: string };
    /** Who an experiment keeps on one arm: the end user, else the key, else the account. */
    stickyKey?: string | StickyKeys;
  },
): Promise<Execution> {
  const { pin, ...rest } = options;
  if (options.app.type === "prompt")
    return preparePromptExecution(db, llm, {
      ...rest,
      pin: pin?.pin,
      secrets,
      pinPriceGuard: { feePercent },
    });
  // A workflow app's provider configuration is versioned too (docs/decisions/060).
  return prepareWorkflowExecution(db, { ...rest, pin: pin?.pin, secrets, fetch: safeFetch });
}

/** The request header a caller pins a prompt version or label with (docs/decisions/057). */
export const VERSION_REQUEST_HEADER = "promptmint-version";

/** A pin sent in the `Promptmint-Version` request header, if any (400 naming it when malformed). */
export function headerPin(request: FastifyRequest): { pin: VersionPin; field: string } | undefined {
  return pinFrom([headerPinSource(request)]);
}

/** The `Promptmint-Version` header as a source for the one pin parser (releases/pins.ts pinFrom). */
export function headerPinSource(request: FastifyRequest) {
  const value = request.headers[VERSION_REQUEST_HEADER];
  return {
    value: typeof value === "string" ? value : undefined,
    field: "Promptmint-Version header",
    say: "the Promptmint-Version header",
  };
}

/**
 * Whom an experiment keeps on one arm (docs/decisions/058): the end user, the key and the account;
 * the experiment's `sticky_by` picks (by default the end user, else the key, else the account).
 */
export function stickyKeyOf(
  request: FastifyRequest,
  callerId: string,
  endUser: string | undefined,
): StickyKeys {
  return {
    ...(endUser ? { endUser } : {}),
    ...(request.apiKeyId ? { apiKeyId: request.apiKeyId } : {}),
    account: callerId,
  };
}

/** Dify's keep-alive while a stream waits for its next event. */
export const DIFY_PING = "event: ping\n\n";

/** Dify's stream events: `data: {json}` lines, one per event. */
export function difyEvents(...events: object[]): string {
  return events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("");
}

/** Dify's completion and chat answers: `message` events ending in `message_end` with usage. */
export const difyMessages: CallPresenter<GatewayResponse> = {
  body: (result, call) => ({
    event: "message",
    id: call.messageId,
    message_id: call.messageId,
    task_id: call.messageId,
    mode: call.mode,
    answer: result.answer,
    ...(call.conversationId ? { conversation_id: call.conversationId } : {}),
    metadata: { usage: usageOf(result, call.latencyMs, call.charge), ...versionOf(call) },
    created_at: call.createdAt,
  }),
  storedUsage: (body) => body.metadata?.usage,
  // At once, before the model answers: the task_id a client needs to stop the call (…/:task_id/stop),
  // as Dify's first `message` event carries it; its answer is empty, so clients append nothing.
  streamStart: (call) => difyEvents({ event: "message", ...messageBase(call), answer: "" }),
  streamChunk: (answer, call) => difyEvents({ event: "message", ...messageBase(call), answer }),
  streamEnd: (result, call) =>
    difyEvents({
      event: "message_end",
      ...messageBase(call),
      metadata: { usage: usageOf(result, call.latencyMs, call.charge), ...versionOf(call) },
    }),
  streamError: (error, call) => difyEvents(errorEvent(error, messageBase(call))),
  replayStream: (body) => {
    const { metadata, ...rest } = body;
    return difyEvents(rest, { ...rest, event: "message_end", metadata });
  },
  ping: DIFY_PING,
};

/**
 * The prompt version that answered, in Dify's `metadata` (`promptmint_version: "v12"`; Dify's SDKs
 * pass metadata they do not know through): besides the `Promptmint-Version` header, for clients
 * that read only the body. A workflow app's version too (decision 060), when called here.
 */
function versionOf(call: CallMeta): { promptmint_version?: string } {
  return call.served ? { promptmint_version: `v${call.served.version}` } : {};
}

function messageBase(call: CallMeta) {
  return {
    task_id: call.messageId,
    id: call.messageId,
    message_id: call.messageId,
    ...(call.conversationId ? { conversation_id: call.conversationId } : {}),
    created_at: call.createdAt,
  };
}

/** Who may stop a running task: the same account, app and Dify `user`. */
export function taskOwner(callerId: string, applicationId: string, user: string | undefined): string {
  return `${callerId}:${applicationId}:${user ?? ""}`;
}

/**
 * One Dify-style call of an app the caller may call, blocking or streamed, through the paid call's
 * life (call-lifecycle.ts; docs/decisions/004). Returns the blocking answer. A streamed call is
 * registered in `tasks` (when given) so that its caller can stop it.
 */
export function createGatewayCall(deps: GatewayDeps, tasks?: RunningTasks) {
  return function runCall<Body extends object = GatewayResponse>(
    request: FastifyRequest,
    reply: FastifyReply,
    {
      application,
      mode,
      input,
      maxPriceCents,
      presenter = difyMessages as unknown as CallPresenter<Body>,
    }: {
      application: ApplicationRow;
      mode: Mode;
      input: GatewayInput;
      /** The caller's cap on the price (max-price.ts); above it the call is refused unpaid. */
      maxPriceCents?: number;
      presenter?: CallPresenter<Body>;
    },
  ): Promise<Body | undefined> {
    // The app was found by the route's hooks, with the key.
    markStage(request, "app");
    const caller = currentUser(request);
    const streaming = input.response_mode === "streaming";
    const pin = headerPin(request);
    // Counted before anything is prepared or paid, so a refused stream costs nothing.
    if (streaming) deps.openStreams.open(request, reply);
    return answerPaidCall(deps, request, reply, {
      caller,
      application,
      mode,
      input,
      streaming,
      fingerprint: { slug: application.slug, mode, input, pin: pin?.pin },
      prepare: () =>
        prepareExecution(deps, {
          app: application,
          caller,
          input,
          mode,
          pin,
          stickyKey: stickyKeyOf(request, caller.id, input.user),
        }),
      maxPriceCents,
      presenter,
      startTask:
        tasks && ((messageId) => tasks.start(messageId, taskOwner(caller.id, application.id, input.user))),
    });
  };
}

/** Dify's `metadata.usage`: tokens, the call's price fields (charge.ts) and latency in seconds. */
export function usageOf(result: ExecutionResult, latencyMs: number, charge: CallCharge) {
  const prices = difyPriceFields(charge);
  return {
    prompt_tokens: result.inputTokens,
    prompt_unit_price: prices.prompt_unit_price,
    prompt_price_unit: prices.prompt_price_unit,
    prompt_price: prices.prompt_price,
    completion_tokens: result.outputTokens,
    completion_unit_price: prices.completion_unit_price,
    completion_price_unit: prices.completion_price_unit,
    completion_price: prices.completion_price,
    total_tokens: result.inputTokens + result.outputTokens,
    total_price: prices.total_price,
    currency: prices.currency,
    latency: Math.round(latencyMs) / 1000,
    input_tokens: result.inputTokens,
    output_tokens: result.outputTokens,
    charged_cents: prices.charged_cents,
    paid_by: prices.paid_by,
    ...(charge.receipt ? { receipt: charge.receipt } : {}),
  };
}
