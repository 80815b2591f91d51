import { type ScriptedCall, scriptDirective } from "../fake-openai.ts";

/** How a paid call is made: which endpoint family, blocking or streamed, and its extras. */
export interface CallPlan {
  style: "dify" | "openai";
  mode: "completion" | "chat";
  streaming: boolean;
  /** Abort the stream after this many content chunks (0: right after the answer starts). */
  abortAfterChunks?: number;
  upstream: ScriptedCall;
  idempotencyKey?: string;
  maxPriceCents?: number;
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
}

const CALL_TIMEOUT_MS = 30_000;

/** One paid call over HTTP, read the way a real client would, aborted where the plan says. */
export async function makeCall(
  baseUrl: string,
  apiKey: string,
  slug: string,
  plan: CallPlan,
): Promise<CallOutcome> {
  const prompt = `attack ${scriptDirective(plan.upstream)}`;
  const { path, body } = requestOf(slug, plan, prompt);
  const headers: Record<string, string> = {
    authorization: `Bearer ${apiKey}`,
    "content-type": "application/json",
  };
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
    const response = await fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    outcome.status = response.status;
    outcome.replayed = response.headers.get("idempotent-replayed") === "true";
    for (const [name, value] of response.headers)
      if (name.startsWith("promptmint-")) outcome.priceHeaders[name] = value;
    const isStream = (response.headers.get("content-type") ?? "").startsWith("text/event-stream");
    if (!isStream) {
      const json = (await response.json().catch(() => undefined)) as Record<string, any> | undefined;
      outcome.invocationId = response.ok ? invocationIdOf(json?.message_id ?? json?.id) : undefined;
      outcome.completed = response.ok;
      outcome.errorCode = response.ok ? undefined : (json?.code ?? json?.error?.code);
      return outcome;
    }
    await readStream(response, plan, outcome, controller);
  } catch (error) {
    if (!outcome.aborted) outcome.transportError = String((error as Error).cause ?? error).slice(0, 200);
  } finally {
    clearTimeout(timer);
  }
  return outcome;
}

function requestOf(slug: string, plan: CallPlan, prompt: string): { path: string; body: object } {
  if (plan.style === "openai")
    return {
      path: "/api/v1/chat/completions",
      body: {
        model: slug,
        messages: [{ role: "user", content: prompt }],
        stream: plan.streaming,
        inputs: plan.mode === "completion" ? { query: prompt } : undefined,
      },
    };
  const response_mode = plan.streaming ? "streaming" : "blocking";
  return plan.mode === "chat"
    ? { path: `/api/app/${slug}/chat-messages`, body: { query: prompt, inputs: {}, response_mode } }
    : { path: `/api/app/${slug}/completion-messages`, body: { inputs: { query: prompt }, response_mode } };
}

/** Reads SSE events (Dify's or OpenAI's), counting content chunks, until the end or the planned abort. */
async function readStream(
  response: Response,
  plan: CallPlan,
  outcome: CallOutcome,
  controller: AbortController,
): Promise<void> {
  const reader = response.body?.getReader();
  if (!reader) return;
  const decoder = new TextDecoder();
  let buffer = "";
  const abortNow = () => {
    outcome.aborted = true;
    controller.abort();
  };
  if (plan.abortAfterChunks === 0) return abortNow();
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
        if (plan.abortAfterChunks !== undefined && outcome.chunks >= plan.abortAfterChunks) return abortNow();
      }
    }
  }
}

function readEvent(data: string, outcome: CallOutcome): void {
  if (data === "[DONE]") {
    outcome.completed = true;
    return;
  }
  const event = JSON.parse(data) as Record<string, any>;
  outcome.invocationId ??= invocationIdOf(event.message_id ?? event.id);
  if (event.error) outcome.streamError = { code: event.error.code ?? undefined };
  if (event.event === "error") outcome.streamError = { status: event.status, code: event.code };
  if (event.event === "message_end") outcome.completed = true;
  const content = event.event === "message" ? event.answer : event.choices?.[0]?.delta?.content;
  if (typeof content === "string" && content.length > 0) outcome.chunks += 1;
}

/** Dify answers name the invocation id; OpenAI's `chatcmpl-<32 hex>` is the same id without dashes. */
export function invocationIdOf(id: unknown): string | undefined {
  if (typeof id !== "string") return undefined;
  const hex = id.startsWith("chatcmpl-") ? id.slice(9) : id.replace(/-/g, "");
  if (!/^[0-9a-f]{32}$/i.test(hex)) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
