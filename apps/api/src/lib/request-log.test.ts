import Fastify, { LogController } from "fastify";
import { describe, expect, it } from "vitest";
import { createReadableLogStream, installRequestLog } from "./request-log.ts";

/** A server with the request log, its JSON lines collected. */
async function serverLogging(logAssets: boolean) {
  const lines: Record<string, unknown>[] = [];
  const app = Fastify({
    logger: { level: "info", stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
    logController: new LogController({ disableRequestLogging: true }),
  });
  installRequestLog(app, { logAssets });
  app.get("/api/thing", async () => ({ ok: true }));
  app.get("/assets/app.js", async () => "js");
  app.get("/api/stream", (_request, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, { "content-type": "text/event-stream" });
    reply.raw.end("data: done\n\n");
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const address = app.server.address() as { port: number };
  const get = (path: string) => fetch(`http://127.0.0.1:${address.port}${path}`).then((r) => r.text());
  const requestLines = () => lines.filter((line) => line.req);
  return { app, get, requestLines };
}

describe("request log", () => {
  it("writes one line per request, streamed answers included, and leaves the web app's files out in development", async () => {
    const { app, get, requestLines } = await serverLogging(false);
    await get("/api/thing");
    await get("/assets/app.js");
    await get("/assets/missing.js");
    await get("/api/stream");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requestLines().map((line) => line.msg)).toEqual([
      expect.stringMatching(/^GET \/api\/thing 200 [\d.]+ ms$/),
      expect.stringMatching(/^GET \/assets\/missing\.js 404 [\d.]+ ms$/),
      expect.stringMatching(/^GET \/api\/stream 200 [\d.]+ ms$/),
    ]);
    await app.close();
  });

  it("logs every request in production", async () => {
    const { app, get, requestLines } = await serverLogging(true);
    await get("/assets/app.js");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requestLines()).toEqual([
      expect.objectContaining({ req: { method: "GET", url: "/assets/app.js" }, res: { statusCode: 200 } }),
    ]);
    await app.close();
  });

  it("turns pino's JSON into readable one-liners, with extra fields and an error's stack", () => {
    let written = "";
    const stream = createReadableLogStream({ write: (text) => (written += text) });
    const time = new Date(2026, 10, 24, 12, 4, 5).getTime();
    stream.write(
      JSON.stringify({ level: 30, time, pid: 1, hostname: "h", reqId: "req-1", msg: "GET / 200 1.0 ms" }),
    );
    stream.write(
      JSON.stringify({
        level: 50,
        time,
        msg: "sweep failed",
        holdId: "h-1",
        err: { message: "boom", stack: "Error: boom\n    at x" },
      }),
    );
    expect(written).toBe(
      "12:04:05 INFO  GET / 200 1.0 ms\n12:04:05 ERROR sweep failed holdId=h-1\nError: boom\n    at x\n",
    );
  });
});
