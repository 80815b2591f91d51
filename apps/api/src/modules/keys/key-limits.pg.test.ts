import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { and, eq, isNotNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../../db/client.ts";
import { apiKeySpend, invocations } from "../../db/schema/index.ts";
import { createCaller, fundWallet, settledWallet } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { scriptDirective, startFakeOpenAi } from "../../test/fake-openai.ts";
import { expectReconciled } from "../../test/reconciled.ts";
import { killProcess, type ServerProcess, startServerProcess } from "../../test/server-process.ts";

// Decision 035: one limited key hammered through two server processes on one PostgreSQL. The
// limit holds across processes (the reservation is one conditional statement), every 2xx is
// charged exactly once, failed calls give their reservation back, and the ledger reconciles.

const PRICE = 30;
const LIMIT_CALLS = 8;
const CALLS = 60;

let vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
let testDb: TestDatabase;
let database: DatabaseHandle | undefined;
const processes: ServerProcess[] = [];
const scratchDirs: string[] = [];

beforeAll(async () => {
  vendor = await startFakeOpenAi();
  vendor.set({ kind: "scripted" });
  testDb = await createTestDatabase();
  const url = testDb.serverEnv.DATABASE_URL ?? "";
  // Sequential start: the first one migrates and creates the issuer's signing keys.
  for (const name of ["a", "b"]) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "pm-key-limits-"));
    scratchDirs.push(dataDir);
    processes.push(
      await startServerProcess(name, {
        SECRET_KEY: "key-limits-test-secret-key-that-is-long-enough-0123",
        OPENAI_API_KEY: "x",
        OPENAI_BASE_URL: vendor.baseUrl,
        GATEWAY_RATE_LIMIT_PER_MINUTE: "100000",
        GATEWAY_SPEND_PER_MINUTE_CENTS: "100000000",
        DATABASE_URL: url,
        DATA_DIR: dataDir,
      }),
    );
  }
});

afterAll(async () => {
  for (const server of processes) await killProcess(server).catch(() => {});
  await database?.close().catch(() => {});
  await vendor?.stop();
  await testDb?.destroy();
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

describe("a limited key called through two server processes at once", () => {
  it("is charged no more than its limit, and exactly once per 2xx; failed calls cost it nothing", async () => {
    const [first] = processes;
    if (!first) throw new Error("no server process");
    const creator = await createCaller(first.baseUrl, "Seller");
    const consumer = await createCaller(first.baseUrl, "Buyer");
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name: "Limited", visibility: "public", price_cents: PRICE },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    await fundWallet(consumer, CALLS * PRICE);
    const created = await consumer.api("POST", "/api/keys/", {
      body: { name: "hammered", spend_limit_cents: LIMIT_CALLS * PRICE, limit_reset: "daily" },
    });
    expect(created.status).toBe(201);
    const { key, id: keyId } = created.body as { key: string; id: string };

    // Every third call fails upstream (502, not charged); all overlap at the vendor.
    const outcomes = await Promise.all(
      Array.from({ length: CALLS }, async (_, i) => {
        const server = processes[i % processes.length] as ServerProcess;
        const directive = scriptDirective({
          delayMs: 80,
          gapMs: 0,
          words: 3,
          fail: i % 3 === 0 ? 500 : undefined,
        });
        const response = await fetch(`${server.baseUrl}/api/app/${app.slug}/completion-messages`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ inputs: { query: directive }, response_mode: "blocking" }),
        });
        const body = (await response.json()) as { code?: string };
        return { status: response.status, code: body.code };
      }),
    );
    const ok = outcomes.filter((outcome) => outcome.status === 200).length;
    const others = outcomes.filter((outcome) => outcome.status !== 200);
    expect(ok).toBeGreaterThan(0);
    expect(ok).toBeLessThanOrEqual(LIMIT_CALLS);
    expect(
      others.every(
        (outcome) =>
          (outcome.status === 402 && outcome.code === "key_limit_reached") || outcome.status === 502,
      ),
      JSON.stringify(others),
    ).toBe(true);
    // Failing calls reached the vendor too (a call refused by the limit never does).
    expect(others.some((outcome) => outcome.status === 502)).toBe(true);

    database = await testDb.open();
    const db = database.db;
    const charged = await db
      .select({ cents: invocations.chargedCents })
      .from(invocations)
      .where(and(eq(invocations.apiKeyId, keyId), isNotNull(invocations.holdId)));
    expect(charged).toHaveLength(ok);
    expect(charged.every((row) => row.cents === PRICE)).toBe(true);
    const [spend] = await db.select().from(apiKeySpend).where(eq(apiKeySpend.keyId, keyId));
    expect(spend?.spentMicros).toBe(ok * PRICE * 10_000);
    const wallet = await settledWallet(consumer);
    expect(wallet.balance_micros + wallet.held_micros).toBe((CALLS - ok) * PRICE * 10_000);
    await expectReconciled(db, "after the hammering");
  });
});
