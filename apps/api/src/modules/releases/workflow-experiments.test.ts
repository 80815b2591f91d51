import http from "node:http";
import { and, desc, eq, gte, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { queryRows } from "../../db/client.ts";
import { appLabelMoves, applications, appVersions, invocations, workflows } from "../../db/schema/index.ts";
import { createCaller } from "../../test/caller.ts";
import { listenOnLoopback } from "../../test/loopback.ts";
import { expectServingTruth } from "../../test/serving-truth.ts";
import { useWorkflowWorld } from "../../test/workflow-world.ts";
import { runExperimentRules } from "./experiment-rules.ts";
import { chooseVersion } from "./serving.ts";

// Experiments for workflow apps (docs/decisions/058, "Workflow apps"): production traffic split
// between versions of the provider configuration, here two webhook "provider apps" on their own
// loopback servers, with the same serving, figures, rules and one-click ends as prompt apps.
// A hundred-odd calls from one key: above the default 60 a minute.
const world = useWorkflowWorld({ GATEWAY_RATE_LIMIT_PER_MINUTE: "1000" });
const FEE = { feePercent: 10 };
const PRICE_CENTS = 30;

/**
 * One provider app: a loopback endpoint speaking our webhook contract. `failEvery` n: every n-th
 * request it gets answers 500 (a provider that fails a third of its calls, with 3).
 */
async function hookServer(name: string, failEvery = 0) {
  let count = 0;
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      count += 1;
      const body = raw ? JSON.parse(raw) : {};
      if (failEvery > 0 && count % failEvery === 0) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: `${name} is down` }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ answer: `${name}: ${body.query}`, usage: { input_tokens: 3, output_tokens: 5 } }),
      );
    });
  });
  const { port, close } = await listenOnLoopback(server);
  return { url: `http://127.0.0.1:${port}/run`, close, requests: () => count };
}

let steady: Awaited<ReturnType<typeof hookServer>>;
let flaky: Awaited<ReturnType<typeof hookServer>>;
beforeAll(async () => {
  steady = await hookServer("steady");
  flaky = await hookServer("flaky", 3);
});
afterAll(async () => {
  await steady?.close();
  await flaky?.close();
});

/** A live workflow app whose production is v2 (the steady hook), with v3 (the flaky hook) saved, not released. */
async function liveWorkflowApp() {
  const created = await world.creator.api("POST", "/api/app/", {
    body: {
      name: `Split flow ${Math.random().toString(36).slice(2, 7)}`,
      type: "workflow",
      visibility: "public",
      price_cents: PRICE_CENTS,
      provider_config: { app_id: "app-1", api_key: "app-dify-key-9999" },
    },
  });
  expect(created.status).toBe(201);
  const slug = created.body.slug as string;
  const first = await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
    body: { provider: "webhook", provider_config: { url: steady.url, bearer_token: "tok-steady" } },
  });
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect(
    (await world.creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } }))
      .status,
  ).toBe(200);
  const second = await world.creator.api("PATCH", `/api/app/${slug}/workflow/`, {
    body: {
      provider_config: { url: flaky.url, bearer_token: "tok-flaky" },
      changelog: "the other provider app",
    },
  });
  expect(second.body).toMatchObject({ current_version: 3, production_version: 2 });
  const db = world.server.database.db;
  const [app] = await db.select().from(applications).where(eq(applications.slug, slug));
  if (!app) throw new Error("no app");
  return { slug, workflowId: second.body.id as string, app };
}

const start = (workflowId: string, body: Record<string, unknown>) =>
  world.creator.api("POST", `/api/workflows/${workflowId}/experiments/`, { body });

function call(slug: string, user: string, pin?: string) {
  return world.consumer.api("POST", `/api/app/${slug}/completion-messages`, {
    auth: world.consumerKey,
    body: { inputs: {}, query: "hello", response_mode: "blocking", user },
    headers: pin ? { "promptmint-version": pin } : {},
  });
}

