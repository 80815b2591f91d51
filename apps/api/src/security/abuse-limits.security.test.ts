import { randomBytes } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "../db/client.ts";
import { holds, signInFailures } from "../db/schema/index.ts";
import { createRedisRateLimiter } from "../modules/gateway/rate-limit.ts";
import { type Caller, createCaller, fundWallet } from "../test/caller.ts";
import { createTestDatabase, type TestDatabase } from "../test/database.ts";
import { signUp, startSignIn } from "../test/oidc-client.ts";
import { startTestServer, type TestServer } from "../test/server.ts";
import { recordSecurityFigure } from "./report.ts";
import { startCountingUpstream } from "./upstream.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const PER_KEY = 20;
const PER_IP = 30;

let testDb: TestDatabase;
let sharedHandle: DatabaseHandle | undefined;
let first: TestServer;
let second: TestServer;
let upstream: Awaited<ReturnType<typeof startCountingUpstream>>;
let creator: Caller;

beforeAll(async () => {
  upstream = await startCountingUpstream();
  testDb = await createTestDatabase();
  // Two API processes on one database and one Redis. PGlite allows a single opener, so on it the
  // two servers share the connection; on PostgreSQL each has its own pool.
  let database = testDb;
  if (testDb.kind === "pglite") {
    const handle = await testDb.open();
    sharedHandle = handle;
    database = { ...testDb, open: async () => ({ ...handle, close: async () => {} }) };
  }
  const env = {
    ALLOW_PRIVATE_UPSTREAMS: "true",
    REDIS_URL,
    REDIS_KEY_PREFIX: `pm-test-${randomBytes(6).toString("hex")}:`,
    GATEWAY_RATE_LIMIT_PER_MINUTE: String(PER_KEY),
    GATEWAY_RATE_LIMIT_PER_IP_PER_MINUTE: String(PER_IP),
  };
  first = await startTestServer(database, { env });
  second = await startTestServer(database, { env });
  creator = await createCaller(first.baseUrl, "Limits Creator");
});
afterAll(async () => {
  await first?.stop();
  await second?.stop();
  await sharedHandle?.close();
  await upstream?.stop();
  await testDb?.destroy();
});

let ipCounter = 0;
/** A distinct client address per scenario (the servers trust X-Forwarded-For from loopback). */
const nextIp = () => `198.51.100.${++ipCounter}`;

async function webhookApp(options: { priceCents?: number; timeoutSeconds?: number } = {}) {
  const created = await creator.api("POST", "/api/app/", {
    body: {
      name: `Limits ${randomBytes(3).toString("hex")}`,
      type: "workflow",
      visibility: "public",
      price_cents: options.priceCents ?? 25,
      provider_config: { app_id: "a", api_key: "k-0000" },
    },
  });
  expect(created.status).toBe(201);
  const slug = created.body.slug as string;
  const patched = await creator.api("PATCH", `/api/app/${slug}/workflow/`, {
    body: {
      provider: "webhook",
      provider_config: { url: upstream.url },
      ...(options.timeoutSeconds ? { timeout_seconds: options.timeoutSeconds } : {}),
    },
  });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  return slug;
}

async function newKey(caller: Caller) {
  const created = await caller.api("POST", "/api/keys/", { body: { name: randomBytes(3).toString("hex") } });
  return created.body.key as string;
}

