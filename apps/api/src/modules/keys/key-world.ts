import { expect } from "vitest";
import { type Caller, createCaller, fundWallet } from "../../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { startFakeOpenAi } from "../../test/fake-openai.ts";
import { startTestServer, type TestServer } from "../../test/server.ts";

/** What every paid app of a key world costs per call, in cents (gpt-4-turbo; the loopback vendor echoes). */
export const PRICE = 30;

/**
 * The world the key-limit tests run in (decision 035): a real server on a fresh database, a loopback
 * OpenAI vendor, a creator with two live public apps (A and B), and a funded consumer who creates
 * keys with options.
 */
export interface KeyWorld {
  server: TestServer;
  vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
  creator: Caller;
  consumer: Caller;
  appA: string;
  appB: string;
  /** A key of the consumer's with these options (`POST /api/keys/`): its secret and id. */
  createKey(options?: Record<string, unknown>): Promise<{ key: string; id: string }>;
  stop(): Promise<void>;
}

export async function startKeyWorld(): Promise<KeyWorld> {
  const vendor = await startFakeOpenAi();
  const testDb: TestDatabase = await createTestDatabase();
  const server = await startTestServer(testDb, {
    env: {
      OPENAI_API_KEY: "sk-vendor",
      OPENAI_BASE_URL: vendor.baseUrl,
      GATEWAY_RATE_LIMIT_PER_MINUTE: "10000",
    },
  });
  const creator = await createCaller(server.baseUrl, "Key Seller");
  const liveApp = async (name: string): Promise<string> => {
    const { body: app } = await creator.api("POST", "/api/app/", {
      body: { name, visibility: "public", price_cents: PRICE },
    });
    await creator.api("PATCH", `/api/app/${app.slug}/prompt/`, { body: { model: "gpt-4-turbo" } });
    await creator.api("PATCH", `/api/app/${app.slug}/update_status/`, { body: { status: "live" } });
    return app.slug;
  };
  const appA = await liveApp("Key App A");
  const appB = await liveApp("Key App B");
  const consumer = await createCaller(server.baseUrl, "Key Buyer");
  await fundWallet(consumer, 5_000);
  return {
    server,
    vendor,
    creator,
    consumer,
    appA,
    appB,
    async createKey(options = {}) {
      const created = await consumer.api("POST", "/api/keys/", { body: { name: "handed out", ...options } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return { key: created.body.key, id: created.body.id };
    },
    async stop() {
      await server.stop();
      await vendor.stop();
      await testDb.destroy();
    },
  };
}
