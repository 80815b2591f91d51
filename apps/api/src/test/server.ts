import { mkdtempSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import { buildServer } from "../app.ts";
import { type Config, loadConfig } from "../config.ts";
import type { DatabaseHandle } from "../db/client.ts";
import type { WarmUpReport } from "../warm-up.ts";
import type { TestDatabase } from "./database.ts";

/** The SECRET_KEY test servers start with unless told otherwise. */
export const TEST_SECRET_KEY = "test-secret-key-that-is-long-enough-0123456789";

export interface TestServer {
  app: FastifyInstance;
  /** What main.ts runs before listening (warm-up.ts). */
  warmUp: () => Promise<WarmUpReport>;
  config: Config;
  baseUrl: string;
  database: DatabaseHandle;
  /** Stops the server and closes its database connection (the data stays). */
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The real server on a real port (the OIDC flow needs redirects and cookies), on the given
 * test database. Pass the same `port` and `secretKey` again to simulate a restart.
 */
export async function startTestServer(
  testDb: TestDatabase,
  options: {
    port?: number;
    secretKey?: string;
    env?: Record<string, string>;
    logStream?: { write(line: string): void };
  } = {},
): Promise<TestServer> {
  const port = options.port ?? (await freePort());
  const config = loadConfig({
    NODE_ENV: "test",
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "pm-data-")),
    SECRET_KEY: options.secretKey ?? TEST_SECRET_KEY,
    LOG_LEVEL: "silent",
    // Tests make many calls a minute at the default price ($1): the spend budget is out of their way
    // unless a test sets its own (docs/decisions/072).
    GATEWAY_SPEND_PER_MINUTE_CENTS: "100000000",
    ...options.env,
  });
  const database = await testDb.open();
  const { app, warmUp } = await buildServer({
    config,
    database,
    serveWeb: false,
    logStream: options.logStream,
  });
  await app.listen({ port, host: "127.0.0.1" });
  return {
    app,
    warmUp,
    config,
    baseUrl: config.publicUrl,
    database,
    async stop() {
      await app.close();
      await database.close();
    },
  };
}

/**
 * Servers on one database, as API processes behind a load balancer: one on PGlite (one process
 * per data directory), two on PostgreSQL. They share the first one's PUBLIC_URL, the issuer's,
 * so one access token is accepted by all; `urls` says where each listens.
 */
export async function startTestServers(
  testDb: TestDatabase,
): Promise<{ servers: TestServer[]; urls: string[] }> {
  const first = await startTestServer(testDb);
  const servers = [first];
  const urls = [first.baseUrl];
  if (testDb.kind === "postgres") {
    const port = await freePort();
    servers.push(await startTestServer(testDb, { port, env: { PUBLIC_URL: first.baseUrl } }));
    urls.push(`http://127.0.0.1:${port}`);
  }
  return { servers, urls };
}
