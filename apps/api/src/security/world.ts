import { afterAll, beforeAll } from "vitest";
import { type Caller, createCaller, fundWallet } from "../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { startFakeProviders } from "../test/fake-providers.ts";
import { insertOrganization } from "../test/organizations.ts";
import { startTestServer, type TestServer } from "../test/server.ts";

export const card = { number: "4242 4242 4242 4242", exp_month: 12, exp_year: 2099, cvc: "123" };
export const billingAddress = {
  name: "Ada Lovelace",
  line1: "1 Analytical Row",
  city: "London",
  postal_code: "N1 7AA",
  country: "GB",
};
export const difyKey = "app-dify-key-9999";

/**
 * Everyone and everything the security suite needs, made through the real API: the owner
 * (creator of a private live prompt app, a workflow app and spare resources to delete), another
 * creator with a public app and a plan the owner subscribes to, and API keys for both.
 */
export interface World {
  server: TestServer;
  providers: Awaited<ReturnType<typeof startFakeProviders>>;
  owner: Caller;
  other: Caller;
  promptApp: { id: string; slug: string };
  /** A private chat app with one conversation (Dify's conversation routes answer chat apps only). */
  chatApp: { id: string; slug: string };
  chatMessageId: string;
  /** A webhook workflow app and one of its runs (Dify's `/workflows/run`). */
  runApp: { id: string; slug: string };
  workflowRunId: string;
  /** A Responses answer the owner stored (`store`, docs/decisions/054), and a spare one to delete. */
  storedResponseId: string;
  spareResponseId: string;
  workflowApp: { id: string; slug: string };
  spareApp: { slug: string };
  promptId: string;
  conversationId: string;
  promptVersionId: string;
  workflowId: string;
  workflowVersionId: string;
  ownerKey: { id: string; key: string };
  spareKey: { id: string };
  /** The owner's webhook endpoint with one (test) delivery, and a spare endpoint to delete. */
  webhookEndpointId: string;
  spareWebhookEndpointId: string;
  webhookDeliveryId: string;
  revokedKey: string;
  consumerKey: string;
  packageId: string;
  sparePackageId: string;
  otherApp: { slug: string };
  otherPackageId: string;
  subscriptionId: string;
  cardId: string;
  spareCardId: string;
  /** The owner's promotion code (decision 080), good on all their apps. */
  promotionCode: { id: string; code: string };
  /** An organization the owner owns (decision 084). */
  organizationId: string;
  stop(): Promise<void>;
}

/**
 * createWorld on a fresh database for a whole test file: made before its first test, stopped (the
 * database destroyed) after its last. Filled in when made (as useTestServer): read it inside tests.
 */
export function useWorld(): World {
  const world = {} as World;
  let testDb: TestDatabase | undefined;
  beforeAll(async () => {
    testDb = await createTestDatabase();
    Object.assign(world, await createWorld(testDb));
  });
  afterAll(async () => {
    await world.stop?.();
    await testDb?.destroy();
  });
  return world;
}

function expectStatus(what: string, answer: { status: number; body: unknown }, status: number) {
  if (answer.status !== status)
    throw new Error(`${what}: expected ${status}, got ${answer.status} ${JSON.stringify(answer.body)}`);
}

