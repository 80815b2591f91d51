import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { beforeAll, expect, it } from "vitest";
import { namedStatementNames, queryRows, WARM_CONNECTIONS, writerFor } from "./db/client.ts";
import { createCallPayments } from "./modules/billing/call-payment/index.ts";
import type { LlmClient } from "./modules/models/llm.ts";
import { useTestServer } from "./test/use-test-server.ts";
import { type WarmUpReport, warmUp } from "./warm-up.ts";

// The start-up warm-up (warm-up.ts, docs/decisions/039): what it leaves behind is observable (open
// connections with the paid path's statements prepared on them), and it writes nothing.

const logLines: string[] = [];
let report: WarmUpReport;
let rowsBefore: Record<string, number>;

const TABLES = [
  "users",
  "api_keys",
  "applications",
  "holds",
  "invocations",
  "ledger_transactions",
  "ledger_entries",
  "ledger_accounts",
  "subscriptions",
  "included_calls",
  "api_key_spend",
  "api_key_reservations",
  "app_daily_stats",
  "owner_daily_stats",
  "app_users",
  "prompts",
];

async function rowCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const [row] = await queryRows<{ n: number }>(
      server.database.db,
      sql`select count(*)::int as n from ${sql.identifier(table)}`,
    );
    counts[table] = row?.n ?? -1;
  }
  return counts;
}

const server = useTestServer({
  // The model client is configured, but its base URL reaches nothing: the warm-up never calls it.
  // A rate limit below the rehearsal's 20 calls per key: they must not count against it.
  env: {
    OPENAI_API_KEY: "sk-unreachable",
    OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    LOG_LEVEL: "info",
    GATEWAY_RATE_LIMIT_PER_MINUTE: "5",
  },
  logStream: { write: (line) => void logLines.push(line) },
});

beforeAll(async () => {
  rowsBefore = await rowCounts();
  report = await server.warmUp();
});

it("runs every step without a failure, the model client's against its own loopback server", () => {
  expect(report.failures).toEqual([]);
  expect(report.requests).toBe(2);
  expect(report.upstream).toBe(true);
  // The sandbox does not answer every call here (OpenAI is configured): its tokenizer is left lazy.
  expect(report.tokenizer).toBe(false);
  // Real paid calls, each answered 200, though the configured vendor is unreachable: the
  // rehearsal's model calls went to its loopback server. PGlite has no rehearsal.
  // 20 on the first pooled connection, 4 on each of the 5 others (main pool and writer pool).
  expect(report.rehearsed).toBe(server.testDb.kind === "pglite" ? 0 : 20 + 4 * (WARM_CONNECTIONS + 2 - 1));
});

it("writes no row and logs none of its requests", async () => {
  expect(await rowCounts()).toEqual(rowsBefore);
  expect(logLines.filter((line) => line.includes("completion"))).toEqual([]);
});

it("leaves the pools' connections open with the paid path's statements prepared on them (PostgreSQL)", async () => {
  const names = namedStatementNames();
  expect(names).toEqual(
    expect.arrayContaining([
      "pm_take_payment_v6",
      "pm_close_hold_v4",
      "pm_record_batch_v12",
      "pm_reserve_key_spend_v1",
    ]),
  );
  if (server.testDb.kind === "pglite") {
    // No pool and no named statements to prepare in the embedded database.
    expect(report.connections).toBe(0);
    return;
  }
  expect(report.connections).toBe(WARM_CONNECTIONS + 2);
  expect(report.statements).toBe((WARM_CONNECTIONS + 2) * names.length);
  const database = new URL(server.testDb.serverEnv.DATABASE_URL as string).pathname.slice(1);
  // Whichever pooled connection answers, main pool or writer pool, it has them all prepared.
  for (const db of [server.database.db, writerFor(server.database.db)]) {
    const rows = await queryRows<{ name: string }>(db, sql`select name from pg_prepared_statements`);
    expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(names));
    const [open] = await queryRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from pg_stat_activity where datname = ${database} and pid <> pg_backend_pid()`,
    );
    expect(open?.n).toBeGreaterThanOrEqual(WARM_CONNECTIONS + 2 - 1);
  }
  // Each ran past PostgreSQL's custom plans: the first real call does not plan the large money
  // statements (the record statement's custom plan took ~1.5-5 ms a run). Nothing was written
  // ("writes no row" above): the runs matched no row and were rolled back.
  expect(report.plans).toBe((WARM_CONNECTIONS + 2) * names.length);
  for (const db of [server.database.db, writerFor(server.database.db)]) {
    const plans = await queryRows<{ name: string; custom: number; generic: number }>(
      db,
      sql`select name, custom_plans::int as custom, generic_plans::int as generic from pg_prepared_statements`,
    );
    const record = plans.find((p) => p.name === "pm_record_batch_v12");
    expect(record?.custom).toBe(5);
    expect(record?.generic).toBeGreaterThanOrEqual(1);
    for (const name of names) {
      const plan = plans.find((p) => p.name === name);
      expect((plan?.custom ?? 0) + (plan?.generic ?? 0), name).toBeGreaterThanOrEqual(6);
    }
    // The rehearsal's calls closed no hold (a close locks the platform's fee accounts until the
    // rollback): the close statement ran only its six planning runs on each connection.
    const close = plans.find((p) => p.name === "pm_close_hold_v4");
    expect((close?.custom ?? 0) + (close?.generic ?? 0)).toBe(6);
  }
  // A second warm-up finds them prepared already: nothing is parsed twice on a connection.
  const again = await server.warmUp();
  expect(again?.statements).toBe(0);
});

it("does not stop the start when a step fails: it reports it instead", async () => {
  const failing = {
    warmUp: async () => {
      throw new Error("vendor unreachable");
    },
  } as unknown as LlmClient;
  const { failures } = await warmUp(server.app, {
    db: server.database.db,
    llm: failing,
    secrets: undefined as never,
    log: server.app.log,
    payments: createCallPayments(server.database.db),
  });
  expect(failures).toEqual(["model client: vendor unreachable"]);
});

it("opens no connection to a vendor it cannot reach, and preloads nothing from a database without traffic", async () => {
  expect(await report.vendors).toEqual([]);
  // The rehearsal's key, app and accounts were rolled back: nothing of them is recent traffic.
  expect(report.preloaded).toEqual({ keys: 0, apps: 0, prompts: 0, accounts: 0 });
});

it("does not rehearse once real calls have opened leases: their lease book is kept, not discarded", async () => {
  // A call's lease opens the payments' lease book; discarding it would forget that lease's hold.
  const payments = createCallPayments(server.database.db);
  payments.expectCalls(randomUUID(), randomUUID(), 1);
  // A model client that could rehearse: only the open leases stop it.
  const llm = { rehearse: async () => {} } as unknown as LlmClient;
  const db = server.database.db;
  const again = await warmUp(server.app, {
    db,
    llm,
    secrets: undefined as never,
    log: server.app.log,
    payments,
  });
  expect(again.failures).toEqual([]);
  expect(again.rehearsed).toBe(0);
  expect(payments.leasing).toBe(true);
  await payments.close();
});
