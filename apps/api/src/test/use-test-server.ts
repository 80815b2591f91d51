import { afterAll, beforeAll } from "vitest";
import { type Caller, createCaller } from "./caller.ts";
import { createTestDatabase, type TestDatabase } from "./database.ts";
import { startFakeOpenAi } from "./fake-openai.ts";
import { startTestServer, startTestServers, type TestServer } from "./server.ts";
import { startX402Facilitator, type X402Facilitator } from "./x402-facilitator.ts";

// The set-up most API test files share, as useWorkflowWorld does it: each helper registers the
// file's beforeAll/afterAll and returns an object that is filled in when its beforeAll has run, so
// read it inside tests and hooks, never at a file's top level. Hooks run in the order registered,
// so a caller made after the server exists once the server listens.

type ServerOptions = NonNullable<Parameters<typeof startTestServer>[1]>;

export interface FileServer extends TestServer {
  /** The file's own fresh database, destroyed after its last test. */
  testDb: TestDatabase;
}

/**
 * A server on a fresh database for the file's tests. `options` may be a function, for settings
 * known only once an earlier hook has run (a fake vendor's URL).
 */
export function useTestServer(options: ServerOptions | (() => ServerOptions) = {}): FileServer {
  const server = {} as FileServer;
  beforeAll(async () => {
    server.testDb = await createTestDatabase();
    Object.assign(
      server,
      await startTestServer(server.testDb, typeof options === "function" ? options() : options),
    );
  });
  afterAll(async () => {
    await server.stop?.();
    await server.testDb?.destroy();
  });
  return server;
}

/**
 * Servers on one fresh database (startTestServers) for the file's tests; the lists are filled in
 * when the file's first hook runs.
 */
export function useTestServers(): { servers: TestServer[]; urls: string[] } {
  const servers: TestServer[] = [];
  const urls: string[] = [];
  let testDb: TestDatabase | undefined;
  beforeAll(async () => {
    testDb = await createTestDatabase();
    const started = await startTestServers(testDb);
    servers.push(...started.servers);
    urls.push(...started.urls);
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    await testDb?.destroy();
  });
  return { servers, urls };
}

/** A person signed up and registered (createCaller) on `server` before the file's first test. */
export function useCaller(
  server: { baseUrl: string },
  displayName: string,
  options?: Parameters<typeof createCaller>[2],
): Caller {
  const caller = {} as Caller;
  beforeAll(async () => {
    Object.assign(caller, await createCaller(server.baseUrl, displayName, options));
  });
  return caller;
}

/** The loopback OpenAI-compatible vendor (startFakeOpenAi) for the file's tests. */
export function useFakeOpenAi(): Awaited<ReturnType<typeof startFakeOpenAi>> {
  const vendor = {} as Awaited<ReturnType<typeof startFakeOpenAi>>;
  beforeAll(async () => {
    Object.assign(vendor, await startFakeOpenAi());
  });
  afterAll(() => vendor.stop?.());
  return vendor;
}

/**
 * A server whose model vendor is the loopback fake (useFakeOpenAi), the paid path's usual world:
 * a platform OpenAI key, the fake's URL and a rate limit no test reaches, each overridable by `env`.
 */
export function useVendorServer(env: Record<string, string> | (() => Record<string, string>) = {}): {
  server: FileServer;
  vendor: ReturnType<typeof useFakeOpenAi>;
} {
  const vendor = useFakeOpenAi();
  const server = useTestServer(() => ({
    env: {
      OPENAI_API_KEY: "sk-vendor",
      OPENAI_BASE_URL: vendor.baseUrl,
      GATEWAY_RATE_LIMIT_PER_MINUTE: "1000",
      ...(typeof env === "function" ? env() : env),
    },
  }));
  return { server, vendor };
}

/**
 * useVendorServer with x402 on (docs/decisions/052, 064): payments go to the loopback facilitator
 * (test/x402-facilitator.ts), started before the server and stopped after the file.
 */
export function useX402Server(): {
  server: FileServer;
  vendor: ReturnType<typeof useFakeOpenAi>;
  facilitator: X402Facilitator;
} {
  const facilitator = {} as X402Facilitator;
  beforeAll(async () => {
    Object.assign(facilitator, await startX402Facilitator());
  });
  afterAll(() => facilitator.stop?.());
  return { ...useVendorServer(() => facilitator.env()), facilitator };
}

/**
 * For one test that needs other settings: `use` runs against a server of its own on a fresh
 * database, both stopped and destroyed after it, whatever it throws.
 */
export async function withTestServer<T>(
  options: ServerOptions,
  use: (server: TestServer) => Promise<T>,
): Promise<T> {
  const testDb = await createTestDatabase();
  const server = await startTestServer(testDb, options);
  try {
    return await use(server);
  } finally {
    await server.stop();
    await testDb.destroy();
  }
}
