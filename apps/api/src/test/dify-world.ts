import { type Caller, createCaller, fundWallet } from "./caller.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { startFakeOpenAi } from "./fake-openai.ts";
import { startFakeProviders } from "./fake-providers.ts";
import { startTestServer, type TestServer } from "./server.ts";

/** What the Dify service API tests share: a server, its loopback vendors, a creator's apps and a paying consumer. */
export interface DifyWorld {
  testDb: TestDatabase;
  server: TestServer;
  vendor: Awaited<ReturnType<typeof startFakeOpenAi>>;
  providers: Awaited<ReturnType<typeof startFakeProviders>>;
  creator: Caller;
  consumer: Caller;
  consumerKey: string;
  creatorKey: string;
  /** Slugs: a completion prompt app (`topic` required, `tone` optional), a chat app, a workflow app. */
  slugs: { completion: string; chat: string; workflow: string };
  /** The Dify base URL of an app (`<server>/api/app/<slug>`). */
  baseUrl(slug: string): string;
  /** The consumer's money, available plus held (a lease's unspent rest is held until it idles out). */
  walletCents(): Promise<number>;
  stop(): Promise<void>;
}

export const PRICE_CENTS = 100;

export async function createDifyWorld(): Promise<DifyWorld> {
  const vendor = await startFakeOpenAi();
  const providers = await startFakeProviders();
  const testDb = await createTestDatabase();
  const server = await startTestServer(testDb, {
    env: {
      OPENAI_API_KEY: "sk-vendor-test",
      OPENAI_BASE_URL: vendor.baseUrl,
      ALLOW_PRIVATE_UPSTREAMS: "true",
      GATEWAY_RATE_LIMIT_PER_MINUTE: "1000",
    },
  });
  const creator = await createCaller(server.baseUrl, "Dify Creator");
  const consumer = await createCaller(server.baseUrl, "Dify Consumer");
  const consumerKey = (await consumer.api("POST", "/api/keys/", { body: { name: "dify" } })).body.key;
  const creatorKey = (await creator.api("POST", "/api/keys/", { body: { name: "dify" } })).body.key;
  await fundWallet(consumer, 100_000);

  const promptApp = async (mode: "completion" | "chat", prompt: Record<string, unknown>) => {
    const created = await creator.api("POST", "/api/app/", {
      body: { name: `Dify ${mode}`, interaction_mode: mode, visibility: "public", price_cents: PRICE_CENTS },
    });
    await creator.api("PATCH", `/api/app/${created.body.slug}/prompt/`, {
      body: { model: "gpt-4-turbo", changelog: "test setup", ...prompt },
    });
    await creator.api("PATCH", `/api/app/${created.body.slug}/update_status/`, { body: { status: "live" } });
    return created.body.slug as string;
  };
  const completion = await promptApp("completion", {
    prompt_template: "About {{topic}}{{tone}}",
    input_schema: {
      type: "object",
      properties: {
        topic: { type: "string", maxLength: 40, description: "Topic" },
        tone: { type: "string" },
        short: { type: "boolean", default: true },
      },
      required: ["topic"],
    },
  });
  const chat = await promptApp("chat", {});
  const flow = await creator.api("POST", "/api/app/", {
    body: {
      name: "Dify flow",
      type: "workflow",
      visibility: "public",
      price_cents: PRICE_CENTS,
      provider_config: { app_id: "app-1", api_key: "app-dify-key-9999" },
    },
  });
  await creator.api("PATCH", `/api/app/${flow.body.slug}/workflow/`, {
    body: { provider: "webhook", provider_config: { url: `${providers.url}/hook` } },
  });
  await creator.api("PATCH", `/api/app/${flow.body.slug}/update_status/`, { body: { status: "live" } });

  return {
    testDb,
    server,
    vendor,
    providers,
    creator,
    consumer,
    consumerKey,
    creatorKey,
    slugs: { completion, chat, workflow: flow.body.slug },
    baseUrl: (slug) => `${server.baseUrl}/api/app/${slug}`,
    async walletCents() {
      const { balance_micros, held_micros } = (await consumer.api("GET", "/api/wallet/")).body;
      return ((balance_micros as number) + (held_micros as number)) / 10_000;
    },
    async stop() {
      await server.stop();
      await vendor.stop();
      await providers.stop();
      await testDb.destroy();
    },
  };
}

/** The `data:` events of a Dify SSE body. */
export function sseEvents(text: string): Record<string, any>[] {
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => JSON.parse(block.slice(6)));
}
