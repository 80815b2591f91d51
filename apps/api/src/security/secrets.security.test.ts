import { createHash, randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { queryRows } from "../db/client.ts";
import { apiKeys } from "../db/schema/index.ts";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { startFakeProviders } from "../test/fake-providers.ts";
import { signIn, signUp, type Tokens } from "../test/oidc-client.ts";
import { startTestServer, type TestServer } from "../test/server.ts";
import { recordSecurityFigure } from "./report.ts";
import { billingAddress, card, difyKey } from "./world.ts";

/**
 * A full journey at LOG_LEVEL=trace (sign up, sign in, create apps backed by secret-keyed
 * workflows, create API keys, call the apps, top up, save a card), then every raw row of every
 * table and every logged line are searched for each secret the journey handled.
 */
let testDb: TestDatabase;
let server: TestServer;
let providers: Awaited<ReturnType<typeof startFakeProviders>>;
const logged: string[] = [];
const secrets = new Map<string, string>();
const secretKey = `security-suite-secret-key-${randomBytes(12).toString("hex")}`;
const webhookToken = `whk_${randomBytes(16).toString("hex")}`;
const createdKeys: string[] = [];

function api(token: string, method: string, path: string, body?: unknown) {
  return fetch(`${server.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  }).then(async (response) => ({
    status: response.status,
    body: (await response.json().catch(() => null)) as any,
  }));
}

function remember(name: string, value: string | undefined) {
  if (value) secrets.set(name, value);
}

function rememberTokens(who: string, tokens: Tokens & { password?: string }) {
  remember(`${who} password`, tokens.password);
  remember(`${who} access token`, tokens.access_token);
  remember(`${who} refresh token`, tokens.refresh_token);
  remember(`${who} id token`, tokens.id_token);
}

async function journey() {
  const creator = await signUp(server.baseUrl, {
    displayName: "Keeper",
    password: `Pw-${randomBytes(9).toString("hex")}`,
  });
  rememberTokens("creator", creator);
  rememberTokens("creator again", {
    ...(await signIn(server.baseUrl, creator.email, creator.password)),
    password: undefined,
  });
  const token = creator.access_token;
  expect((await api(token, "POST", "/api/auth/register/")).status).toBe(200);

  const dify = await api(token, "POST", "/api/app/", {
    name: "Secret Dify",
    type: "workflow",
    visibility: "public",
    provider_config: { app_id: "app-1", api_key: difyKey },
  });
  expect(dify.status).toBe(201);
  const difyConfig = await api(token, "GET", `/api/app/${dify.body.slug}/workflow/`);
  expect(
    (
      await api(token, "PATCH", `/api/app/${dify.body.slug}/workflow/`, {
        provider_config: { ...difyConfig.body.provider_config, base_url: `${providers.url}/dify/v1` },
      })
    ).status,
  ).toBe(200);
  const hook = await api(token, "POST", "/api/app/", {
    name: "Secret Hook",
    type: "workflow",
    visibility: "public",
    provider_config: { app_id: "replaced", api_key: "replaced-below" },
  });
  expect(
    (
      await api(token, "PATCH", `/api/app/${hook.body.slug}/workflow/`, {
        provider: "webhook",
        provider_config: { url: `${providers.url}/hook`, bearer_token: webhookToken },
      })
    ).status,
  ).toBe(200);
  for (const slug of [dify.body.slug, hook.body.slug])
    expect((await api(token, "PATCH", `/api/app/${slug}/update_status/`, { status: "live" })).status).toBe(
      200,
    );

  const creatorKey = await api(token, "POST", "/api/keys/", { name: "creator" });
  createdKeys.push(creatorKey.body.key);
  remember("creator API key", creatorKey.body.key);

  const consumer = await signUp(server.baseUrl, {
    displayName: "Payer",
    password: `Pw-${randomBytes(9).toString("hex")}`,
  });
  rememberTokens("consumer", consumer);
  expect((await api(consumer.access_token, "POST", "/api/auth/login/")).status).toBe(200);
  const intent = await api(consumer.access_token, "POST", "/api/wallet/payment-intents/", { amount: 2_000 });
  remember("payment client secret", intent.body.client_secret);
  const confirmed = await api(consumer.access_token, "POST", "/api/billing/sandbox/confirm/", {
    client_secret: intent.body.client_secret,
    card,
  });
  expect(confirmed.body.status).toBe("succeeded");
  expect(
    (
      await api(consumer.access_token, "POST", `/api/app/${hook.body.slug}/payment-methods/`, {
        billing_address: billingAddress,
        card,
      })
    ).status,
  ).toBe(201);
  const consumerKey = await api(consumer.access_token, "POST", "/api/keys/", { name: "consumer" });
  createdKeys.push(consumerKey.body.key);
  remember("consumer API key", consumerKey.body.key);

  const difyCall = await api(consumerKey.body.key, "POST", `/api/app/${dify.body.slug}/chat-messages`, {
    query: "hello",
    user: "customer-1",
  });
  expect(difyCall.status).toBe(200);
  const hookCall = await api(consumerKey.body.key, "POST", `/api/app/${hook.body.slug}/completion-messages`, {
    inputs: {},
    query: "hello",
    user: "customer-1",
  });
  expect(hookCall.status).toBe(200);
  expect((await api(creatorKey.body.key, "GET", `/api/app/${dify.body.slug}/info`)).status).toBe(200);
  // A wrong key and a revoked one get logged as failures; their values must not be.
  const revoked = await api(token, "POST", "/api/keys/", { name: "revoked" });
  remember("revoked API key", revoked.body.key);
  await api(token, "DELETE", `/api/keys/${revoked.body.id}/`);
  expect((await api(revoked.body.key, "GET", `/api/app/${dify.body.slug}/info`)).status).toBe(401);
  // The upstream really received the secrets, so the journey handled them in the clear.
  expect(providers.requests.some((r) => r.headers.authorization === `Bearer ${difyKey}`)).toBe(true);
  expect(providers.requests.some((r) => r.headers.authorization === `Bearer ${webhookToken}`)).toBe(true);
}

beforeAll(async () => {
  providers = await startFakeProviders();
  testDb = await createTestDatabase();
  for (const method of ["log", "info", "warn", "error", "debug"] as const) {
    const original = console[method];
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      logged.push(args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))).join(" "));
      original(...args);
    });
  }
  server = await startTestServer(testDb, {
    secretKey,
    env: { ALLOW_PRIVATE_UPSTREAMS: "true", LOG_LEVEL: "trace" },
    logStream: { write: (line) => void logged.push(line) },
  });
  remember("SECRET_KEY", secretKey);
  remember("provider API key", difyKey);
  remember("webhook bearer token", webhookToken);
  remember("card number", card.number.replaceAll(" ", ""));
  remember("card number as typed", card.number);
  await journey();
}, 120_000);
afterAll(async () => {
  vi.restoreAllMocks();
  await server?.stop();
  await providers?.stop();
  await testDb?.destroy();
});

/** Which secrets occur in `text`, by name. */
function secretsIn(text: string): string[] {
  return [...secrets].filter(([, value]) => text.includes(value)).map(([name]) => name);
}

describe("secrets at rest and in logs", () => {
  it("keeps no secret in plaintext in any row of any table", async () => {
    const { db } = server.database;
    const tables = await queryRows<{ schema: string; name: string }>(
      db,
      sql`select table_schema as schema, table_name as name from information_schema.tables
          where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
    );
    expect(tables.length).toBeGreaterThanOrEqual(20);
    const found: string[] = [];
    for (const table of tables) {
      const rows = await queryRows(db, sql.raw(`select * from "${table.schema}"."${table.name}"`));
      for (const name of secretsIn(JSON.stringify(rows))) found.push(`${name} in ${table.name}`);
    }
    recordSecurityFigure("secrets_found_db", found.length);
    expect(secrets.size).toBeGreaterThanOrEqual(14);
    expect(found).toEqual([]);
  });

  it("stores API keys only as their SHA-256", async () => {
    for (const key of createdKeys) {
      const hash = createHash("sha256").update(key).digest("hex");
      const [row] = await server.database.db.select().from(apiKeys).where(eq(apiKeys.keyHash, hash));
      expect(row, "the key's hash is what is stored").toBeDefined();
      expect(JSON.stringify(row)).not.toContain(key);
      expect(key.startsWith(row?.prefix ?? "-")).toBe(true);
    }
  });

  it("logs the journey without any secret", () => {
    // The journey was logged (one line per request, lib/request-log.ts), so an empty log proves nothing.
    expect(logged.length).toBeGreaterThan(25);
    expect(logged.some((line) => line.includes("POST /api/keys/"))).toBe(true);
    const found = logged.flatMap((line) => secretsIn(line).map((name) => `${name}: ${line.slice(0, 300)}`));
    recordSecurityFigure("secrets_found_logs", found.length);
    expect(found).toEqual([]);
  });
});
