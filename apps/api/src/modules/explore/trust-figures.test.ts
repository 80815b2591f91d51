import { randomUUID } from "node:crypto";
import { and, eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { appDailyLatency, appReviews, invocations, users } from "../../db/schema/index.ts";
import { fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useTestServer } from "../../test/use-test-server.ts";
import { type InvocationRecord, recordInvocation } from "../analytics/call-records.ts";
import { compactRollups, utcDay } from "../analytics/rollups.ts";
import { NOT_THE_APPS } from "../events/app-health.ts";

/** Explore's measured health and ranking (decision 081), from calls recorded as the gateway records them. */
const server = useTestServer({ env: { GATEWAY_RATE_LIMIT_PER_MINUTE: "1000" } });
const creator = useCaller(server, "Ada Creator");
const consumer = useCaller(server, "Consumer");

const prompt = {
  model: "sandbox",
  prompt_template: "Say hello to {{name}}.",
  input_schema: {
    type: "object",
    properties: { name: { type: "string", maxLength: 40 } },
    required: ["name"],
    additionalProperties: false,
  },
  changelog: "test setup",
};

let creatorId = "";
beforeAll(async () => {
  const [row] = await server.database.db
    .select({ id: users.id })
    .from(users)
    .where(eq(users.email, creator.email));
  creatorId = row?.id ?? "";
});

async function record(applicationId: string, call: Partial<InvocationRecord>): Promise<void> {
  await recordInvocation(server.database.db, {
    id: randomUUID(),
    applicationId,
    callerUserId: creatorId,
    apiKeyId: null,
    endUser: null,
    mode: "completion",
    model: "sandbox",
    status: "success",
    latencyMs: 100,
    inputTokens: 3,
    outputTokens: 5,
    ...call,
  });
}

/** The figures as the recorded invocations say them, by decision 081's definitions. */
async function figuresFromInvocations(applicationId: string) {
  const rows = (
    await server.database.db
      .select({
        status: invocations.status,
        errorType: invocations.errorType,
        latencyMs: invocations.latencyMs,
        purpose: invocations.purpose,
      })
      .from(invocations)
      .where(eq(invocations.applicationId, applicationId))
  ).filter((row) => row.purpose !== "eval" && row.purpose !== "online_eval");
  const calls = rows.length;
  const errors = rows.filter((row) => row.status === "error");
  const appFailures = errors.filter((row) => !NOT_THE_APPS.includes(row.errorType ?? ""));
  // Three significant digits, floored (exact below a second), then the lower median.
  const bucket = (ms: number) => {
    const step = 10 ** Math.max(String(ms).length - 3, 0);
    return Math.floor(ms / step) * step;
  };
  const answered = rows
    .filter((row) => row.status === "success")
    .map((row) => bucket(row.latencyMs))
    .sort((a, b) => a - b);
  return {
    calls_30d: calls,
    enough_calls: true,
    uptime: 1 - appFailures.length / calls,
    error_rate: errors.length / calls,
    median_latency_ms: answered[Math.ceil(answered.length / 2) - 1] ?? null,
  };
}

const health = async (slug: string) =>
  (await consumer.api("GET", `/api/explore/apps/${slug}`, { auth: "" })).body.health;

describe("measured health on Explore (decision 081)", () => {
  let app = { slug: "", id: "" };

  it("says there are not enough calls yet below ten calls", async () => {
    app = await createLiveApp(creator, { name: "Health Probe", price_cents: 5 }, prompt);
    await fundWallet(consumer, 100);
    for (let i = 0; i < 3; i++)
      expect(
        (
          await consumer.api("POST", `/api/explore/apps/${app.slug}/try`, {
            body: { inputs: { name: "Ada" } },
          })
        ).status,
      ).toBe(200);
    expect(await health(app.slug)).toEqual({
      calls_30d: 3,
      enough_calls: false,
      uptime: null,
      error_rate: null,
      median_latency_ms: null,
    });
  });

  it("shows uptime, error rate and median latency equal to what the recorded calls say", async () => {
    const latencies = [120, 80, 1234, 640, 95, 2999, 300];
    for (const latencyMs of latencies) await record(app.id, { latencyMs });
    // Failures: two the app's (upstream), one the platform's, one the caller's payment.
    await record(app.id, { status: "error", errorType: "upstream_failed", latencyMs: 30_000 });
    await record(app.id, { status: "error", errorType: "upstream_timeout", latencyMs: 60_000 });
    await record(app.id, { status: "error", errorType: "internal_error", latencyMs: 5 });
    await record(app.id, { status: "error", errorType: "payment_failed", latencyMs: 2 });
    // Eval traffic is never counted, fast or failed.
    for (let i = 0; i < 5; i++) await record(app.id, { purpose: "eval", latencyMs: 7777 });
    await record(app.id, { purpose: "online_eval", latencyMs: 8888 });
    await record(app.id, {
      purpose: "online_eval",
      status: "error",
      errorType: "upstream_failed",
      latencyMs: 5,
    });

    const expected = await figuresFromInvocations(app.id);
    expect(expected.calls_30d).toBe(14);
    const shown = await health(app.slug);
    expect(shown).toEqual({
      ...expected,
      uptime: expect.closeTo(expected.uptime, 12),
      error_rate: expect.closeTo(expected.error_rate, 12),
    });
    expect(shown.error_rate).toBeCloseTo(4 / 14, 12);
    expect(shown.uptime).toBeCloseTo(1 - 3 / 14, 12);
    // The recorded latencies of answered calls, 3 real and 7 above: the median is the 5th of 10.
    expect(shown.median_latency_ms).toBe(expected.median_latency_ms);
    // Above a second the histogram keeps three significant digits: 1234 ms in 1230, 2999 ms in 2990.
    const buckets = await server.database.db
      .select({ latencyMs: appDailyLatency.latencyMs })
      .from(appDailyLatency)
      .where(eq(appDailyLatency.applicationId, app.id));
    const kept = new Set(buckets.map((row) => row.latencyMs));
    for (const bucket of [80, 95, 120, 300, 640, 1230, 2990])
      expect(kept.has(bucket), String(bucket)).toBe(true);
    // Failed calls and eval traffic add no bucket.
    for (const missing of [1234, 2999, 7770, 8880, 30_000, 60_000])
      expect(kept.has(missing), String(missing)).toBe(false);
  });

  it("reads the same figures after the day's shards are folded", async () => {
    const before = await health(app.slug);
    const tomorrow = utcDay(new Date(Date.now() + 86_400_000));
    await compactRollups(server.database.db, tomorrow);
    expect(await health(app.slug)).toEqual(before);
  });

  it("shows the figures on the Explore list too", async () => {
    const listed = await consumer.api("GET", "/api/explore/apps?q=Health%20Probe", { auth: "" });
    expect(listed.body.data[0].health).toEqual(await health(app.slug));
  });
});

describe("Explore's order (decision 081)", () => {
  const apps: Record<string, { slug: string; id: string }> = {};

  async function seedReviews(applicationId: string, ratings: number[]) {
    const { db } = server.database;
    for (const rating of ratings) {
      const tag = randomUUID();
      const [author] = await db
        .insert(users)
        .values({
          issuer: "https://seed.example",
          subject: tag,
          username: `seed-${tag}`,
          email: `${tag}@seed.example`,
        })
        .returning({ id: users.id });
      await db.insert(appReviews).values({ applicationId, authorId: author?.id ?? "", rating });
    }
  }

  const order = async (sort?: string) => {
    const answer = await consumer.api("GET", `/api/explore/apps?q=Rank${sort ? `&sort=${sort}` : ""}`, {
      auth: "",
    });
    expect(answer.status).toBe(200);
    return (answer.body.data as { name: string }[]).map((app) => app.name);
  };

  it("ranks by usage, Bayesian rating and freshness, and sorts by each", async () => {
    apps.popular = await createLiveApp(creator, { name: "Rank Popular", price_cents: 30 }, prompt);
    apps.loved = await createLiveApp(creator, { name: "Rank Loved", price_cents: 10 }, prompt);
    apps.once = await createLiveApp(creator, { name: "Rank One Review", price_cents: 20 }, prompt);
    apps.fresh = await createLiveApp(creator, { name: "Rank Fresh", price_cents: 1 }, prompt);
    // 50 callers, 200 calls in 30 days, no reviews.
    for (let i = 0; i < 200; i++) await record(apps.popular.id, { endUser: `caller-${i % 50}` });
    // 5 callers and 5 calls, five 5-star reviews; one 5-star review alone; nothing for the fresh one.
    for (let i = 0; i < 5; i++) await record(apps.loved.id, { endUser: `fan-${i}` });
    await seedReviews(apps.loved.id, [5, 5, 5, 5, 5]);
    await seedReviews(apps.once.id, [5]);

    // Recommended is the default: usage weighs most, then the rating pulled towards 3.5 stars.
    expect(await order()).toEqual(["Rank Popular", "Rank Loved", "Rank One Review", "Rank Fresh"]);
    expect(await order("recommended")).toEqual(await order());
    // One 5-star review does not beat five; unrated apps share the prior (then by slug).
    expect((await order("top_rated")).slice(0, 2)).toEqual(["Rank Loved", "Rank One Review"]);
    expect((await order("most_used")).slice(0, 2)).toEqual(["Rank Popular", "Rank Loved"]);
    expect(await order("newest")).toEqual(["Rank Fresh", "Rank One Review", "Rank Loved", "Rank Popular"]);
    expect(await order("price")).toEqual(["Rank Fresh", "Rank Loved", "Rank One Review", "Rank Popular"]);
  });

  it("shows each app's rating on the list", async () => {
    const listed = await consumer.api("GET", "/api/explore/apps?q=Rank&sort=top_rated", { auth: "" });
    const loved = listed.body.data.find((app: { slug: string }) => app.slug === apps.loved?.slug);
    expect(loved.rating).toEqual({ average: 5, count: 5 });
    expect(loved.health.calls_30d).toBe(5);
    const reviewsLeft = await server.database.db
      .select({ id: appReviews.id })
      .from(appReviews)
      .where(and(inArray(appReviews.applicationId, [apps.loved?.id ?? "", apps.once?.id ?? ""])));
    expect(reviewsLeft).toHaveLength(6);
  });
});