export async function createWorld(testDb: TestDatabase, env: Record<string, string> = {}): Promise<World> {
  const providers = await startFakeProviders();
  // The owner is also the platform's operator: their address is in ADMIN_EMAILS and verified
  // through the mailed link (the outbox), which grants the role; /admin's routes are theirs alone.
  const ownerEmail = `owner-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.test`;
  const server = await startTestServer(testDb, {
    env: { ALLOW_PRIVATE_UPSTREAMS: "true", ADMIN_EMAILS: ownerEmail, ...env },
  });
  const owner = await createCaller(server.baseUrl, "Owner", { email: ownerEmail, verified: true });
  const other = await createCaller(server.baseUrl, "Other");

  const createApp = async (caller: Caller, body: Record<string, unknown>) => {
    const created = await caller.api("POST", "/api/app/", { body });
    expectStatus("create app", created, 201);
    return created.body as { id: string; slug: string };
  };
  const goLive = async (caller: Caller, slug: string) =>
    expectStatus(
      "go live",
      await caller.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } }),
      200,
    );

  const promptApp = await createApp(owner, { name: "Private Prompt", visibility: "private" });
  await goLive(owner, promptApp.slug);
  const prompt = await owner.api("PATCH", `/api/app/${promptApp.slug}/prompt/`, {
    body: { prompt_template: "Say {{query}}", max_tokens: 64 },
  });
  expectStatus("prompt", prompt, 200);
  const chatApp = await createApp(owner, {
    name: "Private Chat",
    visibility: "private",
    interaction_mode: "chat",
  });
  await goLive(owner, chatApp.slug);
  expectStatus(
    "chat prompt",
    await owner.api("PATCH", `/api/app/${chatApp.slug}/prompt/`, { body: { max_tokens: 64 } }),
    200,
  );
  const chat = await owner.api("POST", `/api/app/${chatApp.slug}/chat-messages`, {
    body: { query: "hi", user: "matrix" },
  });
  expectStatus("chat", chat, 200);
  const promptVersions = await owner.api("GET", `/api/prompts/${prompt.body.id}/versions/`);
  // A label of its own for the matrix to remove (DELETE /api/prompts/{id}/labels/{name}).
  const sparePromptLabel = await owner.api("PUT", `/api/prompts/${prompt.body.id}/labels/spare`, {
    body: { version: 1 },
  });
  expectStatus("prompt label", sparePromptLabel, 200);
  const workflowApp = await createApp(owner, {
    name: "Private Flow",
    type: "workflow",
    provider_config: { app_id: "app-1", api_key: difyKey },
  });
  const created = await owner.api("GET", `/api/app/${workflowApp.slug}/workflow/`);
  const workflow = await owner.api("PATCH", `/api/app/${workflowApp.slug}/workflow/`, {
    body: { provider_config: { ...created.body.provider_config, base_url: `${providers.url}/dify/v1` } },
  });
  expectStatus("workflow", workflow, 200);
  const workflowVersions = await owner.api("GET", `/api/workflows/${workflow.body.id}/versions/`);
  // A label of its own for the matrix to remove (DELETE /api/workflows/{id}/labels/{name}).
  const spareLabel = await owner.api("PUT", `/api/workflows/${workflow.body.id}/labels/spare`, {
    body: { version: 1 },
  });
  expectStatus("workflow label", spareLabel, 200);
  // A workflow app of its own for Dify's /workflows/run: the one above is a Dify chat app.
  const runApp = await createApp(owner, {
    name: "Private Run",
    type: "workflow",
    provider_config: { app_id: "app-1", api_key: difyKey },
  });
  expectStatus(
    "run workflow",
    await owner.api("PATCH", `/api/app/${runApp.slug}/workflow/`, {
      body: { provider: "webhook", provider_config: { url: `${providers.url}/hook` } },
    }),
    200,
  );
  const run = await owner.api("POST", `/api/app/${runApp.slug}/workflows/run`, {
    body: { inputs: {}, user: "matrix" },
  });
  expectStatus("workflow run", run, 200);
  const spareApp = await createApp(owner, { name: "Spare" });
  const storeResponse = async () => {
    const stored = await owner.api("POST", "/api/v1/responses", {
      body: { model: promptApp.slug, input: "kept for the matrix" },
    });
    expectStatus("stored response", stored, 200);
    return stored.body.id as string;
  };
  const storedResponseId = await storeResponse();
  const spareResponseId = await storeResponse();

  const createKey = async (caller: Caller, name: string) => {
    const created = await caller.api("POST", "/api/keys/", { body: { name } });
    expectStatus("create key", created, 201);
    return created.body as { id: string; key: string };
  };
  const ownerKey = await createKey(owner, "owner");
  const spareKey = await createKey(owner, "spare");
  const revoked = await createKey(owner, "revoked");
  expectStatus("revoke", await owner.api("DELETE", `/api/keys/${revoked.id}/`), 204);
  const consumerKey = await createKey(other, "consumer");
  // Nothing listens on port 9: the test delivery's attempt fails, and stays in the log.
  const createEndpoint = async () => {
    const created = await owner.api("POST", "/api/webhooks/endpoints/", {
      body: { url: "http://127.0.0.1:9/hook", event_types: ["*"] },
    });
    expectStatus("create webhook endpoint", created, 201);
    return created.body.id as string;
  };
  const webhookEndpointId = await createEndpoint();
  const spareWebhookEndpointId = await createEndpoint();
  const testDelivery = await owner.api("POST", `/api/webhooks/endpoints/${webhookEndpointId}/test/`);
  expectStatus("send a test event", testDelivery, 200);

  const createPackage = async (caller: Caller, slug: string, name: string) => {
    const created = await caller.api("POST", `/api/app/${slug}/packages/`, {
      body: { name, price_cents: 500, included_calls: 10 },
    });
    expectStatus("create package", created, 201);
    return created.body.id as string;
  };
  const packageId = await createPackage(owner, promptApp.slug, "Pro");
  const sparePackageId = await createPackage(owner, promptApp.slug, "Spare");

  const otherApp = await createApp(other, { name: "Public Prompt", visibility: "public" });
  await goLive(other, otherApp.slug);
  const otherPackage = await createPackage(other, otherApp.slug, "Basic");
  await fundWallet(owner, 5_000);
  const subscription = await owner.api("POST", `/api/app/${otherApp.slug}/subscriptions/`, {
    body: { package_id: otherPackage },
  });
  expectStatus("subscribe", subscription, 201);

  const addCard = async () => {
    const created = await owner.api("POST", `/api/app/${otherApp.slug}/payment-methods/`, {
      body: { billing_address: billingAddress, card },
    });
    expectStatus("add card", created, 201);
    return created.body.id as string;
  };
  const cardId = await addCard();
  const spareCardId = await addCard();

  const promotion = await owner.api("POST", "/api/promotion-codes/", {
    body: { code: "WORLD-CODE", kind: "amount", amount_cents: 100, max_redemptions: 10 },
  });
  expectStatus("create a promotion code", promotion, 201);

  const organizationId = await insertOrganization(server.database.db, owner, "World Co");
  return {
    organizationId,
    server,
    providers,
    owner,
    other,
    promptApp,
    workflowApp,
    spareApp,
    promptId: prompt.body.id,
    chatApp,
    chatMessageId: chat.body.message_id,
    runApp,
    workflowRunId: run.body.workflow_run_id,
    storedResponseId,
    spareResponseId,
    conversationId: chat.body.conversation_id,
    promptVersionId: promptVersions.body[promptVersions.body.length - 1].id,
    workflowId: workflow.body.id,
    workflowVersionId: workflowVersions.body[workflowVersions.body.length - 1].id,
    ownerKey,
    spareKey,
    webhookEndpointId,
    spareWebhookEndpointId,
    webhookDeliveryId: testDelivery.body.id,
    revokedKey: revoked.key,
    consumerKey: consumerKey.key,
    packageId,
    sparePackageId,
    otherApp,
    otherPackageId: otherPackage,
    subscriptionId: subscription.body.id,
    cardId,
    spareCardId,
    promotionCode: { id: promotion.body.id, code: promotion.body.code },
    async stop() {
      await server.stop();
      await providers.stop();
    },
  };
}
