import { randomBytes } from "node:crypto";
import net from "node:net";
import { eq, sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../db/client.ts";
import { holds } from "../db/schema/index.ts";
import { sweepExpiredHolds } from "../modules/billing/call-payment/holds.ts";
import { reconcile } from "../modules/billing/reconcile.ts";
import { type Caller, createCaller, fundWallet } from "../test/caller.ts";
import { startFakeOpenAi } from "../test/fake-openai.ts";
import { startTestServer, type TestServer } from "../test/server.ts";
import { recordSecurityFigure } from "./report.ts";

// The database going away under load: it needs a PostgreSQL server to cut (TEST_DATABASE_URL), so it
// runs only when one is named, like the other `*.pg.*` tests (vitest.config.ts). SIGTERM's checks
// are in failure-modes.security.test.ts and run everywhere.
let scenariosPassed = 0;
afterAll(() => recordSecurityFigure("failure_mode_checks", scenariosPassed));

/** A TCP proxy on loopback in front of PostgreSQL that the test can cut and restore. */
async function startCuttableProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  const listen = (port: number) =>
    new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  await listen(0);
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    /** The database goes away: listener closed, every open connection dropped. */
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    restore: () => listen(port),
    async stop() {
      for (const socket of sockets) socket.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("the database going away under load (PostgreSQL behind a proxy that is cut)", () => {
  const adminUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const name = `pm_outage_${randomBytes(5).toString("hex")}`;
  let proxy: Awaited<ReturnType<typeof startCuttableProxy>>;
  let direct: DatabaseHandle;
  let server: TestServer;
  let vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
  let consumer: Caller;
  let consumerKey: string;
  let slug: string;

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const databaseUrl = new URL(adminUrl);
    databaseUrl.pathname = `/${name}`;
    proxy = await startCuttableProxy({ host: databaseUrl.hostname, port: Number(databaseUrl.port || 5432) });
    const proxiedUrl = new URL(databaseUrl);
    proxiedUrl.hostname = "127.0.0.1";
    proxiedUrl.port = String(proxy.port);
    direct = await openDatabase({ databaseUrl: databaseUrl.toString(), pgliteDir: "" });
    vendor = await startFakeOpenAi();
    server = await startTestServer(
      {
        kind: "postgres",
        serverEnv: {},
        open: () => openDatabase({ databaseUrl: proxiedUrl.toString(), pgliteDir: "" }),
        destroy: async () => {},
      },
      {
        env: {
          OPENAI_API_KEY: "sk-vendor-test",
          OPENAI_BASE_URL: vendor.baseUrl,
          LLM_TIMEOUT_SECONDS: "1",
          GATEWAY_RATE_LIMIT_PER_MINUTE: "1000",
        },
      },
    );
    const creator = await createCaller(server.baseUrl, "Outage Creator");
    consumer = await createCaller(server.baseUrl, "Outage Consumer");
    consumerKey = (await consumer.api("POST", "/api/keys/", { body: { name: "outage" } })).body.key;
    await fundWallet(consumer, 1000);
    const created = await creator.api("POST", "/api/app/", {
      body: { name: "Outage app", interaction_mode: "completion", visibility: "public", price_cents: 10 },
    });
    slug = created.body.slug;
    await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { model: "gpt-4-turbo", prompt_template: "Say {{query}}", changelog: "setup" },
    });
    await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  });
  afterAll(async () => {
    await proxy?.restore().catch(() => {});
    await server?.stop();
    await direct?.close();
    await proxy?.stop();
    await vendor?.stop();
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });

  const call = () =>
    consumer.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: consumerKey,
      body: { inputs: { query: "hi" }, response_mode: "blocking" },
    });
  const balance = async () =>
    ((await consumer.api("GET", "/api/wallet/")).body.balance_micros / 10_000) as number;

  it("answers a vendor that times out with 504 within LLM_TIMEOUT_SECONDS and releases the hold", async () => {
    const before = await balance();
    vendor.set({ kind: "hang" });
    const began = Date.now();
    const answer = await call();
    vendor.set({ kind: "echo" });
    expect(answer.status).toBe(504);
    // At least the configured 1 s, and far below the default 60 s: no load reaches it (decision 066).
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
    expect(Date.now() - began).toBeLessThan(30_000);
    expect(await balance()).toBe(before);
    const open = await direct.db.select().from(holds).where(eq(holds.status, "held"));
    expect(open).toEqual([]);
    scenariosPassed += 1;
  });

  it("answers 503 with Retry-After (never 500) while it is away, keeps running, recovers, and the ledger stays clean", async () => {
    const before = await balance();
    vendor.set({ kind: "echo", delayMs: 400 });
    // Calls in flight when the database goes away.
    const inFlight = Array.from({ length: 8 }, () => call());
    await new Promise((resolve) => setTimeout(resolve, 200));
    await proxy.cut();
    const during = [];
    for (let i = 0; i < 5; i++) during.push(await call());
    const openAiStyle = await consumer.api("POST", "/api/v1/chat/completions", {
      auth: consumerKey,
      body: { model: slug, messages: [{ role: "user", content: "hi" }] },
    });
    expect(openAiStyle.status, JSON.stringify(openAiStyle.body)).toBe(503);
    expect(openAiStyle.headers.get("retry-after")).toBe("5");
    const flown = await Promise.all(inFlight);
    vendor.set({ kind: "echo" });

    for (const answer of [...flown, ...during]) {
      expect([200, 503], JSON.stringify(answer.body)).toContain(answer.status);
      if (answer.status === 503) {
        expect(answer.headers.get("retry-after")).toBe("5");
        expect(answer.body.code).toBe("unavailable");
      }
    }
    expect(during.map((a) => a.status)).toEqual([503, 503, 503, 503, 503]);
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(503);
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);

    await proxy.restore();
    const deadline = Date.now() + 20_000;
    while ((await fetch(`${server.baseUrl}/readyz`)).status !== 200 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await Promise.all(Array.from({ length: 3 }, () => call()));
    expect(after.map((a) => a.status)).toEqual([200, 200, 200]);

    // Holds stranded by the outage are released by the sweeper once they expire.
    await sweepExpiredHolds(direct.db, new Date(Date.now() + 3_600_000));
    const charged = [...flown, ...after].filter((a) => a.status === 200).length;
    expect(await balance()).toBe(before - 10 * charged);
    const [{ open } = { open: -1 }] = await direct.db
      .select({ open: sql<number>`count(*)::int` })
      .from(holds)
      .where(eq(holds.status, "held"));
    expect(open).toBe(0);
    const report = await reconcile(direct.db);
    expect(report.mismatches).toEqual([]);
    expect(report.unbalancedTransactions).toEqual([]);
    expect(report.ledgerTotal).toBe(0);
    scenariosPassed += 1;
  });
});
