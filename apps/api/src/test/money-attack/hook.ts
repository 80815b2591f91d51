import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { readDirective } from "../fake-openai.ts";

/**
 * The workflow engine of the attack's workflow apps: a loopback endpoint speaking Promptmint's
 * webhook contract ({mode, query, inputs, …} in, {answer, usage} out). Like the scripted model, each
 * call says what it wants in a `[model delay=… words=… fail=…]` directive anywhere in its query or
 * inputs: wait, then fail with that status or answer that many words. A provider test ping answers
 * at once.
 */
export async function startAttackHook(): Promise<{ url: string; stop(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      const json = (status: number, value: unknown) => {
        if (res.destroyed) return;
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      if (body.test) return json(200, { answer: "pong" });
      const call = readDirective(JSON.stringify(body));
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (call.fail) return json(call.fail, { message: "injected failure" });
        const answer = Array.from({ length: call.words }, (_, i) => `w${i + 1}`).join(" ");
        json(200, { answer, usage: { input_tokens: 5, output_tokens: call.words } });
      }, call.delayMs);
      timers.add(timer);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    async stop() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