/** One blocking gateway call to `server` (not necessarily the one the caller signed up on). */
async function call(server: TestServer, _caller: Caller, slug: string, key: string, ip: string) {
  const response = await fetch(`${server.baseUrl}/api/app/${slug}/completion-messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify({ inputs: {}, query: "hi", response_mode: "blocking" }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

describe("rate limits across two API processes sharing Redis", () => {
  it("lets exactly the per-key limit through when 10× the limit is fired at both processes", async () => {
    const slug = await webhookApp({ priceCents: 1 });
    const key = await newKey(creator);
    const before = upstream.calls;
    const statuses: number[] = [];
    const passedOn = [0, 0];
    // 200 calls in waves of 20 concurrent, alternating between the two processes, each from its
    // own address so only the per-key limit applies.
    for (let wave = 0; wave < 10; wave++) {
      const answers = await Promise.all(
        Array.from({ length: PER_KEY }, (_, i) =>
          call(i % 2 === 0 ? first : second, creator, slug, key, `203.0.113.${(wave * 20 + i) % 250}`),
        ),
      );
      answers.forEach((answer, i) => {
        statuses.push(answer.status);
        if (answer.status === 200) passedOn[i % 2] = (passedOn[i % 2] ?? 0) + 1;
      });
      const limited = answers.find((a) => a.status === 429);
      if (limited) expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // Both processes served calls, and together they let the limit through once, not twice.
    expect(passedOn[0]).toBeGreaterThan(0);
    expect(passedOn[1]).toBeGreaterThan(0);
    const upstreamCalls = upstream.calls - before;
    const overshootPct = (Math.max(0, upstreamCalls - PER_KEY) / PER_KEY) * 100;
    recordSecurityFigure("ratelimit_overshoot_pct", overshootPct);
    expect(statuses).toHaveLength(10 * PER_KEY);
    expect(statuses.filter((s) => s === 200)).toHaveLength(PER_KEY);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9 * PER_KEY);
    expect(upstreamCalls).toBe(PER_KEY);
    expect(overshootPct).toBeLessThanOrEqual(1);
  });

  it("limits one address across keys and processes, and another address is unaffected", async () => {
    const slug = await webhookApp({ priceCents: 1 });
    const keys = [await newKey(creator), await newKey(creator)];
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < PER_IP + 5; i++) {
      const answer = await call(i % 2 ? first : second, creator, slug, keys[i % 2] as string, ip);
      statuses.push(answer.status);
    }
    expect(statuses.slice(0, PER_IP).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(PER_IP)).toEqual([429, 429, 429, 429, 429]);
    expect((await call(first, creator, slug, keys[0] as string, nextIp())).status).toBe(200);
  });

  it("ignores X-Forwarded-For from a client that is not a trusted proxy", async () => {
    const slug = await webhookApp({ priceCents: 1 });
    const key = await newKey(creator);
    const statuses: number[] = [];
    for (let i = 0; i < PER_IP + 2; i++) {
      const response = await first.app.inject({
        method: "POST",
        url: `/api/app/${slug}/completion-messages`,
        remoteAddress: "192.0.2.77",
        headers: {
          authorization: `Bearer ${key}`,
          "x-forwarded-for": `203.0.113.${i}`,
          "content-type": "application/json",
        },
        payload: { inputs: {}, query: "hi" },
      });
      statuses.push(response.statusCode);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
  });

  it("keeps limiting in memory, with a warning, when Redis cannot be reached", async () => {
    const warnings: string[] = [];
    const log = {
      warn: (...args: unknown[]) => warnings.push(args.map(String).join(" ")),
      info: () => {},
    } as never;
    const limiter = createRedisRateLimiter(
      { perCallerPerMinute: 3, perIpPerMinute: 100 },
      { url: "redis://127.0.0.1:1", keyPrefix: "pm-unreachable:", log, commandTimeoutMs: 200 },
    );
    try {
      const results: string[] = [];
      for (let i = 0; i < 5; i++) {
        results.push(
          await limiter.consume({ caller: "key:k", ip: "1.2.3.4" }).then(
            () => "ok",
            (e: { status?: number }) => String(e.status),
          ),
        );
      }
      expect(results).toEqual(["ok", "ok", "ok", "429", "429"]);
      expect(warnings.some((w) => w.includes("Redis unreachable"))).toBe(true);
    } finally {
      await limiter.close();
    }
  });
});

describe("abuse of the paid path", () => {
  it("sends a zero-balance caller's flood to 402 without a single upstream call", async () => {
    const slug = await webhookApp({ priceCents: 50 });
    const broke = await createCaller(first.baseUrl, "Broke Caller");
    const key = await newKey(broke);
    const before = upstream.calls;
    const ip = nextIp();
    const answers = await Promise.all(
      Array.from({ length: PER_KEY }, (_, i) => call(i % 2 ? first : second, broke, slug, key, ip)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(PER_KEY).fill(402));
    expect(upstream.calls - before).toBe(0);
  });

  it("charges nothing and leaves no hold when the upstream answers too much, too late or not JSON", async () => {
    const consumer = await createCaller(first.baseUrl, "Paying Caller");
    await fundWallet(consumer, 1000);
    const key = await newKey(consumer);
    const slug = await webhookApp({ priceCents: 25, timeoutSeconds: 1 });
    const balance = async () =>
      ((await consumer.api("GET", "/api/wallet/")).body.balance_micros / 10_000) as number;
    const start = await balance();
    expect(start).toBe(1000);

    upstream.set("huge");
    const huge = await call(first, consumer, slug, key, nextIp());
    expect(huge.status).toBe(502);
    expect(huge.body.message).toMatch(/exceeded/);

    upstream.set("malformed");
    const malformed = await call(second, consumer, slug, key, nextIp());
    expect(malformed.status).toBe(502);

    upstream.set("hang");
    const began = Date.now();
    const slow = await call(first, consumer, slug, key, nextIp());
    expect(slow.status).toBe(504);
    expect(Date.now() - began).toBeLessThan(10_000);
    upstream.set("ok");

    expect(await balance()).toBe(start);
    const db = first.database.db;
    const open = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(holds)
      .where(and(eq(holds.status, "held")));
    expect(open[0]?.n).toBe(0);

    // And a good answer is charged once, so the checks above could have failed.
    expect((await call(second, consumer, slug, key, nextIp())).status).toBe(200);
    expect(await balance()).toBe(start - 25);
  });
});

describe("sign-in throttling under a password-guessing loop", () => {
  it("checks at most 5 guesses, concurrent or not, then refuses even the right password until the window passes", async () => {
    const person = await signUp(first.baseUrl, { password: "Right-horse-42" });
    const journeys = await Promise.all(Array.from({ length: 20 }, () => startSignIn(first.baseUrl)));
    const guesses = await Promise.all(
      journeys.map((journey, i) =>
        journey.submit("login", { email: person.email, password: `wrong-guess-${i}` }),
      ),
    );
    // A burst: however the 20 interleave, at most 5 passwords are actually checked.
    const burstChecked = guesses.filter((g) => g.status === 401).length;
    const throttled = guesses.filter((g) => g.status === 429).length;
    expect(burstChecked).toBeLessThanOrEqual(5);
    expect(burstChecked + throttled).toBe(20);
    // Then a steady loop: only the rest of the 5 are checked, everything after is refused.
    const loop: number[] = [];
    for (let i = 0; i < 8; i++) {
      const guess = await (await startSignIn(second.baseUrl)).submit("login", {
        email: person.email,
        password: `loop-guess-${i}`,
      });
      loop.push(guess.status);
    }
    expect(burstChecked + loop.filter((s) => s === 401).length).toBe(5);
    expect(loop.slice(5 - burstChecked).every((s) => s === 429)).toBe(true);

    const right = await (await startSignIn(first.baseUrl)).submit("login", {
      email: person.email,
      password: "Right-horse-42",
    });
    expect(right.status).toBe(429);
    expect(right.tokens).toBeUndefined();

    // The 15-minute window passes.
    await first.database.db
      .update(signInFailures)
      .set({ failedAt: new Date(Date.now() - 16 * 60_000) })
      .where(eq(signInFailures.email, person.email));
    const later = await (await startSignIn(second.baseUrl)).submit("login", {
      email: person.email,
      password: "Right-horse-42",
    });
    expect(later.tokens?.access_token).toBeTruthy();
  });
});
