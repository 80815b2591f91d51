import { createHash } from "node:crypto";
import type { ConfigSchema } from "@promptmint/contracts";
import { AppError } from "../../../lib/errors.ts";
import { createLookupCache } from "../../../lib/lookup-cache.ts";
import type { SafeFetch, SafeResponse } from "../../../lib/safe-fetch.ts";
import { upstreamRateLimited } from "../../../lib/upstream-rate-limit.ts";

export type ConfigValues = Record<string, string | number | boolean>;

export interface WorkflowCall {
  mode: "completion" | "chat";
  inputs: Record<string, unknown>;
  query?: string;
  user: string;
  /** The provider's own conversation id from the previous turn, if any. */
  providerConversationId?: string;
  /** Our conversation id (providers keyed by a session id of our choosing use it). */
  conversationId?: string;
  maxIterations: number;
}

export interface WorkflowAnswer {
  answer: string;
  inputTokens: number;
  outputTokens: number;
  providerConversationId?: string;
}

export interface ProviderContext {
  config: ConfigValues;
  fetch: SafeFetch;
  timeoutMs: number;
}

export interface WorkflowStream {
  chunks: AsyncIterable<string>;
  result: Promise<WorkflowAnswer>;
}

/** One workflow provider. Adding a provider means adding one module that implements this. */
export interface WorkflowProviderAdapter {
  slug: "dify" | "n8n" | "flowise" | "webhook";
  name: string;
  description: string;
  configSchema: ConfigSchema;
  supportsStreaming: boolean;
  invoke(context: ProviderContext, call: WorkflowCall): Promise<WorkflowAnswer>;
  stream?(context: ProviderContext, call: WorkflowCall): WorkflowStream;
  /** Calls the provider for real to check the configuration; throws an AppError when it is wrong. */
  test(context: ProviderContext): Promise<{ message: string; appInfo: Record<string, unknown> | null }>;
}

export const str = (config: ConfigValues, key: string) => String(config[key] ?? "").trim();

/** How long a fact about the provider's app (Dify's app mode, a Flowise flow's kind) is reused. */
export const UPSTREAM_FACTS_TTL_MS = 60_000;

/**
 * What a call must know about the provider's app before sending it, asked of the provider at most
 * once a minute per app. Keyed by a hash of the identifying settings (URL, key), so no secret is a
 * map key; a failed lookup (undefined) is not kept.
 */
export function upstreamFacts<V>(): (
  identity: string[],
  load: () => Promise<V | undefined>,
) => Promise<V | undefined> {
  const cache = createLookupCache<V>(UPSTREAM_FACTS_TTL_MS, Date.now);
  return (identity, load) =>
    cache.get(createHash("sha256").update(identity.join("\u0000")).digest("hex"), load);
}

/** A provider's error answer becomes a 502 carrying its status and message (a 429 stays a 429). */
export async function ensureOk(response: SafeResponse, providerName: string): Promise<void> {
  if (response.status >= 200 && response.status < 300) return;
  // A rate limit is passed on as one, with the wait the provider asked for (nothing is charged).
  if (response.status === 429) throw upstreamRateLimited(Object.fromEntries(response.headers), providerName);
  const text = await response.text().catch(() => "");
  let message = text.slice(0, 300);
  try {
    const parsed = JSON.parse(text) as { message?: string; error?: string | { message?: string } };
    const error = typeof parsed.error === "string" ? parsed.error : parsed.error?.message;
    message = parsed.message ?? error ?? message;
  } catch {}
  throw new AppError(
    "upstream_failed",
    `${providerName} answered HTTP ${response.status}${message ? `: ${message}` : ""}`,
  );
}

/** POSTs `body` as JSON to `url` within the call's time; an error answer throws (ensureOk). */
export async function postJson(
  context: ProviderContext,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  providerName: string,
): Promise<SafeResponse> {
  const response = await context.fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    timeoutMs: context.timeoutMs,
  });
  await ensureOk(response, providerName);
  return response;
}

export async function readJson<T>(response: SafeResponse, providerName: string): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new AppError("upstream_failed", `${providerName} answered with something that is not JSON`);
  }
}

/** Parses a server-sent-event stream into the JSON of each `data:` line. */
export async function* readSseJson(chunks: AsyncIterable<string>): AsyncGenerator<Record<string, unknown>> {
  let buffer = "";
  for await (const chunk of chunks) {
    buffer += chunk;
    let boundary = buffer.indexOf("\n\n");
    while (boundary >= 0) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      for (const line of block.split("\n")) {
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (!data || data === "[DONE]") continue;
        try {
          yield JSON.parse(data) as Record<string, unknown>;
        } catch {
          // A malformed event is skipped, like Dify's own clients do.
        }
      }
      boundary = buffer.indexOf("\n\n");
    }
  }
}

/** A blocking answer from a provider that only streams: the stream read to its end. */
export async function collect(stream: WorkflowStream): Promise<WorkflowAnswer> {
  for await (const _chunk of stream.chunks) {
    // The answer is assembled by the stream itself; the chunks only need reading.
  }
  return stream.result;
}

/** Turns a stream generator that returns the final answer into the chunks + result pair. */
export function toWorkflowStream(run: () => AsyncGenerator<string, WorkflowAnswer>): WorkflowStream {
  let settle!: (answer: WorkflowAnswer) => void;
  let fail!: (error: unknown) => void;
  const result = new Promise<WorkflowAnswer>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  result.catch(() => {});
  return {
    result,
    chunks: {
      async *[Symbol.asyncIterator]() {
        const iterator = run();
        try {
          while (true) {
            const step = await iterator.next();
            if (step.done) {
              settle(step.value);
              return;
            }
            yield step.value;
          }
        } catch (error) {
          fail(error);
        }
      },
    },
  };
}
