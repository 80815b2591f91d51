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

// How many calls were waiting here at once: during the soak, far more than the API's database
// pool means calls wait for the upstream without holding a connection or a transaction.
let inFlight = 0;
let maxInFlight = 0;

const server = http.createServer((req, res) => {
  // The request body is read (as a real vendor would) before answering.
  req.resume();
  req.on("end", () => {
    if (req.method === "GET" && req.url?.startsWith("/stats")) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ maxInFlight }));
      if (req.url.includes("reset")) maxInFlight = inFlight;
      return;
    }
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const done = () => {
      inFlight -= 1;
      answer(res);
    };
    if (delayMs > 0) setTimeout(done, delayMs);
    else done();
  });
});
server.keepAliveTimeout = 65_000;
server.maxConnections = 20_000;
server.listen(port, "127.0.0.1", () => process.send?.("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
