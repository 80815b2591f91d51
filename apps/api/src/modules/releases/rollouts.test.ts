import { and, eq, sql } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { appLabelMoves, applications, experiments, invocations } from "../../db/schema/index.ts";
import { lookupCache } from "../../lib/lookup-cache.ts";
import { fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { runRolloutSteps, stepRollout } from "./rollouts.service.ts";
import { armOf, BUCKETS, bucketOf, chooseVersion } from "./serving.ts";

// Guarded rollouts (docs/decisions/077): a candidate's share grows by steps within bounds, and
// rolls back by itself on a breach; a rollout is an experiment with a schedule.
const { server, vendor } = useVendorServer({ OPENAI_API_KEY: "sk-vendor-test" });
const creator = useCaller(server, "Rollout Creator");
const consumer = useCaller(server, "Rollout Consumer");
const stranger = useCaller(server, "Rollout Stranger");
const FEE = { feePercent: 10 };
const MINUTE = 60_000;

beforeAll(async () => {
  await fundWallet(consumer, 100_000);
});
beforeEach(() => vendor.set({ kind: "scripted" }));

/** A live app whose production is v2 (`first`), with a saved v3 (`second`) not yet released. */
async function liveApp(first = "first: {{query}}", second = "second: {{query}}") {
  const { slug } = await createLiveApp(
    creator,
    { price_cents: 25 },
    { model: "gpt-4-turbo", prompt_template: first, changelog: "v2" },
  );
  await creator.api("PATCH", `/api/app/${slug}/prompt/`, { body: { prompt_template: second } });
  const config = await creator.api("GET", `/api/app/${slug}/prompt/`);
  expect(config.body).toMatchObject({ production_version: 2, current_version: 3 });
  const [app] = await server.database.db.select().from(applications).where(eq(applications.slug, slug));
  if (!app) throw new Error("no app");
  return { slug, promptId: config.body.id as string, app };
}

function call(slug: string, user: string) {
  return consumer.api("POST", `/api/app/${slug}/completion-messages`, {
    body: { inputs: {}, query: "hello", response_mode: "blocking", user },
  });
}

function startRollout(promptId: string, body: Record<string, unknown>) {
  return creator.api("POST", `/api/prompts/${promptId}/rollouts`, { body });
}

/** Calls as distinct end users until the candidate has `each` calls; answers every call's version. */
async function callUntilCandidate(slug: string, prefix: string, each: number, candidate = 3) {
  const served: { user: string; version: number }[] = [];
  for (let i = 0; i < 300 && served.filter((s) => s.version === candidate).length < each; i++) {
    const user = `${prefix}-${i}`;
    const answer = await call(slug, user);
    served.push({ user, version: Number(answer.headers.get("promptmint-version")?.slice(1)) });
  }
  return served;
}

/** A tick of the stepper with the clock `minutes` ahead. */
function tick(app: typeof applications.$inferSelect, id: string, minutes: number) {
  return stepRollout(server.database.db, app, id, {
    ...FEE,
    now: () => new Date(Date.now() + minutes * MINUTE),
  });
}

/** The app's rollout events in the event log (decision 068), oldest first. */
async function rolloutEvents(appId: string) {
  return queryRows<{ id: string; type: string; data: Record<string, unknown> }>(
    server.database.db,
    sql`select id, type, data from events
        where application_id = ${appId} and type like 'release.rollout.%' order by seq`,
  );
}

async function productionOf(promptId: string) {
  const labels = await creator.api("GET", `/api/prompts/${promptId}/labels/`);
  return labels.body.labels.find((l: { name: string }) => l.name === "production")?.version;
}

describe("guarded rollouts", () => {
  it("refuses a bad start by field: steps, bounds, the version, another experiment running", async () => {
    const { promptId } = await liveApp();
    const bad = async (body: Record<string, unknown>, field: RegExp, status = 400) => {
      const answer = await startRollout(promptId, body);
      expect(answer.status).toBe(status);
      if (status === 400) expect(Object.keys(answer.body.fields ?? {}).join(" ")).toMatch(field);
      return answer;
    };
    await bad({ version: 3, steps: [5, 5, 100], bounds: {} }, /^steps/);
    await bad({ version: 3, steps: [25, 5, 100], bounds: {} }, /^steps/);
    await bad({ version: 3, steps: [5, 25, 90], bounds: {} }, /^steps/);
    await bad({ version: 3, steps: [100], bounds: {} }, /^steps$/);
    await bad({ version: 3, steps: [0, 100], bounds: {} }, /^steps/);
    await bad({ version: 3, bounds: { max_error_rate: 2 } }, /bounds\.max_error_rate/);
    await bad({ version: 3, bounds: { max_latency_p95_ms: 0 } }, /bounds\.max_latency_p95_ms/);
    await bad({ version: 3, bounds: { min_online_score: -0.1 } }, /bounds\.min_online_score/);
    await bad({ version: 3, bounds: { min_calls: 0 } }, /bounds\.min_calls/);
    await bad({ version: 3, step_minutes: 0, bounds: {} }, /step_minutes/);
    await bad({ version: 3, bounds: {}, surprise: true }, /surprise/);
    await bad({ version: 3, bounds: { surprise: 1 } }, /bounds/);
    const same = await bad({ version: 2, bounds: {} }, /^version$/);
    expect(same.body.fields.version).toMatch(/already production/);
    const unknown = await bad({ version: 9, bounds: {} }, /^version$/);
    expect(unknown.body.fields.version).toMatch(/no version v9/);

    // The eval gate judges the candidate as a promotion would: refused by name while it is on.
    const gate = (on: boolean) =>
      creator.api("PATCH", `/api/prompts/${promptId}/evals/settings`, { body: { require_passing_eval: on } });
    expect((await gate(true)).status).toBe(200);
    const gated = await bad({ version: 3, bounds: {} }, /./, 409);
    expect(gated.body.fields.version).toContain("v3 cannot serve paid calls");
    expect(gated.body.message).toContain("no passing eval run");
    expect((await gate(false)).status).toBe(200);

    const started = await startRollout(promptId, { version: 3, bounds: {} });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({
      status: "running",
      control_version: 2,
      arms: [
        { version: 2, percent: 95 },
        { version: 3, percent: 5 },
      ],
      rollout: {
        status: "running",
        from_version: 2,
        to_version: 3,
        steps: [5, 25, 100],
        step_index: 0,
        percent: 5,
        step_minutes: 60,
        bounds: { min_calls: 20 },
        history: [{ action: "start", percent: 5 }],
      },
    });
    // A second rollout, or an experiment, while one runs: 409.
    await bad({ version: 3, bounds: {} }, /./, 409);
    const experiment = await creator.api("POST", `/api/prompts/${promptId}/experiments/`, {
      body: {
        arms: [
          { version: 2, percent: 50 },
          { version: 3, percent: 50 },
        ],
      },
    });
    expect(experiment.status).toBe(409);
    // The experiment list shows the rollout as the running experiment, with its schedule.
    const list = await creator.api("GET", `/api/prompts/${promptId}/experiments/`);
    expect(list.body.running.rollout).toMatchObject({ percent: 5, to_version: 3 });
    expect((await creator.api("POST", `/api/prompts/${promptId}/rollouts/current/stop`)).status).toBe(200);
  });

  it("advances within its bounds step by step, holds without enough calls, and completes by promoting the candidate", async () => {
    const { slug, promptId, app } = await liveApp();
    const started = await startRollout(promptId, {
      version: 3,
      steps: [20, 60, 100],
      step_minutes: 10,
      bounds: {
        max_error_rate: 0.5,
        min_margin_micros: -1_000_000,
        max_latency_p95_ms: 60_000,
        min_calls: 3,
      },
    });
    expect(started.status).toBe(201);
    const id = started.body.id as string;
    const db = server.database.db;

    // Not due yet: nothing happens. Due without calls: held, once per step.
    expect(await tick(app, id, 0)).toBe("waiting");
    expect(await tick(app, id, 11)).toBe("held");
    expect(await tick(app, id, 12)).toBe("held");
    let [row] = await db.select().from(experiments).where(eq(experiments.id, id));
    expect(row?.rollout?.history.map((h) => h.action)).toEqual(["start", "hold"]);
    expect(row?.rollout?.history[1]?.reason).toMatch(/0 of 3 candidate calls/);

    // The served header follows the split: each caller's version is the arm its bucket holds.
    const first = await callUntilCandidate(slug, "adv", 3);
    for (const { user, version } of first)
      expect(version).toBe(armOf(started.body.arms, bucketOf(id, `user:${user}`)).version);
    // Prime this process's cache with the 20% split, then advance: it must forget it at once.
    await chooseVersion(db, app, { stickyKey: { endUser: "prime", account: "a" } });
    const cached = lookupCache<{ arms: unknown } | null>(db, "prompts");
    expect(cached.peek(`experiment:${app.id}`)?.arms).toEqual(started.body.arms);
    expect(await tick(app, id, 11)).toBe("advanced");
    // Forgotten by the stepper itself as it returns, not only when the change feed's notice comes.
    expect(cached.peek(`experiment:${app.id}`)).toBeUndefined();
    [row] = await db.select().from(experiments).where(eq(experiments.id, id));
    expect(row?.arms).toEqual([
      { version: 2, percent: 40 },
      { version: 3, percent: 60 },
    ]);
    expect(row?.rollout).toMatchObject({ step_index: 1, percent: 60, status: "running" });
    const newArms = row?.arms ?? [];
    const users = Array.from({ length: 200 }, (_, i) => `fresh-${i}`);
    for (const user of users) {
      const chosen = await chooseVersion(db, app, { stickyKey: { endUser: user, account: "a" } });
      expect((chosen.pin as { version: number }).version).toBe(
        armOf(newArms, bucketOf(id, `user:${user}`)).version,
      );
    }
    // Sticky as the share grows: every caller on the candidate at 20% is still on it at 60%.
    for (const { user, version } of first)
      if (version === 3) expect((await call(slug, user)).headers.get("promptmint-version")).toBe("v3");
    // Real calls at 60% carry the header of their arm under the new split.
    const second = await callUntilCandidate(slug, "adv60", 3);
    for (const { user, version } of second)
      expect(version).toBe(armOf(newArms, bucketOf(id, `user:${user}`)).version);

    // The step's time is up again (from the advance's clock): completed, production moved to v3.
    expect(await tick(app, id, 11)).toBe("waiting");
    expect(await tick(app, id, 22)).toBe("completed");
    [row] = await db.select().from(experiments).where(eq(experiments.id, id));
    expect(row).toMatchObject({ status: "ended", outcome: "promoted", winnerVersion: 3 });
    expect(row?.rollout).toMatchObject({ status: "completed", percent: 100, next_step_at: null });
    expect(row?.rollout?.history.map((h) => h.action)).toEqual(["start", "hold", "advance", "complete"]);
    expect(await productionOf(promptId)).toBe(3);
    const [move] = await db
      .select()
      .from(appLabelMoves)
      .where(eq(appLabelMoves.applicationId, app.id))
      .orderBy(sql`${appLabelMoves.createdAt} desc`)
      .limit(1);
    expect(move).toMatchObject({ name: "production", fromVersion: 2, toVersion: 3, actorId: null });
    expect(move?.reason).toMatch(/Rollout completed: v3 promoted/);
    expect((await call(slug, "after-complete")).headers.get("promptmint-version")).toBe("v3");
    const logged = await rolloutEvents(app.id);
    expect(logged.map((e) => e.type)).toEqual([
      "release.rollout.started",
      "release.rollout.advanced",
      "release.rollout.completed",
    ]);
    expect(logged[1]?.data).toMatchObject({ experiment_id: id, from_version: 2, to_version: 3, percent: 60 });
    // Ended: the stepper leaves it alone.
    expect(await tick(app, id, 60)).toBe("gone");
  });

  it("advances now when its creator asks, judged by the same bounds: too few calls is a 409, a breach rolls back", async () => {
    const { slug, promptId } = await liveApp();
    const started = await startRollout(promptId, {
      version: 3,
      steps: [20, 60, 100],
      step_minutes: 600,
      bounds: { max_error_rate: 0.5, min_calls: 2 },
    });
    expect(started.status).toBe(201);
    const advance = () =>
      creator.api("POST", `/api/prompts/${promptId}/rollouts/current/advance`, { body: {} });
    const early = await advance();
    expect(early.status).toBe(409);
    expect(early.body.message).toMatch(/0 of 2 candidate calls/);
    expect(
      (await stranger.api("POST", `/api/prompts/${promptId}/rollouts/current/advance`, { body: {} })).status,
    ).toBe(404);
    await callUntilCandidate(slug, "advance", 2);
    const advanced = await advance();
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200);
    expect(advanced.body).toMatchObject({
      status: "running",
      rollout: { status: "running", percent: 60, step_index: 1 },
    });
    expect(advanced.body.arms).toEqual([
      { version: 2, percent: 40 },
      { version: 3, percent: 60 },
    ]);
    // The next step starts counting its own calls: the step's time (10 hours) is not waited for.
    expect((await advance()).status).toBe(409);
    await callUntilCandidate(slug, "advance-2", 2);
    const completed = await advance();
    expect(completed.body).toMatchObject({
      status: "ended",
      outcome: "promoted",
      rollout: { status: "completed" },
    });
    expect(await productionOf(promptId)).toBe(3);
    expect((await advance()).status).toBe(404);

    // A dear candidate asked to advance is rolled back, not advanced.
    const dear = await liveApp("first: {{query}}", "[model words=3000] second: {{query}}");
    const rolling = await startRollout(dear.promptId, {
      version: 3,
      steps: [50, 100],
      step_minutes: 600,
      bounds: { min_margin_micros: 200_000, min_calls: 2 },
    });
    expect(rolling.status).toBe(201);
    await callUntilCandidate(dear.slug, "dear", 2);
    const judged = await creator.api("POST", `/api/prompts/${dear.promptId}/rollouts/current/advance`, {
      body: {},
    });
    expect(judged.body).toMatchObject({
      status: "ended",
      outcome: "rolled_back",
      rollout: { status: "rolled_back" },
    });
    expect(await productionOf(dear.promptId)).toBe(2);
  });

  it("rolls back by itself when the candidate's margin per call breaches its bound", async () => {
    // v3 answers in 3,000 words: its model cost eats most of the 25¢ price.
    const { slug, promptId, app } = await liveApp("first: {{query}}", "[model words=3000] second: {{query}}");
    const started = await startRollout(promptId, {
      version: 3,
      steps: [50, 100],
      bounds: { min_margin_micros: 200_000, min_calls: 3 },
    });
    expect(started.status).toBe(201);
    await callUntilCandidate(slug, "margin", 3);
    const [dear] = await server.database.db
      .select({ margin: sql<number>`avg(charged_cents * 10000 - fee_micros - model_cost_micros)::float8` })
      .from(invocations)
      .where(and(eq(invocations.experimentId, started.body.id), eq(invocations.appVersion, 3)));
    expect(dear?.margin).toBeLessThan(200_000);
    // A breach does not wait for the step's time.
    expect(await tick(app, started.body.id, 0)).toBe("rolled_back");
    const [row] = await server.database.db
      .select()
      .from(experiments)
      .where(eq(experiments.id, started.body.id));
    expect(row).toMatchObject({ status: "ended", outcome: "rolled_back" });
    expect(row?.rollout?.status).toBe("rolled_back");
    expect(row?.endReason).toMatch(/v3's margin per call -?\d+ µ\$ is below 200000 µ\$/);
    expect(row?.rollout?.history.at(-1)).toMatchObject({ action: "rollback", percent: 0 });
    expect(await productionOf(promptId)).toBe(2);
    expect((await call(slug, "margin-0")).headers.get("promptmint-version")).toBe("v2");
    for (let i = 0; i < 5; i++)
      expect((await call(slug, `after-margin-${i}`)).headers.get("promptmint-version")).toBe("v2");
    expect((await rolloutEvents(app.id)).map((e) => e.type)).toEqual([
      "release.rollout.started",
      "release.rollout.rolled_back",
    ]);
  });

  it("rolls back by itself on an error-rate breach, and holds while it has too few calls", async () => {
    const { slug, promptId, app } = await liveApp("first: {{query}}", "[model fail=500] second: {{query}}");
    const started = await startRollout(promptId, {
      version: 3,
      steps: [50, 100],
      step_minutes: 5,
      bounds: { max_error_rate: 0.2, min_calls: 4 },
    });
    expect(started.status).toBe(201);
    await callUntilCandidate(slug, "err", 2);
    // Too few candidate calls: no judgement yet, and time up means a hold, never an advance.
    expect(await tick(app, started.body.id, 6)).toBe("held");
    await callUntilCandidate(slug, "err-more", 4);
    expect(
      (await runRolloutSteps(server.database.db, { ...FEE })).filter((o) => o === "rolled_back"),
    ).toHaveLength(1);
    const [row] = await server.database.db
      .select()
      .from(experiments)
      .where(eq(experiments.id, started.body.id));
    expect(row?.endReason).toMatch(/v3's error rate 100\.0% is above 20\.0%/);
    expect(row?.rollout?.history.map((h) => h.action)).toEqual(["start", "hold", "rollback"]);
    expect(await productionOf(promptId)).toBe(2);
  });

  it("is stopped by its creator: production back to where it rolled out from", async () => {
    const { slug, promptId, app } = await liveApp();
    const started = await startRollout(promptId, { version: 3, steps: [50, 100], bounds: { min_calls: 1 } });
    expect(started.status).toBe(201);
    const stopped = await creator.api("POST", `/api/prompts/${promptId}/rollouts/current/stop`, {
      body: { reason: "changed my mind" },
    });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({
      status: "ended",
      outcome: "rolled_back",
      end_reason: "changed my mind",
      rollout: { status: "stopped", percent: 0, next_step_at: null },
    });
    expect(stopped.body.rollout.history.at(-1)).toMatchObject({ action: "stop", reason: "changed my mind" });
    expect((await creator.api("POST", `/api/prompts/${promptId}/rollouts/current/stop`)).status).toBe(404);
    expect(await productionOf(promptId)).toBe(2);
    for (let i = 0; i < 6; i++)
      expect((await call(slug, `stopped-${i}`)).headers.get("promptmint-version")).toBe("v2");
    expect((await rolloutEvents(app.id)).map((e) => e.type)).toEqual([
      "release.rollout.started",
      "release.rollout.stopped",
    ]);
    // Another creator's app is a 404 to a stranger, for a start and a stop alike.
    const foreign = await stranger.api("POST", `/api/prompts/${promptId}/rollouts`, {
      body: { version: 3, bounds: {} },
    });
    expect(foreign.status).toBe(404);
    expect((await stranger.api("POST", `/api/prompts/${promptId}/rollouts/current/stop`)).status).toBe(404);
  });

  it("ends with its experiment when that is ended by another path (the experiments' stop or promote)", async () => {
    const { promptId, app } = await liveApp();
    const first = await startRollout(promptId, { version: 3, steps: [50, 100], bounds: {} });
    const stopped = await creator.api("POST", `/api/prompts/${promptId}/experiments/${first.body.id}/stop`, {
      body: { reason: "ended from the experiments page" },
    });
    expect(stopped.status).toBe(200);
    expect(stopped.body.experiment.rollout).toMatchObject({
      status: "stopped",
      percent: 0,
      next_step_at: null,
    });
    expect(stopped.body.experiment.rollout.history.at(-1)).toMatchObject({
      action: "stop",
      reason: "ended from the experiments page",
    });
    expect(Number.isNaN(Date.parse(stopped.body.experiment.rollout.history.at(-1).at))).toBe(false);

    const second = await startRollout(promptId, { version: 3, steps: [50, 100], bounds: {} });
    const promoted = await creator.api(
      "POST",
      `/api/prompts/${promptId}/experiments/${second.body.id}/promote`,
      {
        body: { version: 3 },
      },
    );
    expect(promoted.status).toBe(200);
    expect(promoted.body.experiment.rollout).toMatchObject({ status: "completed", percent: 100 });
    expect(await productionOf(promptId)).toBe(3);
    // The stepper no longer sees either; each end is one event.
    expect(await runRolloutSteps(server.database.db, FEE)).toEqual([]);
    expect((await rolloutEvents(app.id)).map((e) => e.type)).toEqual([
      "release.rollout.started",
      "release.rollout.stopped",
      "release.rollout.started",
      "release.rollout.completed",
    ]);
  });

  it("advances a step once when two stepper ticks race", async () => {
    const { slug, promptId, app } = await liveApp();
    const started = await startRollout(promptId, {
      version: 3,
      steps: [50, 75, 100],
      step_minutes: 1,
      bounds: { min_calls: 1 },
    });
    await callUntilCandidate(slug, "race", 1);
    const clock = { ...FEE, now: () => new Date(Date.now() + 2 * MINUTE) };
    const db = server.database.db;
    const outcomes = await Promise.all([
      stepRollout(db, app, started.body.id, clock),
      stepRollout(db, app, started.body.id, clock),
    ]);
    expect(outcomes.sort()).toEqual(["advanced", "waiting"]);
    const [row] = await db.select().from(experiments).where(eq(experiments.id, started.body.id));
    expect(row?.rollout?.history.filter((h) => h.action === "advance")).toHaveLength(1);
    expect(row?.rollout?.percent).toBe(75);
    expect((await rolloutEvents(app.id)).filter((e) => e.type === "release.rollout.advanced")).toHaveLength(
      1,
    );
  });

  it("keeps every caller already on the candidate there as its share grows (cumulative sticky buckets)", () => {
    const shares = [1, 5, 10, 25, 50, 75, 99];
    let flipped = 0;
    const onCandidateAt = shares.map(() => 0);
    for (let bucket = 0; bucket < BUCKETS; bucket++) {
      let onCandidate = false;
      shares.forEach((share, i) => {
        const arm = armOf(
          [
            { version: 1, percent: 100 - share },
            { version: 2, percent: share },
          ],
          bucket,
        );
        if (onCandidate && arm.version !== 2) flipped += 1;
        onCandidate = arm.version === 2;
        if (onCandidate) onCandidateAt[i] = (onCandidateAt[i] as number) + 1;
      });
    }
    expect(flipped).toBe(0);
    // Exact to the bucket: share% of the 10,000 buckets are the candidate's.
    expect(onCandidateAt).toEqual(shares.map((share) => share * 100));
  });
});
