/**
 * The loopback upstream of the gateway benchmark: an OpenAI-compatible /v1/chat/completions that
 * answers at once, or after a fixed delay. Runs in its own process so its work is not counted
 * against the client. Usage: node bench/gateway/upstream.ts <port> [delayMs]
 */
import http from "node:http";

const port = Number(process.argv[2] ?? 4260);
const delayMs = Number(process.argv[3] ?? 0);

const body = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "gpt-4o-mini",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "Hello from the loopback upstream." },
      finish_reason: "stop",
      logprobs: null,
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});

const answer = (res: http.ServerResponse) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
};

const server = http.createServer((req, res) => {
  // The request body is read (as a real vendor would) before answering.
  req.resume();
  req.on("end", () => {
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    if (delayMs > 0) setTimeout(() => answer(res), delayMs);
    else answer(res);
  });
});
server.keepAliveTimeout = 65_000;
server.maxConnections = 20_000;
server.listen(port, "127.0.0.1", () => process.send?.("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
