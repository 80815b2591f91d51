import http from "node:http";
import { listenOnLoopback } from "./loopback.ts";

export type VendorBehaviour =
  /**
   * Echoes the last message. `restAfter`: a stream sends its first word, then waits for it before
   * the rest: a test that opens it only once that word reached its client proves the stream is
   * passed on as it comes, whatever the machine's load (held back, the word never arrives first).
   */
  | { kind: "echo"; delayMs?: number; chunkDelayMs?: number; restAfter?: Promise<void> }
  | { kind: "reply"; text: string; delayMs?: number; chunkDelayMs?: number }
  /** Fails with `status` (and `headers`); after `times` failures (when given) it echoes again. */
  | { kind: "status"; status: number; message: string; headers?: Record<string, string>; times?: number }
  | { kind: "hang" }
  /**
   * Keeps every call in flight until `open` resolves, then echoes: a test holds calls for exactly as
   * long as it needs them running, not for a delay long enough for a loaded machine.
   */
  | { kind: "gated"; open: Promise<void> }
  /**
   * A model in a tool loop (docs/decisions/053): given tools and a conversation that does not end
   * with a tool result, it calls the first tool (or the one `tool_choice` names) `calls` times with
   * `arguments`; after the results it answers `final: <the results, joined by " | ">`.
   */
  | { kind: "tools"; arguments: string; calls?: number }
  /**
   * Each call says what it wants in its last message, as `[model delay=120 gap=8 words=20 fail=500]`
   * (any subset): wait `delay` ms, then fail with status `fail`, or answer `words` words, streamed
   * `gap` ms apart. A harness thus decides every call's upstream from its own seeded choices.
   */
  | { kind: "scripted" }
  /** Answers each request with what `answer` makes of it (an eval judge beside the app's own answers). */
  | { kind: "respond"; answer: (request: RecordedRequest) => string };

/** What a scripted call asked for (`[model …]` in its last message). */
export interface ScriptedCall {
  delayMs: number;
  gapMs: number;
  words: number;
  fail?: number;
}

/** The directive a scripted vendor reads: put it anywhere in the prompt. */
export function scriptDirective(call: ScriptedCall): string {
  return `[model delay=${call.delayMs} gap=${call.gapMs} words=${call.words}${call.fail ? ` fail=${call.fail}` : ""}]`;
}

export function readDirective(text: string): ScriptedCall {
  const found = /\[model ([^\]]*)\]/.exec(text)?.[1] ?? "";
  const value = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(found)?.[1] ?? Number.NaN);
  const fail = value("fail");
  return {
    delayMs: value("delay") || 0,
    gapMs: value("gap") || 0,
    words: value("words") || 3,
    ...(Number.isFinite(fail) ? { fail } : {}),
  };
}

export interface RecordedRequest {
  model: string;
  stream: boolean;
  messages: { role: string; content: string | null }[];
  authorization: string | undefined;
  /** The whole request body, as the vendor received it. */
  body: Record<string, unknown>;
  /** Set when the caller closed the request before the vendor finished answering it. */
  cancelled?: boolean;
}

interface ChatBody {
  model: string;
  stream?: boolean;
  messages: { role: string; content: string | null }[];
  tools?: { function: { name: string } }[];
  tool_choice?: string | { function: { name: string } };
}

