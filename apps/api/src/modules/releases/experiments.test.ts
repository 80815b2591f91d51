import { and, eq, gte, sql } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { appLabelMoves, applications, invocations } from "../../db/schema/index.ts";
import { fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { expectServingTruth } from "../../test/serving-truth.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { runExperimentRules } from "./experiment-rules.ts";
import { chooseVersion } from "./serving.ts";

// Experiments (docs/decisions/058): production traffic split between versions, sticky per caller,
// judged per arm by revenue and margin, ended by rules or one click.
const { server, vendor } = useVendorServer({ OPENAI_API_KEY: "sk-vendor-test" });
const creator = useCaller(server, "Experiment Creator");
const consumer = useCaller(server, "Experiment Consumer");
const stranger = useCaller(server, "Experiment Stranger");
const FEE = { feePercent: 10 };

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

function call(slug: string, user: string, pin?: string) {
  return consumer.api("POST", `/api/app/${slug}/completion-messages`, {
    body: { inputs: {}, query: "hello", response_mode: "blocking", user },
    headers: pin ? { "promptmint-version": pin } : {},
  });
}

function start(promptId: string, body: Record<string, unknown>) {
  return creator.api("POST", `/api/prompts/${promptId}/experiments/`, { body });
}

/** Calls as distinct end users until every arm has at least `each` calls. */
async function callUntil(slug: string, prefix: string, each: number, versions: number[]) {
  const counts = new Map<number, number>(versions.map((v) => [v, 0]));
  for (let i = 0; i < 400 && [...counts.values()].some((n) => n < each); i++) {
    const answer = await call(slug, `${prefix}-${i}`);
    const served = Number(answer.headers.get("promptmint-version")?.slice(1));
    counts.set(served, (counts.get(served) ?? 0) + 1);
  }
  return counts;
}

describe("experiments", () => {
  it("gives every caller what GET serving says, and moves production during an experiment only by ending it", async () => {
    const { slug, promptId } = await liveApp();
    await expectServingTruth({
      creator,
      base: `/api/prompts/${promptId}`,
      call: (user) => call(slug, user),
      prefix: "truth",
    });
  });

  it("splits callers by the stated percents, the same caller always on the same arm, with no query per call", async () => {
    const { slug, promptId, app } = await liveApp();
    const started = await start(promptId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
    });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ status: "running", control_version: 2, sticky_by: null });

    // 1,000 simulated callers (end users) through the serving path itself.
    const db = server.database.db;
    const choose = (user: string) =>
      chooseVersion(db, app, { stickyKey: { endUser: user, account: "consumer" } }).then((chosen) => {
        expect(chosen.experimentId).toBe(started.body.id);
        return (chosen.pin as { version: number }).version;
      });
    const arms = await Promise.all(Array.from({ length: 1000 }, (_, i) => choose(`caller-${i}`)));
    const onV3 = arms.filter((v) => v === 3).length;
    expect(onV3).toBeGreaterThanOrEqual(450);
    expect(onV3).toBeLessThanOrEqual(550);
    // Sticky: asking again gives every caller the same arm.
    const again = await Promise.all(Array.from({ length: 1000 }, (_, i) => choose(`caller-${i}`)));
    expect(again).toEqual(arms);

    // The cached experiment costs the paid path no query while nothing changes.
    const selects = vi.spyOn(db, "select");
    const executes = vi.spyOn(db, "execute");
    for (let i = 0; i < 100; i++) await choose(`caller-${i}`);
    expect(selects).not.toHaveBeenCalled();
    expect(executes).not.toHaveBeenCalled();
    selects.mockRestore();
    executes.mockRestore();

    // Real calls: each answer names the arm the serving path chose, every time.
    for (let i = 0; i < 12; i++) {
      const first = await call(slug, `caller-${i}`);
      expect(first.status).toBe(200);
      expect(first.headers.get("promptmint-version")).toBe(`v${arms[i]}`);
      expect((await call(slug, `caller-${i}`)).headers.get("promptmint-version")).toBe(`v${arms[i]}`);
    }
    const recorded = await db
      .select({
        version: invocations.appVersion,
        experiment: invocations.experimentId,
        user: invocations.endUser,
      })
      .from(invocations)
      .where(eq(invocations.applicationId, app.id));
    expect(recorded.filter((row) => row.experiment === started.body.id)).toHaveLength(24);

    // 90/10: within a binomial 4σ bound (n = 1000, p = 0.1: σ ≈ 9.5).
    const stopped = await creator.api("POST", `/api/prompts/${promptId}/experiments/${started.body.id}/stop`);
    expect(stopped.status).toBe(200);
    expect(stopped.body.experiment).toMatchObject({ status: "ended", outcome: "stopped" });
    const skewed = await start(promptId, {
      arms: [
        { version: 2, percent: 90 },
        { version: 3, percent: 10 },
      ],
      sticky_by: "key",
    });
    expect(skewed.status).toBe(201);
    const tenth = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        chooseVersion(db, app, { stickyKey: { endUser: "same", apiKeyId: `key-${i}`, account: "a" } }),
      ),
    );
    const small = tenth.filter((c) => (c.pin as { version: number }).version === 3).length;
    const sigma = Math.sqrt(1000 * 0.1 * 0.9);
    expect(Math.abs(small - 100)).toBeLessThanOrEqual(4 * sigma);
    await creator.api("POST", `/api/prompts/${promptId}/experiments/${skewed.body.id}/stop`);
  });

  it("sums its arms' charges exactly to the app's over the window, and a pin overrides the experiment", async () => {
    const { slug, promptId, app } = await liveApp();
    const started = await start(promptId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
      rules: { min_calls: 10 },
    });
    expect(started.status).toBe(201);
    const counts = await callUntil(slug, "sum", 6, [2, 3]);
    expect(counts.get(2)).toBeGreaterThanOrEqual(6);

    // A pinned call gets its pin and is no arm's.
    const pinned = await call(slug, "sum-0", "v3");
    expect(pinned.headers.get("promptmint-version")).toBe("v3");
    const pinnedToo = await call(slug, "sum-1", "v2");
    expect(pinnedToo.headers.get("promptmint-version")).toBe("v2");

    const detail = await creator.api("GET", `/api/prompts/${promptId}/experiments/${started.body.id}`);
    expect(detail.status).toBe(200);
    const arms = detail.body.arms as {
      version: number;
      calls: number;
      revenue_micros: number;
      fee_micros: number;
      model_cost_micros: number;
      margin_micros: number;
    }[];
    const db = server.database.db;
    const [window] = await db
      .select({
        charged: sql<string>`coalesce(sum(${invocations.chargedCents}), 0)::text`,
        fee: sql<string>`coalesce(sum(${invocations.feeMicros}), 0)::text`,
        cost: sql<string>`coalesce(sum(${invocations.modelCostMicros}), 0)::text`,
        calls: sql<number>`count(*)::int`,
      })
      .from(invocations)
      .where(
        and(
          eq(invocations.applicationId, app.id),
          gte(invocations.createdAt, new Date(started.body.started_at)),
          sql`${invocations.experimentId} is not distinct from ${started.body.id}::uuid`,
        ),
      );
    const sum = (key: keyof (typeof arms)[number]) => arms.reduce((total, arm) => total + arm[key], 0);
    expect(sum("calls")).toBe(window?.calls);
    expect(sum("revenue_micros")).toBe(Number(window?.charged) * 10_000);
    expect(sum("fee_micros")).toBe(Number(window?.fee));
    expect(sum("model_cost_micros")).toBe(Number(window?.cost));
    expect(sum("margin_micros")).toBe(sum("revenue_micros") - sum("fee_micros") - sum("model_cost_micros"));
    // And the app's whole window: the arms plus the two pinned calls, exactly.
    const [all] = await db
      .select({ charged: sql<string>`coalesce(sum(${invocations.chargedCents}), 0)::text` })
      .from(invocations)
      .where(
        and(
          eq(invocations.applicationId, app.id),
          gte(invocations.createdAt, new Date(started.body.started_at)),
        ),
      );
    expect(Number(all?.charged) * 10_000).toBe(sum("revenue_micros") + 2 * 25 * 10_000);
    expect(sum("revenue_micros")).toBe(sum("calls") * 25 * 10_000);

    // Figures per arm, honest about noise: below min_calls no test is shown.
    expect(detail.body.comparisons).toHaveLength(1);
    expect(detail.body.series.length).toBeGreaterThanOrEqual(2);
    const rolled = await creator.api(
      "POST",
      `/api/prompts/${promptId}/experiments/${started.body.id}/rollback`,
    );
    expect(rolled.body.experiment).toMatchObject({ outcome: "rolled_back" });
  });

  it("refuses a second running experiment (409), bad splits, missing versions and arms with other inputs by name", async () => {
    const { promptId, slug } = await liveApp();
    const arms = [
      { version: 2, percent: 60 },
      { version: 3, percent: 40 },
    ];
    const bad = await start(promptId, {
      arms: [
        { version: 2, percent: 60 },
        { version: 3, percent: 30 },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/arms percents must sum to 100 \(they sum to 90\)/);
    const twice = await start(promptId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 2, percent: 50 },
      ],
    });
    expect(twice.status).toBe(400);
    expect(twice.body.fields).toHaveProperty(["arms.1.version"]);
    const missing = await start(promptId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 9, percent: 50 },
      ],
    });
    expect(missing.status).toBe(400);
    expect(missing.body.fields["arms.1.version"]).toMatch(/no version v9/);
    const one = await start(promptId, { arms: [{ version: 2, percent: 100 }] });
    expect(one.status).toBe(400);

    // v4 takes another input: it cannot share callers with v2.
    await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: {
        prompt_template: "{{topic}}",
        input_schema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
      },
    });
    const otherInputs = await start(promptId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 4, percent: 50 },
      ],
    });
    expect(otherInputs.status).toBe(400);
    expect(otherInputs.body.fields["arms.1.version"]).toMatch(/v4 takes other inputs than v2/);

    expect((await start(promptId, { arms })).status).toBe(201);
    const second = await start(promptId, { arms });
    expect(second.status).toBe(409);
    expect(second.body.message).toMatch(/already has a running experiment/);
    // Nobody else sees or starts them.
    expect((await stranger.api("GET", `/api/prompts/${promptId}/experiments/`)).status).toBe(404);
    expect(
      (await stranger.api("POST", `/api/prompts/${promptId}/experiments/`, { body: { arms } })).status,
    ).toBe(404);
    const list = await creator.api("GET", `/api/prompts/${promptId}/experiments/`);
    expect(list.body.running).toMatchObject({ arms, status: "running" });
    await creator.api("POST", `/api/prompts/${promptId}/experiments/${list.body.running.id}/stop`);
    const ended = await creator.api(
      "POST",
      `/api/prompts/${promptId}/experiments/${list.body.running.id}/stop`,
    );
    expect(ended.status).toBe(409);
  });

  it("rolls back by its rules when an arm errs, returning production to the control with an audit row", async () => {
    const { slug, promptId } = await liveApp("first: {{query}}", "[model fail=500] second: {{query}}");
    const started = await start(promptId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
      rules: { min_calls: 10, max_error_rate: 0.2 },
    });
    expect(started.status).toBe(201);
    // Moving production meanwhile is refused while the experiment splits the callers (decision 075).
    const moved = await creator.api("PUT", `/api/prompts/${promptId}/labels/production`, {
      body: { version: 3 },
    });
    expect(moved.status).toBe(409);
    expect(moved.body.code).toBe("experiment_running");
    const counts = await callUntil(slug, "err", 10, [2, 3]);
    expect(counts.get(3)).toBeGreaterThanOrEqual(10);
    const detail = await creator.api("GET", `/api/prompts/${promptId}/experiments/${started.body.id}`);
    const failing = detail.body.arms.find((arm: { version: number }) => arm.version === 3);
    expect(failing.success_rate).toBe(0);
    expect(failing.revenue_micros).toBe(0);
    expect(failing.refunded_calls).toBe(failing.calls);

    expect(await runExperimentRules(server.database.db, FEE)).toBeGreaterThanOrEqual(1);
    const after = await creator.api("GET", `/api/prompts/${promptId}/experiments/${started.body.id}`);
    expect(after.body.experiment).toMatchObject({
      status: "ended",
      outcome: "rolled_back",
      winner_version: null,
    });
    expect(after.body.experiment.end_reason).toMatch(/v3's error rate 100\.0% is above 20\.0%/);
    const labels = await creator.api("GET", `/api/prompts/${promptId}/labels/`);
    expect(labels.body.labels).toContainEqual(expect.objectContaining({ name: "production", version: 2 }));
    // Production never left the control: the refused move wrote nothing, so neither did the rollback.
    const moves = await server.database.db
      .select()
      .from(appLabelMoves)
      .where(
        eq(appLabelMoves.applicationId, sql`(select application_id from prompts where id = ${promptId})`),
      )
      .orderBy(sql`${appLabelMoves.createdAt} desc`);
    expect(moves.filter((m) => m.name === "production" && m.toVersion === 3)).toEqual([]);
    // Callers are back on production, without the experiment.
    const back = await call(slug, "err-after");
    expect(back.headers.get("promptmint-version")).toBe("v2");
  });

  it("promotes a significant winner by margin after N calls, never one without significance", async () => {
    // v3 answers in 3 words, v2 in 300: the same price, so v3 keeps more of it.
    const { slug, promptId } = await liveApp(
      "[model words=300] first: {{query}}",
      "[model words=3] second: {{query}}",
    );
    const started = await start(promptId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
      rules: { min_calls: 10, promote_winner_after_calls: 10 },
    });
    expect(started.status).toBe(201);
    await callUntil(slug, "win", 4, [2, 3]);
    // Not enough calls yet: no test, no winner.
    const early = await creator.api("GET", `/api/prompts/${promptId}/experiments/${started.body.id}`);
    expect(early.body.comparisons[0]).toMatchObject({ verdict: "not_enough_calls", margin_per_call: null });
    expect(await runExperimentRules(server.database.db, FEE)).toBe(0);

    await callUntil(slug, "win", 10, [2, 3]);
    const ready = await creator.api("GET", `/api/prompts/${promptId}/experiments/${started.body.id}`);
    const comparison = ready.body.comparisons[0];
    expect(comparison).toMatchObject({
      version: 3,
      control_version: 2,
      enough_calls: true,
      verdict: "better",
    });
    expect(comparison.margin_per_call.p_value).toBeLessThan(0.05);
    expect(comparison.margin_per_call.difference).toBeGreaterThan(0);

    expect(await runExperimentRules(server.database.db, FEE)).toBe(1);
    const after = await creator.api("GET", `/api/prompts/${promptId}/experiments/${started.body.id}`);
    expect(after.body.experiment).toMatchObject({ outcome: "promoted", winner_version: 3 });
    const labels = await creator.api("GET", `/api/prompts/${promptId}/labels/`);
    expect(labels.body.labels).toContainEqual(expect.objectContaining({ name: "production", version: 3 }));
    expect(labels.body.moves[0]).toMatchObject({ name: "production", from_version: 2, to_version: 3 });
    expect((await call(slug, "win-after")).headers.get("promptmint-version")).toBe("v3");
  });

  it("promotes an arm or rolls back in one click, each audited", async () => {
    const { promptId, slug } = await liveApp();
    const started = await start(promptId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
    });
    const wrong = await creator.api(
      "POST",
      `/api/prompts/${promptId}/experiments/${started.body.id}/promote`,
      {
        body: { version: 1 },
      },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.fields.version).toMatch(/v2, v3/);
    const promoted = await creator.api(
      "POST",
      `/api/prompts/${promptId}/experiments/${started.body.id}/promote`,
      {
        body: { version: 3 },
      },
    );
    expect(promoted.status).toBe(200);
    expect(promoted.body.experiment).toMatchObject({ outcome: "promoted", winner_version: 3 });
    expect((await call(slug, "click")).headers.get("promptmint-version")).toBe("v3");

    const next = await start(promptId, {
      arms: [
        { version: 3, percent: 50 },
        { version: 2, percent: 50 },
      ],
    });
    expect(next.body.control_version).toBe(3);
    // Moving production while the experiment runs is refused, naming the split, and moves nothing
    // (decision 075); the rollback then finds production where the experiment started.
    const before = await creator.api("GET", `/api/prompts/${promptId}/labels/`);
    const refused = await creator.api("PUT", `/api/prompts/${promptId}/labels/production`, {
      body: { version: 2 },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("experiment_running");
    expect(JSON.stringify(refused.body)).toContain("v3 50% / v2 50%");
    const rolled = await creator.api("POST", `/api/prompts/${promptId}/experiments/${next.body.id}/rollback`);
    expect(rolled.status).toBe(200);
    const labels = await creator.api("GET", `/api/prompts/${promptId}/labels/`);
    expect(labels.body.labels).toContainEqual(expect.objectContaining({ name: "production", version: 3 }));
    expect(labels.body.moves).toEqual(before.body.moves);
    expect(labels.body.moves[0]).toMatchObject({ name: "production", to_version: 3 });
    const history = await creator.api("GET", `/api/prompts/${promptId}/experiments/`);
    expect(history.body.running).toBeNull();
    expect(history.body.experiments.map((e: { outcome: string }) => e.outcome)).toEqual([
      "rolled_back",
      "promoted",
    ]);
  });
});
