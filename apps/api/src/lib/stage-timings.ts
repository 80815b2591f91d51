import type { FastifyInstance, FastifyRequest } from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    /** Stage names and the performance.now() each ended at, in order; only with SERVER_TIMING on. */
    stageMarks?: (string | number)[];
  }
}

/**
 * Where a request's time goes, stage by stage, as a `Server-Timing` header (a W3C standard that
 * browsers' network panels and `npm run bench:gateway` read): `parse` (the body read and parsed),
 * `validate` (the schema), `auth` (authentication, rate limits, admission: the route's own hooks),
 * then whatever the handler marks (a paid call: `app`, `prepare`, `pay`, `model`, `record`), and
 * `respond` (from the last mark to the reply's headers: the answer built, kept and serialised).
 * A streamed answer has none: its headers leave before its stages end.
 * Off unless `SERVER_TIMING=true`: then every request pays the hooks and the header, and the header
 * tells anyone how long the server's stages took, which is why it is for benchmarks, not production.
 */
export function installStageTimings(app: FastifyInstance): void {
  app.addHook("onRequest", async (request) => {
    request.stageMarks = ["start", performance.now()];
  });
  app.addHook("preValidation", async (request) => markStage(request, "parse"));
  app.addHook("preHandler", async (request) => markStage(request, "validate"));
  app.addHook("onSend", async (request, reply) => {
    const marks = request.stageMarks;
    if (!marks) return;
    markStage(request, "respond");
    reply.header("server-timing", serverTiming(marks));
  });
}

/** Ends a stage of this request (no-op unless stage timings are on). */
export function markStage(request: FastifyRequest, stage: string): void {
  request.stageMarks?.push(stage, performance.now());
}

/** `name;dur=ms` for each stage, then `total`: the marks' differences, in milliseconds. */
export function serverTiming(marks: (string | number)[]): string {
  const parts: string[] = [];
  const start = marks[1] as number;
  let previous = start;
  for (let i = 2; i < marks.length; i += 2) {
    const at = marks[i + 1] as number;
    parts.push(`${marks[i]};dur=${(at - previous).toFixed(3)}`);
    previous = at;
  }
  parts.push(`total;dur=${(previous - start).toFixed(3)}`);
  return parts.join(", ");
}
