import type { FastifyInstance, FastifyRequest } from "fastify";
import { isWarmUpRequest } from "./warm-up-requests.ts";

/** Paths the server answers itself; anything else a GET reaches is the web app's files. */
const SERVER_PATHS = /^\/(api|oidc|healthz|metrics|\.well-known)(\/|$|\?)/;

/**
 * One log line per request, written when the answer is sent (method, URL, status, time), instead
 * of Fastify's two (received, completed). Outside production the web app's own files (scripts,
 * styles, images, the SPA's pages) are not logged unless they fail: in development they are most of
 * the traffic and none of the news.
 */
export function installRequestLog(app: FastifyInstance, options: { logAssets: boolean }): void {
  // On the raw response's close, not onResponse: streamed (hijacked) answers are logged too, when they end.
  app.addHook("onRequest", async (request, reply) => {
    if (isWarmUpRequest(request)) return;
    reply.raw.once("close", () => {
      const status = reply.raw.statusCode;
      if (!options.logAssets && status < 400 && isWebAsset(request)) return;
      const ms = reply.elapsedTime;
      const gone = reply.raw.writableFinished ? "" : " (client left)";
      const url = withoutLinkTokens(request.url);
      request.log[status >= 500 ? "error" : "info"](
        { req: { method: request.method, url }, res: { statusCode: status }, responseTime: ms },
        `${request.method} ${url} ${status} ${ms.toFixed(1)} ms${gone}`,
      );
    });
  });
}

/** A mailed link's single-use token (verify email, reset password) is a credential: never logged. */
export function withoutLinkTokens(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/g, "$1[redacted]");
}

function isWebAsset(request: FastifyRequest): boolean {
  return (request.method === "GET" || request.method === "HEAD") && !SERVER_PATHS.test(request.url);
}

const LEVELS: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO ",
  40: "WARN ",
  50: "ERROR",
  60: "FATAL",
};
/** Fields every pino line has; the rest of a line's fields are shown after its message. */
const ROUTINE_FIELDS = new Set([
  "level",
  "time",
  "pid",
  "hostname",
  "msg",
  "reqId",
  "req",
  "res",
  "responseTime",
]);

/**
 * Development logs as readable one-liners (`12:04:05 INFO  POST /api/app/x 200 8.1 ms`), with an
 * error's stack under its line; production keeps pino's JSON, one object per line, for machines.
 */
export function createReadableLogStream(out: { write(text: string): unknown } = process.stdout) {
  return {
    write(line: string) {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line);
      } catch {
        out.write(line);
        return;
      }
      const time = new Date(Number(entry.time)).toTimeString().slice(0, 8);
      const level = LEVELS[Number(entry.level)] ?? String(entry.level);
      const extra = Object.entries(entry)
        .filter(([key]) => !ROUTINE_FIELDS.has(key) && key !== "err")
        .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`);
      const err = entry.err as { stack?: string; message?: string } | undefined;
      const text = [time, level, entry.msg ?? "", ...extra].join(" ").trimEnd();
      out.write(`${text}\n${err ? `${err.stack ?? err.message}\n` : ""}`);
    },
  };
}
