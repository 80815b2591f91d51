import http from "node:http";
import { listenOnLoopback } from "../test/loopback.ts";

export type UpstreamBehaviour = "ok" | "huge" | "hang" | "malformed" | { delayMs: number };

/**
 * A loopback webhook (Promptmint's JSON contract at POST /hook) that counts every call it
 * receives and can answer too much, too late, or not JSON at all.
 */
export async function startCountingUpstream() {
  let behaviour: UpstreamBehaviour = "ok";
  let calls = 0;
  const timers = new Set<NodeJS.Timeout>();
  /** Resolvers waiting for the next call to arrive. */
  let waiting: (() => void)[] = [];

  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      calls += 1;
      for (const resolve of waiting) resolve();
      waiting = [];
      const answer = () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ answer: "fine", usage: { input_tokens: 1, output_tokens: 1 } }));
      };
      // A path ending in /hang or /slow overrides the behaviour for that app alone.
      const mode: UpstreamBehaviour = req.url?.endsWith("/hang")
        ? "hang"
        : req.url?.endsWith("/slow")
          ? { delayMs: 1500 }
          : behaviour;
      if (mode === "hang") return;
      if (mode === "malformed") {
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<html><body>502 Bad Gateway</body></html>");
        return;
      }
      if (mode === "huge") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"answer":"');
        const chunk = "x".repeat(64 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < 8 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end('"}');
        };
        res.on("error", () => {});
        pump();
        return;
      }
      if (typeof mode === "object") {
        const timer = setTimeout(() => {
          timers.delete(timer);
          if (!res.destroyed) answer();
        }, mode.delayMs);
        timers.add(timer);
        return;
      }
      answer();
    });
  });
  const { port, close } = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    get calls() {
      return calls;
    },
    set(next: UpstreamBehaviour) {
      behaviour = next;
    },
    /** Resolves when the next call reaches the upstream. */
    nextCall() {
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      await close();
    },
  };
}
