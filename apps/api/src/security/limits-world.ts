import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import type { DatabaseHandle } from "../db/client.ts";
import { type Caller, createCaller } from "../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { startTestServer, type TestServer } from "../test/server.ts";
import { startCountingUpstream } from "./upstream.ts";

export const PER_KEY = 20;
export const PER_IP = 30;

export interface LimitsWorld {
  first: TestServer;
  second: TestServer;
  creator: Caller;
  upstream: Awaited<ReturnType<typeof startCountingUpstream>>;
  /** A live public webhook app answered by the counting upstream. */
  webhookApp(options?: { priceCents?: number; timeoutSeconds?: number }): Promise<string>;
  newKey(caller: Caller): Promise<string>;
  /** One blocking gateway call to `server` (not necessarily the one the caller signed up on). */
  call(
    server: TestServer,
    slug: string,
    key: string,
    ip: string,
  ): Promise<{ status: number; headers: Headers; body: Record<string, unknown> | undefined }>;
  /** A distinct client address per scenario (the servers trust X-Forwarded-For from loopback). */
  nextIp(): string;
  stop(): Promise<void>;
}

/**
 * Two API processes on one database, with the per-key and per-address limits set low, and Redis
 * when `redisUrl` is given (then their limits are shared; without it each counts in memory). PGlite
 * allows a single opener, so on it the two servers share the connection; on PostgreSQL each has its
 * own pool.
 */
export async function startLimitsWorld(options: { redisUrl?: string } = {}): Promise<LimitsWorld> {
  const upstream = await startCountingUpstream();
  const testDb: TestDatabase = await createTestDatabase();
  let sharedHandle: DatabaseHandle | undefined;
  let database = testDb;
  if (testDb.kind === "pglite") {
    const handle = await testDb.open();
    sharedHandle = handle;
    database = { ...testDb, open: async () => ({ ...handle, close: async () => {} }) };
  }
  const env = {
    ALLOW_PRIVATE_UPSTREAMS: "true",
    REDIS_URL: options.redisUrl ?? "",
    REDIS_KEY_PREFIX: `pm-test-${randomBytes(6).toString("hex")}:`,
    GATEWAY_RATE_LIMIT_PER_MINUTE: String(PER_KEY),
    GATEWAY_RATE_LIMIT_PER_IP_PER_MINUTE: String(PER_IP),
  };
  const first = await startTestServer(database, { env });
  const second = await startTestServer(database, { env });
  const creator = await createCaller(first.baseUrl, "Limits Creator");
  let ipCounter = 0;

  return {
    first,
    second,
    creator,
    upstream,
    async webhookApp(appOptions = {}) {
      const created = await creator.api("POST", "/api/app/", {
        body: {
          name: `Limits ${randomBytes(3).toString("hex")}`,
          type: "workflow",
          visibility: "public",
          price_cents: appOptions.priceCents ?? 25,
          provider_config: { app_id: "a", api_key: "k-0000" },
        },
      });
      expect(created.status).toBe(201);
      const slug = created.body.slug as string;
      const patched = await creator.api("PATCH", `/api/app/${slug}/workflow/`, {
        body: {
          provider: "webhook",
          provider_config: { url: upstream.url },
          ...(appOptions.timeoutSeconds ? { timeout_seconds: appOptions.timeoutSeconds } : {}),
        },
      });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
      return slug;
    },
    async newKey(caller) {
      const created = await caller.api("POST", "/api/keys/", {
        body: { name: randomBytes(3).toString("hex") },
      });
      return created.body.key as string;
    },
    async call(server, slug, key, ip) {
      const response = await fetch(`${server.baseUrl}/api/app/${slug}/completion-messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          "x-forwarded-for": ip,
        },
        body: JSON.stringify({ inputs: {}, query: "hi", response_mode: "blocking" }),
      });
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        body: text ? JSON.parse(text) : undefined,
      };
    },
    nextIp: () => `198.51.100.${++ipCounter}`,
    async stop() {
      await first?.stop();
      await second?.stop();
      await sharedHandle?.close();
      await upstream?.stop();
      await testDb?.destroy();
    },
  };
}