function usageOf(body: ChatBody, text: string) {
  const promptTokens = body.messages.reduce((n, m) => n + (m.content ?? "").split(/\s+/).length, 0);
  const completionTokens = text.split(/\s+/).length;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

function streamChunk(model: string, delta: object, finish: string | null): string {
  return `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

/**
 * A loopback stand-in for an OpenAI-compatible vendor (/v1/chat/completions, blocking and
 * streaming with usage). Only the vendor is replaced: our server reaches it through the real
 * AI SDK provider.
 */
export async function startFakeOpenAi() {
  let behaviour: VendorBehaviour = { kind: "echo" };
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      if (req.url !== "/v1/chat/completions") {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw) as ChatBody;
      const recorded: RecordedRequest = {
        model: body.model,
        stream: Boolean(body.stream),
        messages: body.messages,
        authorization: req.headers.authorization,
        body: body as unknown as Record<string, unknown>,
      };
      requests.push(recorded);
      res.on("close", () => {
        if (!res.writableFinished) recorded.cancelled = true;
      });
      if (behaviour.kind === "hang") return;
      if (behaviour.kind === "gated") {
        const last = body.messages.at(-1)?.content ?? "";
        void behaviour.open.then(() => {
          if (!res.destroyed) answer(body, `echo: ${last}`, res);
        });
        return;
      }
      if (behaviour.kind === "status") {
        const failing = behaviour;
        if (failing.times !== undefined && --failing.times <= 0) behaviour = { kind: "echo" };
        res.writeHead(failing.status, { "content-type": "application/json", ...failing.headers });
        res.end(JSON.stringify({ error: { message: failing.message, type: "server_error" } }));
        return;
      }
      const last = body.messages.at(-1)?.content ?? "";
      if (behaviour.kind === "tools") return toolLoop(body, behaviour, res);
      if (behaviour.kind === "scripted") return scripted(body, readDirective(last), res);
      if (behaviour.kind === "respond") return answer(body, behaviour.answer(recorded), res);
      const text = behaviour.kind === "reply" ? behaviour.text : `echo: ${last}`;
      // An optional delay keeps the call in flight; the answer is dropped if the caller went away.
      const delayMs = behaviour.delayMs ?? 0;
      if (delayMs <= 0) return answer(body, text, res);
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) answer(body, text, res);
      }, delayMs);
      timers.add(timer);
    });
  });

  /** Runs after `ms` unless the vendor stops first; the callback is skipped if the caller went away. */
  function later(ms: number, res: http.ServerResponse, run: () => void) {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!res.destroyed) run();
    }, ms);
    timers.add(timer);
  }

  function scripted(body: ChatBody, call: ScriptedCall, res: http.ServerResponse) {
    const words = Array.from({ length: call.words }, (_, i) => `w${i + 1}`);
    later(call.delayMs, res, () => {
      if (call.fail) {
        res.writeHead(call.fail, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "injected failure", type: "server_error" } }));
        return;
      }
      if (!body.stream || call.gapMs <= 0) return answer(body, words.join(" "), res);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(streamChunk(body.model, { role: "assistant", content: "" }, null));
      const next = (i: number) => {
        if (i === words.length) return finishStream(body, words.join(" "), res);
        res.write(streamChunk(body.model, { content: i === 0 ? words[i] : ` ${words[i]}` }, null));
        later(call.gapMs, res, () => next(i + 1));
      };
      next(0);
    });
  }

  function toolLoop(
    body: ChatBody,
    step: Extract<VendorBehaviour, { kind: "tools" }>,
    res: http.ServerResponse,
  ) {
    const results = body.messages.filter((m) => m.role === "tool").map((m) => m.content);
    const first = body.tools?.[0]?.function.name;
    if (!first || body.messages.at(-1)?.role === "tool")
      return answer(body, `final: ${results.join(" | ")}`, res);
    const named = typeof body.tool_choice === "object" ? body.tool_choice.function.name : undefined;
    const calls = Array.from({ length: step.calls ?? 1 }, (_, i) => ({
      id: `call_fake_${requests.length}_${i}`,
      type: "function",
      function: { name: named ?? first, arguments: step.arguments },
    }));
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "chatcmpl-1",
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: null, tool_calls: calls },
              finish_reason: "tool_calls",
            },
          ],
          usage,
        }),
      );
      return;
    }
    // As OpenAI streams tool calls: the first piece names a call, the next carry its arguments.
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(streamChunk(body.model, { role: "assistant", content: null }, null));
    for (const [index, call] of calls.entries()) {
      const half = Math.ceil(call.function.arguments.length / 2);
      res.write(
        streamChunk(
          body.model,
          {
            tool_calls: [
              { index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } },
            ],
          },
          null,
        ),
      );
      for (const piece of [call.function.arguments.slice(0, half), call.function.arguments.slice(half)])
        res.write(streamChunk(body.model, { tool_calls: [{ index, function: { arguments: piece } }] }, null));
    }
    res.write(streamChunk(body.model, {}, "tool_calls"));
    res.write(
      `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: body.model, choices: [], usage })}\n\n`,
    );
    res.end("data: [DONE]\n\n");
  }

  function answer(body: ChatBody, text: string, res: http.ServerResponse) {
    const usage = usageOf(body, text);
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "chatcmpl-1",
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(streamChunk(body.model, { role: "assistant", content: "" }, null));
    const words = text.match(/\S+\s*/g) ?? [];
    const gapMs = behaviour.kind === "echo" || behaviour.kind === "reply" ? (behaviour.chunkDelayMs ?? 0) : 0;
    const restAfter = behaviour.kind === "echo" ? behaviour.restAfter : undefined;
    if (restAfter) {
      const [first = "", ...rest] = words;
      res.write(streamChunk(body.model, { content: first }, null));
      void restAfter.then(() => {
        if (res.destroyed) return;
        for (const word of rest) res.write(streamChunk(body.model, { content: word }, null));
        finishStream(body, text, res);
      });
      return;
    }
    if (gapMs <= 0) {
      for (const word of words) res.write(streamChunk(body.model, { content: word }, null));
      return finishStream(body, text, res);
    }
    // A slow stream: one word every chunkDelayMs, stopped if the caller went away.
    const next = (i: number) => {
      if (i >= words.length) return finishStream(body, text, res);
      res.write(streamChunk(body.model, { content: words[i] }, null));
      later(gapMs, res, () => next(i + 1));
    };
    next(0);
  }

  function finishStream(body: ChatBody, text: string, res: http.ServerResponse) {
    res.write(streamChunk(body.model, {}, "stop"));
    res.write(
      `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: body.model, choices: [], usage: usageOf(body, text) })}\n\n`,
    );
    res.end("data: [DONE]\n\n");
  }
  const { port, close } = await listenOnLoopback(server);

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    set(next: VendorBehaviour) {
      behaviour = next;
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      await close();
    },
  };
}
