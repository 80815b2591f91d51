import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { and, eq, isNull, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, queryRows } from "../../db/client.ts";
import { holds, invocations, ledgerAccounts, ledgerTransactions } from "../../db/schema/index.ts";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { startFakeOpenAi } from "../../test/fake-openai.ts";
import { modelCostTaken } from "../../test/model-cost.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import {
  killProcess,
  type ServerProcess,
  startServerProcess as startProcess,
} from "../../test/server-process.ts";
import { balancesOf, walletBalances } from "./balances.ts";
import { sweepExpiredHolds } from "./call-payment/holds.ts";
import { centsToMicros } from "./money.ts";

/**
 * Crash safety of the money path with real server processes (`node src/main.ts`): calls are in
 * flight (paid from a lease, slow vendor) when a process is SIGKILLed. After the sweeper has
 * released the expired holds (leases), no money may be lost or created, and every charge is one
 * settle transaction of one successful invocation.
 * PostgreSQL: two processes on one database, one killed. PGlite (one process per data
 * directory): one process killed, its data then opened in-process, as a restart would.
 */

const onPostgres = process.env.TEST_DB === "postgres";
const PRICE = 30;
/** What the creator tops up to pay their warm-up calls' model cost (decision 062). */
const CREATOR_WALLET = 100;
const FEE = 3; // PLATFORM_FEE_PERCENT=10
const N = onPostgres ? 150 : 60;
/**
 * The wallet covers K calls, so later calls get 402. K leaves money for the calls still in flight
 * when the kill comes (KILL_AFTER_SUCCESSES): leases take up to half the wallet each, and with a
 * smaller K two processes could spend all of it before the kill, leaving nothing held to sweep.
 */
const K = onPostgres ? 100 : 40;
const VENDOR_DELAY_MS = 300;
/**
 * Calls start in waves: at any moment some place holds, some wait for the vendor, some settle. The
 * waves are spread over a few seconds, so the kill (a few answers in) finds money held and unspent
 * however late a loaded machine lets this process see those answers: with every call started
 * within 300 ms, a run under load saw its victim spend the whole wallet before the kill came.
 */
const WAVE = 5;
const WAVE_SPACING_MS = 150;
/** The victim is killed once it has answered this many paid calls. */
const KILL_AFTER_SUCCESSES = 3;
const SECRET_KEY = "crash-test-secret-key-that-is-long-enough-0123456789";
const VICTIM_APP_NAME = "pm-crash-victim";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
let testDb: TestDatabase;
let database: DatabaseHandle | undefined;
const processes: ServerProcess[] = [];
const scratchDirs: string[] = [];

/** Starts a server process (test/server-process.ts) with this test's environment, stopped after it. */
async function startServerProcess(name: string, env: Record<string, string>): Promise<ServerProcess> {
  const server = await startProcess(name, {
    SECRET_KEY,
    OPENAI_API_KEY: "x",
    OPENAI_BASE_URL: vendor.baseUrl,
    GATEWAY_RATE_LIMIT_PER_MINUTE: "100000",
    GATEWAY_SPEND_PER_MINUTE_CENTS: "100000000",
    PLATFORM_FEE_PERCENT: "10",
    ...env,
  });
  processes.push(server);
  return server;
}

interface CallOutcome {
  server: string;
  status: number; // 0: no HTTP answer (the connection died with the process)
  id?: string;
  error?: string;
}

