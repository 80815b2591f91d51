import http from "node:http";
import type { AddressInfo } from "node:net";

export type VendorBehaviour =
  | { kind: "echo"; delayMs?: number; chunkDelayMs?: number }
  | { kind: "reply"; text: string; delayMs?: number; chunkDelayMs?: number }
  | { kind: "status"; status: number; message: string }
  | { kind: "hang" };

export interface RecordedRequest {
  model: string;
  stream: boolean;
  messages: { role: string; content: string }[];
  authorization: string | undefined;
}

/**
 * A loopback stand-in for an OpenAI-compatible vendor (/v1/chat/completions, blocking and
 * streaming with usage). Only the vendor is replaced: our server reaches it through the real
 * AI SDK provider.
 */
export async function startFakeOpenAi() {
  let behaviour: VendorBehaviour = { kind: "echo" };
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();
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
      const body = JSON.parse(raw) as {
        model: string;
        stream?: boolean;
        messages: { role: string; content: string }[];
      };
      requests.push({
        model: body.model,
        stream: Boolean(body.stream),
        messages: body.messages,
        authorization: req.headers.authorization,
      });
      if (behaviour.kind === "hang") return;
      if (behaviour.kind === "status") {
        res.writeHead(behaviour.status, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: behaviour.message, type: "server_error" } }));
        return;
      }
      const last = body.messages.at(-1)?.content ?? "";
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

  function answer(
    body: { model: string; stream?: boolean; messages: { role: string; content: string }[] },
    text: string,
    res: http.ServerResponse,
  ) {
    const promptTokens = body.messages.reduce((n, m) => n + m.content.split(/\s+/).length, 0);
    const completionTokens = text.split(/\s+/).length;
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    };
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
    const chunk = (delta: object, finish: string | null, extra: object = {}) =>
      `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
    res.write(chunk({ role: "assistant", content: "" }, null));
    const words = text.match(/\S+\s*/g) ?? [];
    const finish = () => {
      res.write(chunk({}, "stop"));
      res.write(
        `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: body.model, choices: [], usage })}\n\n`,
      );
      res.end("data: [DONE]\n\n");
    };
    const chunkDelayMs = behaviour.kind === "echo" || behaviour.kind === "reply" ? behaviour.chunkDelayMs : 0;
    if (!chunkDelayMs) {
      for (const word of words) res.write(chunk({ content: word }, null));
      return finish();
    }
    // A slow stream: one word every chunkDelayMs, stopped if the caller went away.
    let next = 0;
    const tick = () => {
      if (res.destroyed) return;
      if (next >= words.length) return finish();
      res.write(chunk({ content: words[next++] }, null));
      const timer = setTimeout(() => {
        timers.delete(timer);
        tick();
      }, chunkDelayMs);
      timers.add(timer);
    };
    tick();
  }
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    set(next: VendorBehaviour) {
      behaviour = next;
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
