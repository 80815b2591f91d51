import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { type DatabaseHandle, queryRows } from "../../db/client.ts";
import { createPostgresDatabase, type TestDatabase } from "../database.ts";
import { startFakeOpenAi } from "../fake-openai.ts";
import { type MppStripeDouble, startMppStripeDouble } from "../mpp-stripe-double.ts";
import { freePort } from "../server.ts";
import { killProcess, type ServerProcess, startServerProcess, stopProcess } from "../server-process.ts";
import { startX402Facilitator, type X402Facilitator } from "../x402-facilitator.ts";
import { OPERATOR_EMAIL } from "./chargebacks.ts";
import { startAttackHook } from "./hook.ts";

export const SECRET_KEY = "money-attack-secret-key-that-is-long-enough-0123";
/** MPP's challenge key and the Stripe double's secret key (both processes share them). */
export const MPP_SECRET_KEY = "money-attack-mpp-challenge-key-0123456789abcdef";
export const MPP_STRIPE_SECRET_KEY = "sk_test_money_attack";
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** One API server slot: a port the clients know, and the process answering on it (if any). */
export interface Node {
  name: string;
  baseUrl: string;
  process?: ServerProcess;
  /** When it was killed and when it answered again (ms since epoch), for judging cut calls. */
  downtimes: { from: number; to?: number }[];
}

/**
 * What the attack runs against: a fresh PostgreSQL database, Redis (shared rate limits), a
 * scripted model server on loopback, and two real server processes on one database and one
 * PUBLIC_URL, so that sign-in tokens and API keys work on both.
 */
export interface Cluster {
  nodes: Node[];
  database: DatabaseHandle;
  /** The loopback webhook the workflow apps run on (hook.ts). */
  hookUrl: string;
  /** The loopback x402 facilitator both processes verify and settle through (x402-calls.ts). */
  facilitator: X402Facilitator;
  /** The loopback Stripe both processes capture and refund MPP payments through (agent-calls.ts). */
  stripe: MppStripeDouble;
  /** SIGKILL a node's process (no shutdown hooks: its leases stay held until swept). */
  kill(node: Node): Promise<void>;
  restart(node: Node): Promise<void>;
  /** SIGTERM every process and wait until their database sessions are gone. */
  stopServers(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startCluster(options: {
  adminUrl: string;
  redisUrl: string;
  /** Each process's output goes to `<prefix>-<node>.log`. */
  serverLogPrefix: string;
  /** More settings for both processes (the usage export's receivers, events.ts). */
  env?: Record<string, string>;
}): Promise<Cluster> {
  const model = await startFakeOpenAi();
  model.set({ kind: "scripted" });
  const hook = await startAttackHook();
  const facilitator = await startX402Facilitator();
  const stripe = await startMppStripeDouble(MPP_STRIPE_SECRET_KEY);
  const testDb: TestDatabase = await createPostgresDatabase(options.adminUrl);
  const databaseUrl = testDb.serverEnv.DATABASE_URL ?? "";
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pm-attack-"));
  const ports = [await freePort(), await freePort()];
  const publicUrl = `http://127.0.0.1:${ports[0]}`;
  const nodes: Node[] = ports.map((port, i) => ({
    name: i === 0 ? "a" : "b",
    baseUrl: `http://127.0.0.1:${port}`,
    downtimes: [],
  }));
  const envOf = (node: Node): Record<string, string> => ({
    DATABASE_URL: `${databaseUrl}?application_name=pm-attack-${node.name}`,
    DATA_DIR: path.join(dataDir, node.name),
    PUBLIC_URL: publicUrl,
    SECRET_KEY,
    REDIS_URL: options.redisUrl,
    REDIS_KEY_PREFIX: `pm-attack-${randomBytes(4).toString("hex")}:`,
    OPENAI_API_KEY: "sk-attack",
    OPENAI_BASE_URL: model.baseUrl,
    LLM_TIMEOUT_SECONDS: "15",
    GATEWAY_RATE_LIMIT_PER_MINUTE: "1000000",
    GATEWAY_SPEND_PER_MINUTE_CENTS: "1000000000",
    GATEWAY_RATE_LIMIT_PER_IP_PER_MINUTE: "100000000",
    // MCP requests and MCP servers alive at once (decision 043): out of the attack's way too.
    MCP_RATE_LIMIT_PER_MINUTE: "1000000",
    MCP_RATE_LIMIT_PER_IP_PER_MINUTE: "100000000",
    MCP_MAX_OPEN_PER_KEY: "100000",
    MCP_MAX_OPEN_PER_IP: "1000000",
    MCP_MAX_OPEN: "1000000",
    PLATFORM_FEE_PERCENT: "10",
    // The operator (chargebacks.ts) who takes back top-ups (decision 045) and suspends consumers
    // mid-attack (suspensions.ts, decision 046); creators payable at once.
    ADMIN_EMAILS: OPERATOR_EMAIL,
    PAYOUT_HOLD_DAYS: "0",
    PAYOUT_MINIMUM_CENTS: "100",
    // The workflow apps' webhook is on loopback.
    ALLOW_PRIVATE_UPSTREAMS: "true",
    // x402 pay-per-call through the loopback facilitator (issue 30).
    ...facilitator.env(),
    // MPP through the loopback Stripe (issue 40): its shared payment tokens, captures and refunds.
    MPP_SECRET_KEY,
    MPP_STRIPE_SECRET_KEY,
    MPP_STRIPE_API_URL: stripe.url,
    ...options.env,
  });
  const start = async (node: Node) => {
    node.process = await startServerProcess(`attack-${node.name}`, envOf(node), {
      port: Number(new URL(node.baseUrl).port),
      logFile: `${options.serverLogPrefix}-${node.name}.log`,
      // A machine shared with other work can take more than the default 45 s to start a server.
      readyTimeoutMs: 150_000,
    });
  };
  // One after the other: the first migrates and creates the issuer's signing keys.
  for (const node of nodes) await start(node);
  const database = await testDb.open();

  /** A killed process's last statements may still run: wait until its sessions are gone. */
  const waitForSessions = async (names: string[]) => {
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const [row] = await queryRows<{ n: number }>(
        database.db,
        sql`select count(*)::int as n from pg_stat_activity
            where application_name in (${sql.join(
              names.map((name) => sql`${`pm-attack-${name}`}`),
              sql`, `,
            )})`,
      );
      if (row?.n === 0) return;
      await sleep(100);
    }
  };

  return {
    nodes,
    database,
    hookUrl: hook.url,
    facilitator,
    stripe,
    async kill(node) {
      if (!node.process?.isAlive()) return;
      node.downtimes.push({ from: Date.now() });
      await killProcess(node.process);
    },
    async restart(node) {
      await start(node);
      const downtime = node.downtimes.at(-1);
      if (downtime && downtime.to === undefined) downtime.to = Date.now();
    },
    async stopServers() {
      await Promise.all(nodes.map((node) => (node.process ? stopProcess(node.process) : undefined)));
      await waitForSessions(nodes.map((node) => node.name));
    },
    async destroy() {
      for (const node of nodes) if (node.process) await killProcess(node.process).catch(() => {});
      await database.close().catch(() => {});
      await model.stop();
      await hook.stop();
      await facilitator.stop();
      await stripe.close();
      await testDb.destroy();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
