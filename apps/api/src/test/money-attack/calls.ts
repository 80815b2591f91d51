import { decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { type ScriptedCall, scriptDirective } from "../fake-openai.ts";
import { type Oversize, withOversize } from "./oversized.ts";

/** How a paid call is made: which endpoint family, blocking or streamed, and its extras. */
export interface CallPlan {
  /**
   * The endpoint: Dify's chat/completion messages, OpenAI's chat completions or Responses, an app's
   * own MCP server (`tools/call`), the catalogue MCP server's `call_app`, or a workflow app's run.
   */
  style: "dify" | "openai" | "responses" | "mcp-app" | "mcp-catalogue" | "workflow";
  mode: "completion" | "chat";
  streaming: boolean;
  /** Abort the stream after this many content chunks (0: right after the answer starts). */
  abortAfterChunks?: number;
  upstream: ScriptedCall;
  idempotencyKey?: string;
  maxPriceCents?: number;
  /** Stop the stream (Dify's stop) once this many content chunks arrived (0: once its task id is known). */
  stopAfterChunks?: number;
  /** The stop goes to the other server process, which does not hold the stream (it stops nothing). */
  stopOnOtherNode?: boolean;
  /** Called with the payer's spend-limited key (decision 035). */
  limitedKey?: boolean;
  /** An input beyond what the call pays for (decision 063, oversized.ts): refused with 413. */
  oversize?: Oversize;
  /**
   * An MCP style sent as one JSON-RPC batch (decision 043): `members` tool calls (ids 1…, or the
   * same id more than once), plus `notifications` tool calls without an id (never to be run).
   */
  batch?: { members: number; repeatedIds: boolean; notifications: number };
  /** More request headers (an agent's `promptmint-prepay-cents`, `promptmint-balance-key`). */
  headers?: Record<string, string>;
}

/** Everything the client saw of one call: the log the judge compares with the charges. */
export interface CallOutcome {
  /** 0 when no HTTP answer arrived (connection refused or cut by a killed process). */
  status: number;
  /** The invocation id the answer named (Dify `message_id`, OpenAI `chatcmpl-<hex>`). */
  invocationId?: string;
  /** Content chunks received (streams). */
  chunks: number;
  /** The answer ended normally (blocking 2xx, or a stream's `message_end` / `[DONE]`). */
  completed: boolean;
  /** The client went away on purpose. */
  aborted: boolean;
  /** An `error` event inside a 200 stream. */
  streamError?: { status?: number; code?: string };
  errorCode?: string;
  replayed: boolean;
  /** Response headers about money (`promptmint-*`). */
  priceHeaders: Record<string, string>;
  transportError?: string;
  /** What the answer said it cost (`charged_cents` of its usage or MCP charge), and who paid. */
  reportedCents?: number;
  paidBy?: string;
  /**
   * An MCP tool result with `isError`: its HTTP status is 200, and `status` above is the one its
   * text names ("402 payment_required: …"), so that the judge reads it like any refusal.
   */
  toolError?: boolean;
  /** The stop sent while the stream ran: after how many chunks, and its answer's status. */
  stop?: { afterChunks: number; status: number };
  /** A batch's answers, one per member answered (none when the batch was refused whole). */
  batch?: { answered: BatchMemberOutcome[] };
  /** An x402 call's settlement, from its PAYMENT-RESPONSE header (blocking answers only). */
  x402Transaction?: string;
}

/** One batch member's answer: its JSON-RPC id, and what a tool result said (as a single call's). */
export interface BatchMemberOutcome {
  id: unknown;
  invocationId?: string;
  reportedCents?: number;
  paidBy?: string;
  toolError?: boolean;
  errorCode?: string;
}

/** What a call may do while it runs: stop its own stream (answers the stop's HTTP status). */
export interface CallHooks {
  stop?(taskId: string): Promise<number>;
}

const CALL_TIMEOUT_MS = 30_000;

/** One paid call over HTTP, read the way a real client would, aborted where the plan says. */
export async function makeCall(
  baseUrl: string,
  apiKey: string,
  slug: string,
  plan: CallPlan,
  hooks: CallHooks = {},
  /** The client's fetch: an x402 agent's pays the 402s it meets (apiKey "": no credentials). */
  send: typeof fetch = fetch,
  /**
   * An x402 agent's MCP payment (decision 074): MCP styles then go to the agents' endpoints, and
   * an unpaid tool result's PaymentRequired is paid with this, the call sent again with it in
   * `_meta["x402/payment"]`.
   */
  payMcp?: (required: PaymentRequired) => Promise<PaymentPayload>,
): Promise<CallOutcome> {
  const prompt = `attack ${scriptDirective(plan.upstream)}`;
  const { path, body } = withOversize(plan, requestOf(slug, plan, prompt, payMcp !== undefined), prompt);
  const headers: Record<string, string> = {
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  Object.assign(headers, plan.headers);
  if (plan.idempotencyKey) headers["idempotency-key"] = plan.idempotencyKey;
  if (plan.maxPriceCents !== undefined) headers["promptmint-max-price-cents"] = String(plan.maxPriceCents);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), CALL_TIMEOUT_MS);
  const outcome: CallOutcome = {
    status: 0,
    chunks: 0,
    completed: false,
    aborted: false,
    replayed: false,
    priceHeaders: {},
  };
  try {
    const response = await send(`${baseUrl}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    outcome.status = response.status;
    const settlement = response.headers.get("payment-response");
    if (settlement) outcome.x402Transaction = decodePaymentResponseHeader(settlement).transaction;
    outcome.replayed = response.headers.get("idempotent-replayed") === "true";
    for (const [name, value] of response.headers)
      if (name.startsWith("promptmint-")) outcome.priceHeaders[name] = value;
    const isStream = (response.headers.get("content-type") ?? "").startsWith("text/event-stream");
    if (!isStream) {
      const json = (await response.json().catch(() => undefined)) as Record<string, any> | undefined;
      if (plan.style === "mcp-app" || plan.style === "mcp-catalogue") {
        const required = json?.result?.isError ? json.result.structuredContent : undefined;
        if (payMcp && required?.x402Version !== undefined) {
          const payment = await payMcp(required as PaymentRequired);
          const paidBody = body as { params: Record<string, unknown> };
          const paid = await send(`${baseUrl}${path}`, {
            method: "POST",
            headers,
            body: JSON.stringify({
              ...paidBody,
              params: { ...paidBody.params, _meta: { "x402/payment": payment } },
            }),
            signal: controller.signal,
          });
          outcome.status = paid.status;
          const paidJson = (await paid.json().catch(() => undefined)) as Record<string, any> | undefined;
          const transaction = paidJson?.result?._meta?.["x402/payment-response"]?.transaction;
          if (typeof transaction === "string" && transaction) outcome.x402Transaction = transaction;
          readToolResult(paid, paidJson, outcome);
          return outcome;
        }
        readToolResult(response, json, outcome);
        return outcome;
      }
      outcome.invocationId = response.ok
        ? invocationIdOf(json?.message_id ?? json?.task_id ?? json?.id)
        : undefined;
      outcome.completed = response.ok;
      outcome.errorCode = response.ok ? undefined : (json?.code ?? json?.error?.code);
      if (response.ok) readUsage(json?.metadata?.usage ?? json?.usage, outcome);
      return outcome;
    }
    await readStream(response, plan, outcome, controller, hooks);
  } catch (error) {
    if (!outcome.aborted) outcome.transportError = String((error as Error).cause ?? error).slice(0, 200);
  } finally {
    clearTimeout(timer);
  }
  return outcome;
}

function requestOf(
  slug: string,
  plan: CallPlan,
  prompt: string,
  /** An x402 agent: MCP goes to the agents' endpoints (decision 074). */
  agent = false,
): { path: string; body: object } {
  const inputs = plan.mode === "completion" ? { query: prompt } : undefined;
  if (plan.style === "openai")
    return {
      path: "/api/v1/chat/completions",
      body: {
        model: slug,
        messages: [{ role: "user", content: prompt }],
        stream: plan.streaming,
        // The final chunk then says what the call cost (decision 029).
        ...(plan.streaming ? { stream_options: { include_usage: true } } : {}),
        inputs,
      },
    };
  if (plan.style === "responses")
    return {
      path: "/api/v1/responses",
      body: { model: slug, input: prompt, stream: plan.streaming, inputs },
    };
  const rpc = (name: string, args: object) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: args },
  });
  const mcp = agent ? "/api/v1/agents" : "/api";
  if (plan.style === "mcp-app") return { path: `${mcp}/app/${slug}/mcp`, body: rpc(slug, { query: prompt }) };
  if (plan.style === "mcp-catalogue")
    return { path: `${mcp}/mcp`, body: rpc("call_app", { slug, inputs: { query: prompt } }) };
  const response_mode = plan.streaming ? "streaming" : "blocking";
  if (plan.style === "workflow")
    return { path: `/api/app/${slug}/workflows/run`, body: { inputs: { query: prompt }, response_mode } };
  return plan.mode === "chat"
    ? { path: `/api/app/${slug}/chat-messages`, body: { query: prompt, inputs: {}, response_mode } }
    : { path: `/api/app/${slug}/completion-messages`, body: { inputs: { query: prompt }, response_mode } };
}

/**
 * An MCP batch (plan.batch): the plan's tool call as `members` requests and `notifications`
 * notifications in one JSON array. A server may refuse it whole (a JSON-RPC error, HTTP 400) or
 * answer an array, read member by member like single tool results.
 */
export async function makeBatchCall(
  baseUrl: string,
  apiKey: string,
  slug: string,
  plan: CallPlan,
): Promise<CallOutcome> {
  const shape = plan.batch ?? { members: 1, repeatedIds: false, notifications: 0 };
  const prompt = `attack ${scriptDirective(plan.upstream)}`;
  const { path, body } = requestOf(slug, plan, prompt);
  const ids = Array.from({ length: shape.members }, (_, i) => (shape.repeatedIds && i > 0 ? i : i + 1));
  const messages = [
    ...ids.map((id) => ({ ...body, id })),
    ...Array.from({ length: shape.notifications }, () => {
      const { id: _, ...notification } = body as { id?: unknown };
      return notification;
    }),
  ];
  const outcome: CallOutcome = {
    status: 0,
    chunks: 0,
    completed: false,
    aborted: false,
    replayed: false,
    priceHeaders: {},
    batch: { answered: [] },
  };
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${apiKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-03-26",
      },
      body: JSON.stringify(messages),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    outcome.status = response.status;
    const json = (await response.json().catch(() => undefined)) as unknown;
    if (!Array.isArray(json)) {
      const error = (json as Record<string, any> | undefined)?.error;
      outcome.errorCode = error?.code !== undefined ? `jsonrpc ${error.code}` : (json as any)?.code;
      return outcome;
    }
    for (const answer of json as Record<string, any>[]) {
      const member: CallOutcome = { ...outcome, batch: undefined };
      readToolResult(response, answer, member);
      outcome.batch?.answered.push({
        id: answer?.id,
        invocationId: member.invocationId,
        reportedCents: member.reportedCents,
        paidBy: member.paidBy,
        toolError: member.toolError,
        errorCode: member.errorCode,
      });
    }
  } catch (error) {
    outcome.transportError = String((error as Error).cause ?? error).slice(0, 200);
  }
  return outcome;
}

/** Reads SSE events (Dify's or OpenAI's), counting content chunks, until the end or the planned abort. */
async function readStream(
  response: Response,
  plan: CallPlan,
  outcome: CallOutcome,
  controller: AbortController,
  hooks: CallHooks,
): Promise<void> {
  const reader = response.body?.getReader();
  if (!reader) return;
  const decoder = new TextDecoder();
  let buffer = "";
  const abortNow = () => {
    outcome.aborted = true;
    controller.abort();
  };
  // The stop is sent while the stream is read on: its events (a stopped stream's end) still count.
  let stopping: Promise<void> | undefined;
  const maybeStop = () => {
    if (stopping || !hooks.stop || plan.stopAfterChunks === undefined) return;
    if (!outcome.invocationId || outcome.completed || outcome.chunks < plan.stopAfterChunks) return;
    const afterChunks = outcome.chunks;
    stopping = hooks.stop(outcome.invocationId).then(
      (status) => {
        outcome.stop = { afterChunks, status };
      },
      () => {
        outcome.stop = { afterChunks, status: 0 };
      },
    );
  };
  if (plan.abortAfterChunks === 0) return abortNow();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf("\n\n");
        for (const line of event.split("\n")) {
          if (!line.startsWith("data: ")) continue;
          readEvent(line.slice(6), outcome);
          if (plan.abortAfterChunks !== undefined && outcome.chunks >= plan.abortAfterChunks)
            return abortNow();
          maybeStop();
        }
      }
    }
  } finally {
    await stopping;
  }
}

/** One SSE event of any of the styles: Dify's (messages, workflow runs), OpenAI's chat chunks or Responses events. */
function readEvent(data: string, outcome: CallOutcome): void {
  if (data === "[DONE]") {
    outcome.completed = true;
    return;
  }
  const event = JSON.parse(data) as Record<string, any>;
  if (typeof event.type === "string" && event.type.startsWith("response.")) {
    readResponsesEvent(event, outcome);
    return;
  }
  outcome.invocationId ??= invocationIdOf(event.message_id ?? event.task_id ?? event.id);
  if (event.error) outcome.streamError = { code: event.error.code ?? undefined };
  if (event.event === "error") outcome.streamError = { status: event.status, code: event.code };
  if (event.event === "message_end" || event.event === "workflow_finished") {
    outcome.completed = true;
    readUsage(event.metadata?.usage, outcome);
  }
  if (event.usage) readUsage(event.usage, outcome);
  const content =
    event.event === "message"
      ? event.answer
      : event.event === "text_chunk"
        ? event.data?.text
        : event.choices?.[0]?.delta?.content;
  if (typeof content === "string" && content.length > 0) outcome.chunks += 1;
}

/** The Responses API's events: the id in `response.created`, text deltas, `response.completed` or `.failed`. */
function readResponsesEvent(event: Record<string, any>, outcome: CallOutcome): void {
  outcome.invocationId ??= invocationIdOf(event.response?.id);
  if (
    event.type === "response.output_text.delta" &&
    typeof event.delta === "string" &&
    event.delta.length > 0
  )
    outcome.chunks += 1;
  if (event.type === "response.completed") {
    outcome.completed = true;
    readUsage(event.response?.usage, outcome);
  }
  if (event.type === "response.failed") outcome.streamError = { code: event.response?.error?.code };
}

/** What an answer's usage says it cost (decision 029: `charged_cents` and `paid_by` in every style). */
function readUsage(usage: Record<string, any> | undefined, outcome: CallOutcome): void {
  if (typeof usage?.charged_cents === "number") outcome.reportedCents = usage.charged_cents;
  if (typeof usage?.paid_by === "string") outcome.paidBy = usage.paid_by;
}

/**
 * An MCP `tools/call` answer (JSON, the servers are stateless): a result with the charge in
 * `_meta["promptmint/charge"]`, or a tool error whose text starts with the status and code it stands
 * for ("402 key_limit_reached: …"), or a JSON-RPC error.
 */
function readToolResult(
  response: Response,
  json: Record<string, any> | undefined,
  outcome: CallOutcome,
): void {
  const result = json?.result as Record<string, any> | undefined;
  if (!response.ok || !result) {
    outcome.errorCode = json?.error ? `jsonrpc ${json.error.code}` : (json?.code ?? json?.error?.code);
    return;
  }
  if (result.isError) {
    const text = String(result.content?.[0]?.text ?? "");
    const named = /^(\d{3}) ([a-z_]+):/.exec(text);
    // The error for programs when there is one (a payment-required result's text is its JSON).
    const meta = result._meta?.["promptmint/error"] as { status?: number; code?: string } | undefined;
    outcome.toolError = true;
    outcome.status = meta?.status ?? (named ? Number(named[1]) : 0);
    outcome.errorCode = meta?.code ?? named?.[2] ?? text.slice(0, 80);
    return;
  }
  const charge = result._meta?.["promptmint/charge"] as Record<string, any> | undefined;
  outcome.invocationId = invocationIdOf(charge?.message_id);
  outcome.completed = true;
  readUsage(charge, outcome);
}

/**
 * Dify answers name the invocation id; OpenAI's `chatcmpl-<32 hex>` and `resp_<32 hex>` are the
 * same id without dashes.
 */
export function invocationIdOf(id: unknown): string | undefined {
  if (typeof id !== "string") return undefined;
  const hex = id.startsWith("chatcmpl-")
    ? id.slice(9)
    : id.startsWith("resp_")
      ? id.slice(5)
      : id.replace(/-/g, "");
  if (!/^[0-9a-f]{32}$/i.test(hex)) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