async function paidCall(server: ServerProcess, key: string, slug: string): Promise<CallOutcome> {
  try {
    const response = await fetch(`${server.baseUrl}/api/app/${slug}/completion-messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ inputs: { query: "hi" } }),
      signal: AbortSignal.timeout(60_000),
    });
    const body = (await response.json().catch(() => undefined)) as { id?: string } | undefined;
    return { server: server.name, status: response.status, id: body?.id };
  } catch (error) {
    return { server: server.name, status: 0, error: String(error) };
  }
}

beforeAll(async () => {
  vendor = await startFakeOpenAi();
  testDb = await createTestDatabase();
  // Sequential start: the first one migrates and creates the issuer's signing keys.
  if (onPostgres) {
    const url = testDb.serverEnv.DATABASE_URL ?? "";
    await startServerProcess("a", { DATABASE_URL: url, DATA_DIR: scratch() });
    // The killed process's backends are recognisable in pg_stat_activity by their application name.
    await startServerProcess("b", {
      DATABASE_URL: `${url}?application_name=${VICTIM_APP_NAME}`,
      DATA_DIR: scratch(),
    });
  } else await startServerProcess("a", testDb.serverEnv);
});

afterAll(async () => {
  for (const server of processes) await killProcess(server).catch(() => {});
  await database?.close().catch(() => {});
  await vendor?.stop();
  await testDb?.destroy();
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pm-crash-"));
  scratchDirs.push(dir);
  return dir;
}

describe("a server process killed with SIGKILL mid-run", () => {
  const title = onPostgres
    ? `two processes on one PostgreSQL, one killed during ${N} concurrent paid calls: after the sweep no money is lost or created`
    : `one process on PGlite killed during ${N} concurrent paid calls: after a restart and the sweep no money is lost or created`;
  it(title, async () => {
    const [first, second] = processes;
    if (!first) throw new Error("no server process");
    const victim = onPostgres ? second : first;
    const survivor = onPostgres ? first : undefined;
    if (!victim) throw new Error("no victim process");
    const targets = survivor ? [survivor, victim] : [victim];

    // Setup through the first process: people, a paid app, a funded wallet, an API key (keys
    // live in the database, so unlike sign-in tokens they work on every process).
    const creator: Caller = await createCaller(first.baseUrl, "Seller");
    const consumer: Caller = await createCaller(first.baseUrl, "Buyer");
    const created = await creator.api("POST", "/api/app/", {
      body: { name: "Crash-tested", visibility: "public", price_cents: PRICE },
    });
    expect(created.status).toBe(201);
    const app = created.body as { slug: string; id: string };
    expect(
      (await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } })).status,
    ).toBe(200);
    expect(
      (await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } }))
        .status,
    ).toBe(200);
    expect(await fundWallet(consumer, K * PRICE)).toBe(K * PRICE * 10_000);
    const keyAnswer = await consumer.api("POST", "/api/keys/", { body: { name: "crash" } });
    expect(keyAnswer.status).toBe(201);
    const key = keyAnswer.body.key as string;
    const consumerId = (await consumer.api("GET", "/api/auth/profile/")).body.user.id as string;
    const creatorId = (await creator.api("GET", "/api/auth/profile/")).body.user.id as string;

    // Warm-up: the creator's own calls (no price; their model cost from the creator's wallet,
    // decision 062) load the model path in every process so that the timing below is not
    // dominated by a cold start.
    expect(await fundWallet(creator, CREATOR_WALLET)).toBe(CREATOR_WALLET * 10_000);
    const ownerKey = (await creator.api("POST", "/api/keys/", { body: { name: "warm-up" } })).body.key;
    for (const server of targets) {
      const warmUp = await Promise.all(Array.from({ length: 3 }, () => paidCall(server, ownerKey, app.slug)));
      expect(warmUp.map((o) => o.status)).toEqual([200, 200, 200]);
    }

    // N concurrent calls spread over the processes, started in waves; the victim is killed once
    // it has answered a few paid calls, while its later ones are still at the (slow) vendor.
    vendor.set({ kind: "echo", delayMs: VENDOR_DELAY_MS });
    const t0 = performance.now();
    let victimSuccesses = 0;
    let killTrigger: () => void = () => {};
    const victimAnswered = new Promise<void>((resolve) => {
      killTrigger = resolve;
    });
    const calls: Promise<CallOutcome>[] = [];
    const launch = (async () => {
      for (let i = 0; i < N; i++) {
        if (i > 0 && i % WAVE === 0) await sleep(WAVE_SPACING_MS);
        const server = targets[i % targets.length] as ServerProcess;
        calls.push(
          paidCall(server, key, app.slug).then((outcome) => {
            if (server === victim && outcome.status === 200 && ++victimSuccesses >= KILL_AFTER_SUCCESSES)
              killTrigger();
            return outcome;
          }),
        );
      }
    })();
    const triggered = await Promise.race([victimAnswered.then(() => true), sleep(15_000).then(() => false)]);
    const killedAt = performance.now() - t0;
    const victimSuccessesAtKill = victimSuccesses;
    await killProcess(victim);
    await launch;
    const outcomes = await Promise.all(calls);
    const callsDone = performance.now() - t0;
    expect(
      triggered,
      `${victim.name} answered fewer than ${KILL_AFTER_SUCCESSES} paid calls within 15 s:\n${victim.output()}`,
    ).toBe(true);

    // A killed client's last COMMIT may still be executing on the server: wait until its
    // backends are gone before reading.
    if (onPostgres) {
      database = await testDb.open();
      const deadline = Date.now() + 15_000;
      for (;;) {
        const [row] = await queryRows<{ n: number }>(
          database.db,
          sql`select count(*)::int as n from pg_stat_activity where application_name = ${VICTIM_APP_NAME}`,
        );
        if (row?.n === 0) break;
        if (Date.now() > deadline) throw new Error(`${row?.n} backends of the killed process remain`);
        await sleep(50);
      }
    } else {
      // PGlite: the restart, opening the killed process's data directory in this process.
      database = await testDb.open();
    }
    const { db } = database;

    const holdCounts = async () => {
      const rows = await db
        .select({
          status: holds.status,
          n: sql<number>`count(*)::int`,
          amount: sql<number>`(sum(${holds.amountMicros}) / 10000)::int`,
          unspent: sql<number>`(sum(${holds.amountMicros} - ${holds.settledMicros}) / 10000)::int`,
          spent: sql<number>`(sum(${holds.settledMicros}) / 10000)::int`,
        })
        .from(holds)
        .where(eq(holds.applicationId, app.id))
        .groupBy(holds.status);
      const counts = { held: 0, settled: 0, released: 0, heldAmount: 0, heldUnspent: 0, spent: 0 };
      for (const row of rows) {
        counts[row.status] = row.n;
        counts.spent += row.spent;
        if (row.status === "held") {
          counts.heldAmount = row.amount;
          counts.heldUnspent = row.unspent;
        }
      }
      return counts;
    };
    const beforeSweep = await holdCounts();
    const consumerBeforeSweep = await balancesOf(db, consumerId);
    const consumerSeesBeforeSweep = await walletBalances(db, consumerId);
    // The holds the killed process left behind, released once their expiry has passed.
    const swept = await sweepExpiredHolds(db, new Date(Date.now() + 60 * 60_000));
    const sweptAt = performance.now() - t0;
    const afterSweep = await holdCounts();

    const byStatus = (server: ServerProcess | undefined, status: number) =>
      outcomes.filter((o) => o.server === server?.name && o.status === status).length;
    const figures = {
      db: testDb.kind,
      n: N,
      k: K,
      price: PRICE,
      killedAtMs: Math.round(killedAt),
      victimSuccessesAtKill,
      callsDoneMs: Math.round(callsDone),
      sweptAtMs: Math.round(sweptAt),
      victim: { ok: byStatus(victim, 200), paymentRequired: byStatus(victim, 402), cut: byStatus(victim, 0) },
      survivor: survivor
        ? {
            ok: byStatus(survivor, 200),
            paymentRequired: byStatus(survivor, 402),
            cut: byStatus(survivor, 0),
          }
        : null,
      holdsBeforeSweep: beforeSweep,
      consumerBeforeSweep,
      consumerSeesBeforeSweep,
      swept,
      holdsAfterSweep: afterSweep,
    };
    const context = JSON.stringify(figures);
    console.log(`crash test figures: ${context}`);

    // Every call got an answer or lost its connection to the killed process, nothing else.
    for (const outcome of outcomes) {
      if (outcome.server === victim.name) expect([200, 402, 0], context).toContain(outcome.status);
      else
        expect([200, 402], `${context} ${JSON.stringify(outcome)}\n${survivor?.output()}`).toContain(
          outcome.status,
        );
    }
    // The kill did hit calls in flight: it left a lease behind with money unspent, and the sweeper
    // closed exactly the open leases and gave back exactly what they had not spent.
    expect(beforeSweep.held, context).toBeGreaterThan(0);
    expect(beforeSweep.heldUnspent, context).toBeGreaterThan(0);
    // The ledger still holds all of the open leases (their calls are posted when they close); the
    // wallet shows only what they have not spent.
    expect(consumerBeforeSweep.held, context).toBe(centsToMicros(beforeSweep.heldAmount));
    expect(consumerSeesBeforeSweep.held, context).toBe(centsToMicros(beforeSweep.heldUnspent));
    expect(swept, context).toBe(beforeSweep.held);
    expect(afterSweep.held, context).toBe(0);
    expect(afterSweep.settled + afterSweep.released, context).toBe(
      beforeSweep.settled + beforeSweep.released + beforeSweep.held,
    );
    expect(afterSweep.spent, context).toBe(beforeSweep.spent);

    // No money lost or created: what was topped up is in the wallet or was paid out.
    expect(afterSweep.spent % PRICE, context).toBe(0);
    const settled = afterSweep.spent / PRICE;
    expect(settled, context).toBeLessThanOrEqual(K);
    const consumerBalances = await balancesOf(db, consumerId);
    const creatorBalances = await balancesOf(db, creatorId);
    const platformAccounts = await db
      .select({ kind: ledgerAccounts.kind, balance: ledgerAccounts.balanceMicros })
      .from(ledgerAccounts)
      .where(isNull(ledgerAccounts.ownerId));
    const platform = (kind: string) => platformAccounts.find((a) => a.kind === kind)?.balance ?? 0;
    expect(consumerBalances, context).toEqual({
      wallet: centsToMicros((K - settled) * PRICE),
      held: 0,
      earnings: 0,
    });
    // The creator's share less the model cost the calls' shares paid (decision 030), which the
    // platform's model_cost account holds.
    // The warm-up's model cost came from the creator's wallet, never from earnings or as debt.
    const modelCost = await modelCostTaken(db, creatorId);
    expect(platform("model_cost"), context).toBe(modelCost);
    expect(creatorBalances.held, context).toBe(0);
    expect(creatorBalances.earnings + creatorBalances.wallet, context).toBe(
      centsToMicros(settled * (PRICE - FEE) + CREATOR_WALLET) - modelCost,
    );
    expect(platform("platform_fee"), context).toBe(centsToMicros(settled * FEE));
    expect(platform("clearing"), context).toBe(centsToMicros(-K * PRICE - CREATOR_WALLET));
    expect(
      consumerBalances.wallet +
        consumerBalances.held +
        creatorBalances.earnings +
        creatorBalances.wallet +
        platform("platform_fee") +
        platform("model_cost"),
      context,
    ).toBe(centsToMicros(K * PRICE + CREATOR_WALLET));
    const report = await expectReconciled(db, context);

    // Every charged invocation names the hold it was paid from, and each hold's settle
    // transaction posted exactly its calls: the charges recorded are the charges posted.
    expect(report.mismatchedHolds, context).toEqual([]);
    const settles = await db
      .select({ reference: ledgerTransactions.reference, description: ledgerTransactions.description })
      .from(ledgerTransactions)
      .innerJoin(holds, sql`${holds.id}::text = ${ledgerTransactions.reference}`)
      .where(and(eq(ledgerTransactions.kind, "settle"), eq(holds.applicationId, app.id)));
    const charged = await db
      .select({ id: invocations.id, chargedCents: invocations.chargedCents, holdId: invocations.holdId })
      .from(invocations)
      .where(
        and(
          eq(invocations.applicationId, app.id),
          eq(invocations.callerUserId, consumerId),
          eq(invocations.status, "success"),
        ),
      );
    // A success without a charge would be a free call (its hold was closed before it was recorded).
    expect(
      charged.filter((i) => i.chargedCents !== PRICE || !i.holdId),
      context,
    ).toEqual([]);
    expect(charged, context).toHaveLength(settled);
    const callsOfHold = new Map<string, number>();
    for (const i of charged) callsOfHold.set(i.holdId ?? "", (callsOfHold.get(i.holdId ?? "") ?? 0) + 1);
    expect(new Set(settles.map((t) => t.reference)), context).toEqual(new Set(callsOfHold.keys()));
    for (const settle of settles)
      expect(settle.description, context).toBe(described(callsOfHold.get(settle.reference) ?? 0));

    // A charge may commit just before the kill without its answer reaching the client, never
    // the reverse: every 200 is a charged invocation.
    const chargedIds = new Set<string | null>(charged.map((i) => i.id));
    const answered = outcomes.filter((o) => o.status === 200);
    expect(answered.length, context).toBeLessThanOrEqual(settled);
    for (const outcome of answered) expect(chargedIds.has(outcome.id ?? null), context).toBe(true);
    expect(figures.victim.ok, context).toBeGreaterThanOrEqual(KILL_AFTER_SUCCESSES);
  }, 120_000);
});

/** A lease's settle transaction, as its close describes it. */
function described(calls: number) {
  return calls === 1 ? "1 paid call" : `${calls} paid calls`;
}
