import { randomUUID } from "node:crypto";
import net, { type AddressInfo } from "node:net";
import { CreateApiKeySchema, CreateApplicationSchema } from "@promptmint/contracts";
import { eq } from "drizzle-orm";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { Client } from "undici";
import { type Database, rehearse, warmConnections } from "./db/client.ts";
import { type ApplicationRow, applications, ledgerAccounts } from "./db/schema/index.ts";
import { forgetLookups } from "./lib/lookup-cache.ts";
import type { SecretBox } from "./lib/secrets.ts";
import { rehearsalSocket, WARM_UP_ADDRESS } from "./lib/warm-up-requests.ts";
import {
  createApplication,
  findApplicationBySlugCached,
  preloadRecentApplications,
} from "./modules/applications/applications.service.ts";
import { type LocalUser, upsertUserFromToken } from "./modules/auth/auth.service.ts";
import type { CallPayments } from "./modules/billing/call-payment/index.ts";
import { accountFor } from "./modules/billing/postings.ts";
import { chatDialect } from "./modules/gateway/openai-chat.ts";
import { ChatCompletionRequestSchema, chatCall } from "./modules/gateway/openai-request.ts";
import { preloadPrompts, preparePromptExecution } from "./modules/gateway/prompt-call.ts";
import { createApiKey, preloadRecentKeys } from "./modules/keys/keys.service.ts";
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
 *  5. The rehearsal (PostgreSQL): real paid calls over a loopback socket, on each pooled
 *     connection, in transactions that are rolled back, the model answered by a loopback server
 *     (`rehearsePaidCalls` below; decision 039, second round).
 *  6. Vendors: the model client's connections to each configured vendor are opened, not awaited
 *     (llm.ts `preconnect`).
 *  7. Recent traffic (`preloadLookups` below): the keys, apps, prompts and accounts the last day's
 *     calls read, put in the lookup caches.
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
  /** The vendor origins whose connections the model client opened ahead (resolves after listening). */
  vendors: Promise<string[]>;
  /** Paid calls of the rehearsal answered 200 (0 on PGlite, which has none). */
  rehearsed: number;
  /** Rows of recent traffic put in the lookup caches (`preloadLookups`). */
  preloaded: Preloaded;
  failures: string[];
  /** Milliseconds each step took. */
  stepMs: Record<string, number>;
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
  deps: { db: Database; llm: LlmClient; secrets: SecretBox; log: FastifyBaseLogger; payments: CallPayments },
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
    rehearsed: 0,
    vendors: Promise.resolve([]),
    preloaded: { keys: 0, apps: 0, prompts: 0, accounts: 0 },
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
  // Not awaited: listening does not wait for a vendor. The first calls find the connections open
  // (or opening) in the model client's pool, for as long as each vendor keeps them alive.
  report.vendors = deps.llm.preconnect?.().catch(() => []) ?? Promise.resolve([]);
  await attempt("rehearsal", async () => {
    report.rehearsed = await rehearsePaidCalls(app, deps);
  });
  // After the rehearsal, which forgets every copy it made.
  await attempt("lookups", async () => {
    report.preloaded = await preloadLookups(deps.db, deps.payments);
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

/**
 * Paid calls of the rehearsal, by client (Chat Completions and Dify's completion-messages): many
 * on the first connection, for the code; a few on each other one, for its database backend.
 */
const REHEARSAL_CALLS = { first: { openai: 16, dify: 4 }, others: { openai: 3, dify: 1 } };

/**
 * The rehearsal (decision 039): real paid calls through the whole server — key, app and prompt
 * lookups, the body's parsing, the lease's hold, the model client, the durable record, the answer —
 * for a consumer, creator, app, key and wallet made for it, all inside a database transaction that
 * is rolled back (db/client.ts `rehearse`), once on each pooled connection, with the model answered
 * by a loopback server (llm.ts `rehearse`). Only PostgreSQL has it. The calls share one lease sized never to run out,
 * so no hold is closed (a close would lock the platform's fee accounts until the rollback); the
 * lease book is then forgotten. Answers how many calls answered 200.
 */
async function rehearsePaidCalls(
  app: FastifyInstance,
  deps: { db: Database; llm: LlmClient; secrets: SecretBox; payments: CallPayments },
): Promise<number> {
  const { db, payments } = deps;
  let answered = 0;
  const run = async (connection: number) => {
    try {
      const world = await rehearsalWorld(db, deps.secrets);
      const counts = connection === 0 ? REHEARSAL_CALLS.first : REHEARSAL_CALLS.others;
      // Four times the calls: the lease is never used up (its last call would close it) and
      // never renewed ahead (that starts with a quarter left).
      payments.expectCalls(world.payerId, world.applicationId, 4 * (counts.openai + counts.dify));
      const calls = [
        ...Array.from({ length: counts.openai }, () => ({
          url: "/api/v1/chat/completions",
          payload: { model: world.slug, messages: [{ role: "user", content: "warm-up" }] },
        })),
        ...Array.from({ length: counts.dify }, () => ({
          url: `/api/app/${world.slug}/completion-messages`,
          payload: { inputs: {}, query: "warm-up", response_mode: "blocking", user: "warm-up" },
        })),
      ];
      // Over a real socket, like a real call (light-my-request's inject skips Node's HTTP parser
      // and socket writes): a loopback listener of its own hands its connections to the server,
      // which is not listening yet.
      const listener = net.createServer((socket) => {
        rehearsalSocket(socket);
        app.server.emit("connection", socket);
      });
      await new Promise<void>((ready, fail) => listener.listen(0, "127.0.0.1", ready).once("error", fail));
      const client = new Client(`http://127.0.0.1:${(listener.address() as AddressInfo).port}`);
      try {
        for (const call of calls) {
          const answer = await client.request({
            method: "POST",
            path: call.url,
            headers: { authorization: `Bearer ${world.key}`, "content-type": "application/json" },
            body: JSON.stringify(call.payload),
          });
          const body = await answer.body.text();
          if (answer.statusCode !== 200)
            throw new Error(`${call.url} answered ${answer.statusCode}: ${body.slice(0, 200)}`);
          answered += 1;
        }
      } finally {
        await client.close();
        listener.close();
      }
    } finally {
      payments.discardLeases();
    }
  };
  // A model client that cannot redirect its vendor calls gets no rehearsal: it would call them.
  // Nor does a warm-up after real calls began (main.ts runs it before listening): discarding the
  // lease book at the end would forget their leases.
  if (!deps.llm.rehearse || payments.leasing) return 0;
  const llm = deps.llm as Required<Pick<LlmClient, "rehearse">>;
  await rehearse(db, (connection) => llm.rehearse(() => run(connection)));
  // Its rows were never committed; nothing cached may point at them.
  forgetLookups(db, "apiKeys", "applications", "prompts");
  return answered;
}

export interface Preloaded {
  keys: number;
  apps: number;
  prompts: number;
  accounts: number;
}

/** How far back start-up looks for the traffic it preloads, and how many rows of each it takes. */
export const PRELOAD_WINDOW_MS = 24 * 3_600_000;
export const PRELOAD_LIMIT = 2_000;

/**
 * 7. Recent traffic's lookups (decision 040): the keys used and the apps called in the last day, the
 * apps' active prompts and the key owners' wallet and held accounts, read in four queries and put
 * where the paid path looks first, so the first call of each after a restart reads none of them.
 * They stay as long as any copy (lib/lookup-cache.ts), and go as soon as the row changes.
 */
export async function preloadLookups(db: Database, payments: CallPayments): Promise<Preloaded> {
  const since = new Date(Date.now() - PRELOAD_WINDOW_MS);
  const [keys, apps] = await Promise.all([
    preloadRecentKeys(db, since, PRELOAD_LIMIT),
    preloadRecentApplications(db, since, PRELOAD_LIMIT),
  ]);
  const [prompts, accounts] = await Promise.all([
    preloadPrompts(db, apps),
    payments.accounts.preload(["wallet", "held"], keys.ownerIds),
  ]);
  return { keys: keys.keys, apps: apps.length, prompts, accounts };
}

/** The rehearsal's people, app (live, public, $1 a call), key and funded wallet, made in its transaction. */
async function rehearsalWorld(db: Database, secrets: SecretBox) {
  const tag = randomUUID();
  const person = (role: string, creator: boolean) =>
    upsertUserFromToken(
      db,
      {
        issuer: "urn:promptmint:warm-up",
        subject: `${role}-${tag}`,
        claims: { sub: `${role}-${tag}`, email: `${role}-${tag}@warm-up.invalid`, name: "Warm-up" },
        raw: "",
      },
      { creator, refreshEmail: true },
    );
  const creator = await person("creator", true);
  const payer = await person("consumer", false);
  const row = await createApplication(
    db,
    secrets,
    creator,
    CreateApplicationSchema.parse({
      name: "Warm-up",
      slug: `warm-up-${tag}`,
      visibility: "public",
      // Above the starter's worst case (the input bound refuses calls a price does not cover,
      // decision 063): $1 covers it many times over, and the wallet below holds a thousand.
      price_cents: 100,
    }),
  );
  await db.update(applications).set({ status: "live" }).where(eq(applications.id, row.id));
  const { key } = await createApiKey(db, payer, CreateApiKeySchema.parse({ name: "Warm-up" }));
  // The wallet holds what the calls spend without a top-up, which would lock the platform's
  // accounts until the rollback. The rehearsal's ledger does not balance; it is never committed.
  const wallet = await accountFor(db, "wallet", payer.id);
  await db.update(ledgerAccounts).set({ balanceMicros: 1_000_000_000 }).where(eq(ledgerAccounts.id, wallet));
  return { key, slug: row.slug, applicationId: row.id, payerId: payer.id };
}