/** Calls as distinct end users until every arm has at least `each` calls; answers each arm's count. */
async function callUntil(slug: string, prefix: string, each: number, versions: number[]) {
  const counts = new Map<number, number>(versions.map((v) => [v, 0]));
  for (let i = 0; i < 300 && [...counts.values()].some((n) => n < each); i++) {
    const answer = await call(slug, `${prefix}-${i}`);
    // Every answer, a failed one too, names the version that served it.
    expect(
      answer.headers.get("promptmint-version"),
      `${answer.status} ${JSON.stringify(answer.body)}`,
    ).toMatch(/^v\d+$/);
    const served = Number(answer.headers.get("promptmint-version")?.slice(1));
    counts.set(served, (counts.get(served) ?? 0) + 1);
  }
  return counts;
}

describe("workflow experiments", () => {
  it("gives every caller what GET serving says, and moves production during an experiment only by ending it", async () => {
    const { slug, workflowId } = await liveWorkflowApp();
    await expectServingTruth({
      creator: world.creator,
      base: `/api/workflows/${workflowId}`,
      call: (user) => call(slug, user),
      prefix: "truth",
    });
  });

  it("splits 1,000 callers within the stated shares, sticky, and every answer names the version that served it", async () => {
    const { slug, workflowId, app } = await liveWorkflowApp();
    const started = await start(workflowId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
    });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    expect(started.body).toMatchObject({
      app_kind: "workflow",
      workflow_id: workflowId,
      prompt_id: null,
      status: "running",
      control_version: 2,
    });

    const db = world.server.database.db;
    const choose = async (user: string) => {
      const chosen = await chooseVersion(db, app, { stickyKey: { endUser: user, account: "consumer" } });
      expect(chosen.experimentId).toBe(started.body.id);
      return (chosen.pin as { version: number }).version;
    };
    const arms = await Promise.all(Array.from({ length: 1000 }, (_, i) => choose(`caller-${i}`)));
    const onV3 = arms.filter((v) => v === 3).length;
    expect(onV3).toBeGreaterThanOrEqual(450);
    expect(onV3).toBeLessThanOrEqual(550);
    expect(await Promise.all(Array.from({ length: 1000 }, (_, i) => choose(`caller-${i}`)))).toEqual(arms);

    // Real calls through the Dify route: the header and the metadata name the arm the serving path
    // chose, each time, and the arm's provider app is the one that answered.
    const steadyBefore = steady.requests();
    const flakyBefore = flaky.requests();
    for (let i = 0; i < 10; i++) {
      for (let again = 0; again < 2; again++) {
        const answer = await call(slug, `caller-${i}`);
        expect(answer.headers.get("promptmint-version")).toBe(`v${arms[i]}`);
        if (answer.status === 200) {
          expect(answer.body.metadata.promptmint_version).toBe(`v${arms[i]}`);
          expect(answer.body.answer).toMatch(arms[i] === 2 ? /^steady: / : /^flaky: /);
        }
      }
    }
    const onSteady = arms.slice(0, 10).filter((v) => v === 2).length;
    expect(steady.requests() - steadyBefore).toBe(2 * onSteady);
    expect(flaky.requests() - flakyBefore).toBe(2 * (10 - onSteady));
    const recorded = await db
      .select({ version: invocations.appVersion, experiment: invocations.experimentId })
      .from(invocations)
      .where(eq(invocations.applicationId, app.id));
    expect(recorded).toHaveLength(20);
    for (const row of recorded) expect(row.experiment).toBe(started.body.id);
    expect(recorded.filter((row) => row.version === 2)).toHaveLength(2 * onSteady);

    // Another split, sticky by key: 80/20 within a binomial 4σ bound (n = 1000, p = 0.2: σ ≈ 12.6).
    const stopped = await world.creator.api(
      "POST",
      `/api/workflows/${workflowId}/experiments/${started.body.id}/stop`,
    );
    expect(stopped.status).toBe(200);
    expect(stopped.body.experiment).toMatchObject({ status: "ended", outcome: "stopped" });
    const skewed = await start(workflowId, {
      arms: [
        { version: 2, percent: 80 },
        { version: 3, percent: 20 },
      ],
      sticky_by: "key",
    });
    expect(skewed.status).toBe(201);
    const chosen = await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        chooseVersion(db, app, { stickyKey: { endUser: "same", apiKeyId: `key-${i}`, account: "a" } }),
      ),
    );
    const small = chosen.filter((c) => (c.pin as { version: number }).version === 3).length;
    expect(Math.abs(small - 200)).toBeLessThanOrEqual(4 * Math.sqrt(1000 * 0.2 * 0.8));
    await world.creator.api("POST", `/api/workflows/${workflowId}/experiments/${skewed.body.id}/stop`);
  });

  it("judges two provider apps side by side: different success rates, no model cost, and the arms' charges sum exactly to the app's", async () => {
    const { slug, workflowId, app } = await liveWorkflowApp();
    const started = await start(workflowId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
      rules: { min_calls: 10 },
    });
    expect(started.status).toBe(201);
    const counts = await callUntil(slug, "pair", 12, [2, 3]);
    expect(counts.get(2)).toBeGreaterThanOrEqual(12);
    expect(counts.get(3)).toBeGreaterThanOrEqual(12);
    // A pinned call is its pin's and no arm's.
    const pinned = await call(slug, "pair-0", "v2");
    expect(pinned.status).toBe(200);
    expect(pinned.headers.get("promptmint-version")).toBe("v2");

    const detail = await world.creator.api(
      "GET",
      `/api/workflows/${workflowId}/experiments/${started.body.id}`,
    );
    expect(detail.status).toBe(200);
    expect(detail.body.model_cost_note).toMatch(/no model cost from Promptmint/);
    const [steadyArm, flakyArm] = detail.body.arms as {
      version: number;
      calls: number;
      successes: number;
      success_rate: number;
      latency_p50_ms: number | null;
      latency_p95_ms: number | null;
      revenue_micros: number;
      fee_micros: number;
      model_cost_micros: number;
      margin_micros: number;
      refunded_calls: number;
    }[];
    if (!steadyArm || !flakyArm) throw new Error("two arms expected");
    expect(steadyArm).toMatchObject({ version: 2, success_rate: 1, refunded_calls: 0, model_cost_micros: 0 });
    expect(flakyArm.version).toBe(3);
    expect(flakyArm.success_rate).toBeGreaterThan(0.5);
    expect(flakyArm.success_rate).toBeLessThan(0.8);
    expect(flakyArm.model_cost_micros).toBe(0);
    expect(flakyArm.refunded_calls).toBe(flakyArm.calls - flakyArm.successes);
    expect(steadyArm.latency_p50_ms).not.toBeNull();
    expect(steadyArm.latency_p95_ms).not.toBeNull();
    // A failed call charges nothing: each arm's revenue is its successes at the app's price.
    for (const arm of [steadyArm, flakyArm]) {
      expect(arm.revenue_micros).toBe(arm.successes * PRICE_CENTS * 10_000);
      expect(arm.margin_micros).toBe(arm.revenue_micros - arm.fee_micros);
    }

    const db = world.server.database.db;
    const since = new Date(started.body.started_at);
    const [experimentCalls] = await db
      .select({
        charged: sql<string>`coalesce(sum(${invocations.chargedCents}), 0)::text`,
        fee: sql<string>`coalesce(sum(${invocations.feeMicros}), 0)::text`,
        calls: sql<number>`count(*)::int`,
      })
      .from(invocations)
      .where(
        and(
          eq(invocations.applicationId, app.id),
          gte(invocations.createdAt, since),
          eq(invocations.experimentId, started.body.id),
        ),
      );
    const arms = [steadyArm, flakyArm];
    const sum = (key: "calls" | "revenue_micros" | "fee_micros") => arms.reduce((t, arm) => t + arm[key], 0);
    expect(sum("calls")).toBe(experimentCalls?.calls);
    expect(sum("revenue_micros")).toBe(Number(experimentCalls?.charged) * 10_000);
    expect(sum("fee_micros")).toBe(Number(experimentCalls?.fee));
    // The app's whole window: the arms plus the one pinned call, exactly.
    const [all] = await db
      .select({ charged: sql<string>`coalesce(sum(${invocations.chargedCents}), 0)::text` })
      .from(invocations)
      .where(and(eq(invocations.applicationId, app.id), gte(invocations.createdAt, since)));
    expect(Number(all?.charged) * 10_000).toBe(sum("revenue_micros") + PRICE_CENTS * 10_000);
    // Failed calls are recorded with their version and experiment, uncharged.
    const failed = await db
      .select({ charged: invocations.chargedCents, version: invocations.appVersion })
      .from(invocations)
      .where(and(eq(invocations.experimentId, started.body.id), sql`${invocations.status} <> 'success'`));
    expect(failed.length).toBe(flakyArm.calls - flakyArm.successes);
    for (const row of failed) expect(row).toEqual({ charged: 0, version: 3 });

    // Significance is judged as for prompts: enough calls, a verdict, never a winner without p < 0.05.
    expect(detail.body.comparisons).toHaveLength(1);
    expect(detail.body.comparisons[0]).toMatchObject({ version: 3, control_version: 2, enough_calls: true });
    expect(detail.body.series.length).toBeGreaterThanOrEqual(2);
    const rolled = await world.creator.api(
      "POST",
      `/api/workflows/${workflowId}/experiments/${started.body.id}/rollback`,
    );
    expect(rolled.status).toBe(200);
    expect(rolled.body.experiment).toMatchObject({ outcome: "rolled_back" });
  });

  it("chooses the arm before payment opens: a refused payment charges nothing and still names its version", async () => {
    const { slug, workflowId, app } = await liveWorkflowApp();
    const started = await start(workflowId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
    });
    expect(started.status).toBe(201);
    const broke = await createCaller(world.server.baseUrl, "Flow Broke");
    const key = (await broke.api("POST", "/api/keys/", { body: { name: "broke" } })).body.key as string;
    const before = steady.requests() + flaky.requests();
    const refused = await broke.api("POST", `/api/app/${slug}/completion-messages`, {
      auth: key,
      body: { inputs: {}, query: "hello", response_mode: "blocking", user: "nobody" },
    });
    expect(refused.status).toBe(402);
    const expected = await chooseVersion(world.server.database.db, app, {
      stickyKey: { endUser: "nobody", apiKeyId: "unused", account: "unused" },
    });
    expect(refused.headers.get("promptmint-version")).toBe(
      `v${(expected.pin as { version: number }).version}`,
    );
    // No provider was called, nothing was charged.
    expect(steady.requests() + flaky.requests()).toBe(before);
    const charged = await world.server.database.db
      .select({ charged: invocations.chargedCents })
      .from(invocations)
      .where(and(eq(invocations.applicationId, app.id), sql`${invocations.chargedCents} > 0`));
    expect(charged).toEqual([]);
    await world.creator.api("POST", `/api/workflows/${workflowId}/experiments/${started.body.id}/stop`);
  });

  it("rolls back by its rule when a provider app errs, returning production to the control with an audit row", async () => {
    const { slug, workflowId, app } = await liveWorkflowApp();
    const started = await start(workflowId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
      rules: { min_calls: 10, max_error_rate: 0.2 },
    });
    expect(started.status).toBe(201);
    // Moving production meanwhile is refused while the experiment splits the callers (decision 075).
    const moved = await world.creator.api("PUT", `/api/workflows/${workflowId}/labels/production`, {
      body: { version: 3 },
    });
    expect(moved.status).toBe(409);
    expect(moved.body.code).toBe("experiment_running");
    await callUntil(slug, "err", 10, [2, 3]);
    expect(await runExperimentRules(world.server.database.db, FEE)).toBeGreaterThanOrEqual(1);
    const after = await world.creator.api(
      "GET",
      `/api/workflows/${workflowId}/experiments/${started.body.id}`,
    );
    expect(after.body.experiment).toMatchObject({
      status: "ended",
      outcome: "rolled_back",
      winner_version: null,
    });
    expect(after.body.experiment.end_reason).toMatch(/v3's error rate \d+\.\d% is above 20\.0%/);
    const labels = await world.creator.api("GET", `/api/workflows/${workflowId}/labels/`);
    expect(labels.body.labels).toContainEqual(expect.objectContaining({ name: "production", version: 2 }));
    const db = world.server.database.db;
    // Production never left the control: the refused move wrote nothing, so neither did the rollback.
    const moves = await db
      .select()
      .from(appLabelMoves)
      .where(eq(appLabelMoves.applicationId, appIdOf(workflowId)))
      .orderBy(desc(appLabelMoves.createdAt));
    expect(moves.filter((m) => m.name === "production" && m.toVersion === 3)).toEqual([]);
    // The app's own provider fields are production's (decision 060).
    const [row] = await db.select().from(applications).where(eq(applications.id, app.id));
    expect(row?.providerAppId).toBe(steady.url);
    // Callers are back on production, without the experiment.
    const back = await call(slug, "err-after");
    expect(back.headers.get("promptmint-version")).toBe("v2");
    expect(back.body.answer).toMatch(/^steady: /);
  });

  it("promotes an arm in one click (audited), refuses what is not an arm, a second experiment and strangers", async () => {
    const { slug, workflowId } = await liveWorkflowApp();
    const arms = [
      { version: 2, percent: 50 },
      { version: 3, percent: 50 },
    ];
    const bad = await start(workflowId, {
      arms: [
        { version: 2, percent: 60 },
        { version: 3, percent: 30 },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.fields.arms).toMatch(/they sum to 90/);
    const missing = await start(workflowId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 9, percent: 50 },
      ],
    });
    expect(missing.status).toBe(400);
    expect(missing.body.fields["arms.1.version"]).toMatch(/no version v9/);
    // A version with no provider to call cannot be an arm.
    const db = world.server.database.db;
    const [owning] = await db.select().from(workflows).where(eq(workflows.id, workflowId));
    await db.insert(appVersions).values({
      applicationId: owning?.applicationId as string,
      version: 4,
      kind: "workflow",
      payload: {
        provider_slug: null,
        provider_config: {},
        timeout_seconds: 30,
        max_iterations: 1,
        enable_logging: false,
      },
      changelog: "empty",
    });
    const empty = await start(workflowId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 4, percent: 50 },
      ],
    });
    expect(empty.status).toBe(400);
    expect(empty.body.fields["arms.1.version"]).toMatch(/v4 has no provider configured/);

    const started = await start(workflowId, { arms });
    expect(started.status).toBe(201);
    expect((await start(workflowId, { arms })).status).toBe(409);
    // The workflow's id is not a prompt's, and nobody else sees or ends it.
    expect((await world.creator.api("GET", `/api/prompts/${workflowId}/experiments/`)).status).toBe(404);
    const stranger = await createCaller(world.server.baseUrl, "Flow Stranger");
    expect((await stranger.api("GET", `/api/workflows/${workflowId}/experiments/`)).status).toBe(404);
    expect(
      (await stranger.api("POST", `/api/workflows/${workflowId}/experiments/${started.body.id}/stop`)).status,
    ).toBe(404);

    const wrong = await world.creator.api(
      "POST",
      `/api/workflows/${workflowId}/experiments/${started.body.id}/promote`,
      { body: { version: 1 } },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.fields.version).toMatch(/v2, v3/);
    // Two ends race: one wins, the other is a 409 and moves nothing.
    const end = () =>
      world.creator.api("POST", `/api/workflows/${workflowId}/experiments/${started.body.id}/promote`, {
        body: { version: 3 },
      });
    const [one, other] = await Promise.all([end(), end()]);
    expect([one.status, other.status].sort()).toEqual([200, 409]);
    expect(await productionVersion(workflowId)).toBe(3);
    const list = await world.creator.api("GET", `/api/workflows/${workflowId}/experiments/`);
    expect(list.body.running).toBeNull();
    expect(list.body.experiments[0]).toMatchObject({ outcome: "promoted", winner_version: 3 });
    const labels = await world.creator.api("GET", `/api/workflows/${workflowId}/labels/`);
    const productionMoves = labels.body.moves.filter((m: { name: string }) => m.name === "production");
    expect(productionMoves[0]).toMatchObject({ from_version: 2, to_version: 3 });
    expect(productionMoves[0].reason).toMatch(/v3 promoted by the creator/);
    expect(productionMoves.filter((m: { to_version: number }) => m.to_version === 3)).toHaveLength(1);
    const next = await call(slug, "after-promote");
    expect(next.headers.get("promptmint-version")).toBe("v3");
  });

  it("takes turns with label moves on the workflow's row lock: racing moves and ends leave an unbroken chain of production", async () => {
    const { workflowId } = await liveWorkflowApp();
    const started = await start(workflowId, {
      arms: [
        { version: 2, percent: 50 },
        { version: 3, percent: 50 },
      ],
    });
    expect(started.status).toBe(201);
    const db = world.server.database.db;
    const since = new Date();
    const move = (version: number) =>
      world.creator.api("PUT", `/api/workflows/${workflowId}/labels/production`, { body: { version } });
    const endBy = (action: string, body?: object) =>
      world.creator.api("POST", `/api/workflows/${workflowId}/experiments/${started.body.id}/${action}`, {
        body: body ?? {},
      });
    const answers = await Promise.all([
      move(3),
      endBy("rollback"),
      move(2),
      endBy("promote", { version: 3 }),
      move(3),
      move(2),
      endBy("stop"),
      move(3),
    ]);
    const ends = [answers[1], answers[3], answers[6]].map((a) => a?.status).sort();
    expect(ends).toEqual([200, 409, 409]);
    // A move before an end is refused (the experiment still runs: decision 075), one after it moves.
    for (const a of [answers[0], answers[2], answers[4], answers[5], answers[7]]) {
      expect([200, 409]).toContain(a?.status);
      if (a?.status === 409) expect(a.body.code).toBe("experiment_running");
    }

    // Each move recorded the `from` it saw under the lock: if two had read the same production,
    // the moves would not chain. Into and out of each version balance but for the start and end.
    const moves = await db
      .select({ from: appLabelMoves.fromVersion, to: appLabelMoves.toVersion })
      .from(appLabelMoves)
      .where(
        and(
          eq(appLabelMoves.applicationId, appIdOf(workflowId)),
          eq(appLabelMoves.name, "production"),
          gte(appLabelMoves.createdAt, since),
        ),
      );
    const balance = new Map<number, number>();
    for (const m of moves) {
      expect(m.from).not.toBe(m.to);
      balance.set(m.from as number, (balance.get(m.from as number) ?? 0) - 1);
      balance.set(m.to as number, (balance.get(m.to as number) ?? 0) + 1);
    }
    const final = (await productionVersion(workflowId)) as number;
    for (const [version, net] of balance)
      expect(net, `v${version}`).toBe((version === final ? 1 : 0) - (version === 2 ? 1 : 0));
    const list = await world.creator.api("GET", `/api/workflows/${workflowId}/experiments/`);
    expect(list.body.running).toBeNull();
  });
});

/** The application a workflow belongs to, as SQL (the store is keyed by application). */
function appIdOf(workflowId: string) {
  return sql`(select application_id from workflows where id = ${workflowId})`;
}

/** The version `production` points at now. */
async function productionVersion(workflowId: string): Promise<number | undefined> {
  const rows = await queryRows<{ version: number }>(
    world.server.database.db,
    sql`select v.version from app_labels l join app_versions v on v.id = l.version_id join workflows w on w.application_id = l.application_id where w.id = ${workflowId} and l.name = 'production'`,
  );
  return rows[0]?.version;
}
