import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOOKUP_TTL_MS } from "../../lib/lookup-cache.ts";
import { type Caller, callerAt, createCaller, fundWallet } from "../../test/caller.ts";
import { embedWidget } from "../../test/embed-widget.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { freePort, startTestServer, type TestServer } from "../../test/server.ts";
import { useTestServer } from "../../test/use-test-server.ts";

// Two API processes on one PostgreSQL (decision 046): a suspension made through one is honoured by
// the other within moments, for every credential: sign-in tokens, API keys, embed tokens.

const ADMIN_EMAIL = `operator-${Date.now()}@example.test`;
const SHOP = "https://shop.example";
const env = { ADMIN_EMAILS: ADMIN_EMAIL, GATEWAY_RATE_LIMIT_PER_MINUTE: "10000" };
const one = useTestServer({ env });
let two: TestServer;
let twoUrl: string;
let admin: Caller;

beforeAll(async () => {
  const port = await freePort();
  two = await startTestServer(one.testDb, { port, env: { ...env, PUBLIC_URL: one.baseUrl } });
  twoUrl = `http://127.0.0.1:${port}`;
  // An operator's address must be verified (decision 041).
  admin = await createCaller(one.baseUrl, "Operator", { email: ADMIN_EMAIL, verified: true });
});
afterAll(() => two?.stop());

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000) {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return { value, ms: Date.now() - started };
    if (Date.now() - started > timeoutMs) return { value, ms: Date.now() - started };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function liveApp(owner: Caller): Promise<string> {
  const name = `Suspension ${Math.random().toString(36).slice(2, 7)}`;
  return (await createLiveApp(owner, { name, price_cents: 5 }, { model: "sandbox" })).slug;
}

const userIdOf = async (caller: Caller) =>
  (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;
const call = (caller: Caller, slug: string, auth?: string) =>
  caller.api("POST", `/api/app/${slug}/completion-messages`, {
    ...(auth ? { auth } : {}),
    body: { inputs: { query: "hello" }, response_mode: "blocking" },
  });
const suspend = (caller: Caller, kind: "users" | "apps", id: string, on: boolean) =>
  caller.api("POST", `/api/admin/${kind}/${id}/${on ? "suspend" : "unsuspend"}`, {
    body: { reason: "chargeback fraud under review" },
  });

describe("a suspension made through one process, on the other", () => {
  it("refuses every credential of a suspended consumer: sign-in token, API key, top-ups, keys, apps", async () => {
    const creator = await createCaller(one.baseUrl, "Seller");
    const slug = await liveApp(creator);
    const consumer = await createCaller(one.baseUrl, "Suspect");
    await fundWallet(consumer, 1_000);
    const key = (await consumer.api("POST", "/api/keys/", { body: { name: "sdk" } })).body.key as string;
    const onTwo = callerAt(twoUrl, consumer);
    // The other process has the key cached, and the token works there.
    expect((await call(onTwo, slug, key)).status).toBe(200);
    expect((await call(onTwo, slug)).status).toBe(200);

    expect((await suspend(admin, "users", await userIdOf(consumer), true)).body).toMatchObject({
      suspended: true,
      changed: true,
    });
    const byKey = await eventually(
      () => call(onTwo, slug, key),
      (answer) => answer.status === 403,
    );
    expect(byKey.value.status).toBe(403);
    expect(byKey.value.body.code).toBe("account_suspended");
    // Heard through the change feed: sooner than even a short-lived copy would expire.
    expect(byKey.ms).toBeLessThan(LOOKUP_TTL_MS);

    const refused: [string, string, unknown?][] = [
      ["POST", `/api/app/${slug}/completion-messages`, { inputs: { query: "hi" } }],
      ["POST", "/api/v1/chat/completions", { model: slug, messages: [{ role: "user", content: "hi" }] }],
      ["POST", "/api/wallet/payment-intents/", { amount: 500, currency: "usd" }],
      ["POST", "/api/keys/", { name: "another" }],
      ["GET", "/api/keys/"],
      ["GET", "/api/wallet/"],
      ["POST", "/api/app/", { name: "Fresh start", visibility: "public", price_cents: 100 }],
      ["POST", "/api/payouts/onboarding", {}],
      ["PATCH", "/api/auth/profile/", { user: { first_name: "Nope" } }],
      ["POST", "/api/auth/register/"],
    ];
    for (const [method, path, body] of refused) {
      const answer = await onTwo.api(method, path, body === undefined ? {} : { body });
      expect(answer.status, `${method} ${path}`).toBe(403);
      // The OpenAI-compatible route answers in OpenAI's error shape.
      expect(answer.body.error?.code ?? answer.body.code, `${method} ${path}`).toBe("account_suspended");
    }
    // Enough for the SPA to say why: the profile, the roles, signing in; nothing charged meanwhile.
    expect((await onTwo.api("GET", "/api/auth/profile/")).status).toBe(200);
    expect((await onTwo.api("GET", "/api/auth/roles/")).status).toBe(200);
    expect((await onTwo.api("POST", "/api/auth/login/")).status).toBe(200);

    // Lifted through the other process: every credential works again, on both.
    expect((await suspend(callerAt(twoUrl, admin), "users", await userIdOf(consumer), false)).status).toBe(
      200,
    );
    const back = await eventually(
      () => call(consumer, slug, key),
      (answer) => answer.status === 200,
    );
    expect(back.value.status).toBe(200);
    expect((await call(onTwo, slug)).status).toBe(200);
  });

  it("hides a suspended creator's apps from every caller, embed tokens included, and refuses the creator", async () => {
    const creator = await createCaller(one.baseUrl, "Suspended Seller");
    const slug = await liveApp(creator);
    const widget = embedWidget(twoUrl, SHOP, one.baseUrl);
    const embedApp = await widget.createEmbedApp(callerAt(twoUrl, creator), { prompt: { model: "sandbox" } });
    await fundWallet(creator, 1_000);
    const page = await widget.loadWidget(embedApp.slug, `${SHOP}/page`);
    expect(page.token).toBeDefined();
    expect((await widget.sendMessage(embedApp.slug, page.token, { origin: SHOP })).status).toBe(200);
    const consumer = await createCaller(one.baseUrl, "Loyal Customer");
    await fundWallet(consumer, 1_000);
    const onTwo = callerAt(twoUrl, consumer);
    expect((await call(onTwo, slug)).status).toBe(200);

    await suspend(admin, "users", await userIdOf(creator), true);
    const hidden = await eventually(
      () => call(onTwo, slug),
      (answer) => answer.status === 404,
    );
    expect(hidden.value.status).toBe(404);
    expect(hidden.ms).toBeLessThan(LOOKUP_TTL_MS);
    const widgetCall = await widget.sendMessage(embedApp.slug, page.token, { origin: SHOP });
    expect(widgetCall.status).toBe(404);
    const creatorOnTwo = callerAt(twoUrl, creator);
    for (const [method, path] of [
      ["GET", `/api/app/${slug}/`],
      ["PATCH", `/api/app/${slug}/update_status/`],
      ["GET", "/api/payouts/"],
    ] as const) {
      const answer = await creatorOnTwo.api(
        method,
        path,
        method === "PATCH" ? { body: { status: "live" } } : {},
      );
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body.code).toBe("account_suspended");
    }
    await suspend(admin, "users", await userIdOf(creator), false);
    expect(
      (
        await eventually(
          () => call(onTwo, slug),
          (answer) => answer.status === 200,
        )
      ).value.status,
    ).toBe(200);
  });
});
