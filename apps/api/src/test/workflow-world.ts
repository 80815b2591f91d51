import { afterAll, beforeAll, expect } from "vitest";
import { type Caller, createCaller, fundWallet } from "./caller.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { startFakeProviders } from "./fake-providers.ts";
import { startTestServer, type TestServer } from "./server.ts";

export interface WorkflowWorld {
  server: TestServer;
  providers: Awaited<ReturnType<typeof startFakeProviders>>;
  creator: Caller;
  consumer: Caller;
  /** The consumer's API key; the wallet behind it is funded. */
  consumerKey: string;
  /** A live public workflow app on `provider` with these settings; answers its slug. */
  workflowApp(
    provider: string,
    config: Record<string, unknown>,
    extra?: Record<string, unknown>,
  ): Promise<string>;
  /** Settings for one of the fake Dify apps (FAKE_DIFY_APPS in test/fake-providers.ts). */
  difySettings(apiKey: string, appType: string): Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A server that may call loopback providers, the fake engines (test/fake-providers.ts), a creator
 * and a funded consumer: what every workflow-provider test starts from.
 */
export async function startWorkflowWorld(env: Record<string, string> = {}): Promise<WorkflowWorld> {
  const providers = await startFakeProviders();
  const testDb: TestDatabase = await createTestDatabase();
  const server = await startTestServer(testDb, { env: { ALLOW_PRIVATE_UPSTREAMS: "true", ...env } });
  const creator = await createCaller(server.baseUrl, "Flow Creator");
  const consumer = await createCaller(server.baseUrl, "Flow Consumer");
  const consumerKey = (await consumer.api("POST", "/api/keys/", { body: { name: "flows" } })).body.key;
  await fundWallet(consumer, 100_000);

  async function workflowApp(provider: string, config: Record<string, unknown>, extra = {}) {
    const created = await creator.api("POST", "/api/app/", {
      body: {
        name: `Flow ${provider}`,
        type: "workflow",
        visibility: "public",
        provider_config: { app_id: "app-1", api_key: "app-dify-key-9999" },
      },
    });
    expect(created.status).toBe(201);
    const patched = await creator.api("PATCH", `/api/app/${created.body.slug}/workflow/`, {
      body: { provider, provider_config: config, ...extra },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await creator.api("PATCH", `/api/app/${created.body.slug}/update_status/`, { body: { status: "live" } });
    return created.body.slug as string;
  }

  return {
    server,
    providers,
    creator,
    consumer,
    consumerKey,
    workflowApp,
    difySettings: (apiKey, appType) => ({
      base_url: `${providers.url}/dify/v1`,
      api_key: apiKey,
      app_type: appType,
    }),
    async stop() {
      await server.stop();
      await providers.stop();
      await testDb.destroy();
    },
  };
}

/**
 * The world for one test file: started before its tests and stopped after them (`env` adds to the
 * server's). Read its fields inside tests (they are filled in by then).
 */
export function useWorkflowWorld(env: Record<string, string> = {}): WorkflowWorld {
  const world = {} as WorkflowWorld;
  beforeAll(async () => {
    Object.assign(world, await startWorkflowWorld(env));
  });
  afterAll(() => world.stop?.());
  return world;
}
