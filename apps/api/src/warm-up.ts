import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from "fastify";
import { type Database, warmConnections } from "./db/client.ts";
import type { ApplicationRow } from "./db/schema/index.ts";
import type { SecretBox } from "./lib/secrets.ts";
import { findApplicationBySlugCached } from "./modules/applications/applications.service.ts";
import type { LocalUser } from "./modules/auth/auth.service.ts";
import { chatDialect } from "./modules/gateway/openai-chat.ts";
import { ChatCompletionRequestSchema, chatCall } from "./modules/gateway/openai-request.ts";
import { preparePromptExecution } from "./modules/gateway/prompt-call.ts";
import type { LlmClient } from "./modules/models/llm.ts";

/**
 * Start-up warm-up (issue 20, docs/decisions/039-warm-start.md): before the server says it listens,
 * what the first paid call would otherwise pay for is done once, without touching money.
 *  1. Database: the pools' connections are opened (and kept while idle), the paid path's named
 *     statements are parsed on each, then run past PostgreSQL's custom plans with parameters that
 *     match no row, in a transaction rolled back (nothing is read or written).
 *  2. Request-shaped passes: a Chat Completions and a Dify-style call with a key that does not
 *     exist, through the whole request pipeline (routing, hooks, the key lookup, the error answer)
 *     up to its 401, before anything is paid or recorded.
 *  3. The paid path's own code as far as payment, on made-up values: the request body's schema,
 *     the app and prompt lookups (of ids that do not exist: nothing is found or cached) and the
 *     answer's shape. The payment, the lease and the record are not run: they are money.
 *  4. The model client: the first blocking answer's code against a loopback server (no vendor is
 *     called) and the sandbox's tokenizer (models/llm.ts warmUp).
 * Each step may fail (a database that refuses more connections, say): the failure is logged and
 * the server starts anyway, as cold as before.
 */
export interface WarmUpReport {
  ms: number;
  /** Database connections opened and kept (main and writer pools); 0 on PGlite. */
  connections: number;
  /** Named statements parsed on them. */
  statements: number;
  /** Named statements run past their custom plans on them (db/client.ts planOn). */
  plans: number;
  /** Request-shaped passes answered as expected (401). */
  requests: number;
  /** The model client's answer path ran against the loopback server. */
  upstream: boolean;
  /** The sandbox's tokenizer is built. */
  tokenizer: boolean;
  failures: string[];
  /** Milliseconds each step took. */
  stepMs: Record<string, number>;
}

/**
 * The address the warm-up's requests come from (light-my-request's socket). No real socket has it,
 * and it is the raw socket's address (not X-Forwarded-For): a client cannot pose as the warm-up.
 */
export const WARM_UP_ADDRESS = "warm-up";

/** A warm-up request: not logged, not counted in the metrics. */
export function isWarmUpRequest(request: FastifyRequest): boolean {
  return request.raw.socket?.remoteAddress === WARM_UP_ADDRESS;
}

/** Made-up app and caller of the paid-path pass: their ids match no row. */
const NO_SUCH_APP = {
  id: "00000000-0000-4000-8000-00000000000a",
  ownerId: "00000000-0000-4000-8000-00000000000b",
  slug: "warm-up-no-such-app",
  type: "prompt",
  interactionMode: "completion",
  status: "live",
  visibility: "public",
  priceCents: 1,
} as ApplicationRow;
const NO_SUCH_USER = { id: "00000000-0000-4000-8000-00000000000c", isActive: true } as LocalUser;

/** A key of the right shape that no key hashes to (keys are `pm_` and random base64url). */
const NO_SUCH_KEY = "pm_warm-up.not-a-key";

const PASSES = [
  {
    url: "/api/v1/chat/completions",
    payload: { model: "warm-up", messages: [{ role: "user", content: "warm-up" }] },
  },
  {
    url: "/api/app/warm-up/completion-messages",
    payload: { inputs: {}, query: "warm-up", response_mode: "blocking", user: "warm-up" },
  },
];

export async function warmUp(
  app: FastifyInstance,
  deps: { db: Database; llm: LlmClient; secrets: SecretBox; log: FastifyBaseLogger },
): Promise<WarmUpReport> {
  const started = performance.now();
  const report: WarmUpReport = {
    ms: 0,
    connections: 0,
    statements: 0,
    plans: 0,
    requests: 0,
    upstream: false,
    tokenizer: false,
    failures: [],
    stepMs: {},
  };
  const attempt = async (step: string, run: () => Promise<void>) => {
    const t0 = performance.now();
    try {
      await run();
    } catch (error) {
      report.failures.push(`${step}: ${(error as Error).message}`);
    }
    report.stepMs[step] = Math.round((performance.now() - t0) * 10) / 10;
  };
  await attempt("database", async () => {
    Object.assign(report, await warmConnections(deps.db));
  });
  await attempt("requests", async () => {
    for (const pass of PASSES) {
      const answer = await app.inject({
        method: "POST",
        url: pass.url,
        remoteAddress: WARM_UP_ADDRESS,
        headers: { authorization: `Bearer ${NO_SUCH_KEY}`, "content-type": "application/json" },
        payload: pass.payload,
      });
      if (answer.statusCode !== 401) throw new Error(`${pass.url} answered ${answer.statusCode}, not 401`);
      report.requests += 1;
    }
  });
  await attempt("paid path", async () => {
    const call = chatCall(ChatCompletionRequestSchema.parse(PASSES[0]?.payload));
    await findApplicationBySlugCached(deps.db, NO_SUCH_APP.slug);
    // The app does not exist, so its prompt is not found: the lookup runs, then this stops.
    await preparePromptExecution(deps.db, deps.llm, {
      app: NO_SUCH_APP,
      caller: NO_SUCH_USER,
      input: { inputs: call.inputs, query: call.query, response_mode: "blocking", user: call.user },
      mode: "completion",
      secrets: deps.secrets,
    }).then(
      () => {
        throw new Error("a prompt was found for an app that does not exist");
      },
      () => {},
    );
    const answer = chatDialect(false).answer(
      { id: "chatcmpl-warm-up", created: 0, model: NO_SUCH_APP.slug },
      { answer: "ok", inputTokens: 1, outputTokens: 1, answeredBy: "gpt-4o-mini" },
      { chargedCents: 1, paidBy: "wallet" },
    );
    JSON.stringify(answer);
  });
  await attempt("model client", async () => {
    Object.assign(report, (await deps.llm.warmUp?.()) ?? {});
  });
  report.ms = performance.now() - started;
  if (report.failures.length > 0)
    deps.log.warn(
      { failures: report.failures },
      "start-up warm-up incomplete; the first calls may be slower",
    );
  else deps.log.debug({ warmUp: report }, "start-up warm-up done");
  return report;
}

/** Each app's warm-up (app.ts registers it; main.ts runs it before listening). */
export const warmUps = new WeakMap<FastifyInstance, () => Promise<WarmUpReport>>();
