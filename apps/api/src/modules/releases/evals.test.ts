import { eq, inArray } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { invocations } from "../../db/schema/index.ts";
import { fundWallet } from "../../test/caller.ts";
import type { RecordedRequest } from "../../test/fake-openai.ts";
import { createLiveApp, createPromptApp } from "../../test/live-app.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { reconcile } from "../billing/reconcile.ts";
import { readVerdict, sandboxVerdict } from "../gateway/eval-call.ts";
import { percentile } from "./evals.ts";

// Evals before publishing (docs/decisions/059): cases, runs on the fake vendor, the margin a run
// estimates, comparisons, and the release gate.
const { server, vendor } = useVendorServer({ OPENAI_API_KEY: "sk-vendor-test" });
const creator = useCaller(server, "Eval Creator");
const stranger = useCaller(server, "Eval Stranger");

/** The judge passes a rubric when the answer contains the rubric's last word; the app echoes. */
function judgeOrEcho(request: RecordedRequest): string {
  const system = request.messages.find((m) => m.role === "system")?.content ?? "";
  const last = request.messages.at(-1)?.content ?? "";
  if (!system.includes("strict evaluator")) return `echo: ${last}`;
  const rubric = /Rubric:\n(.*)/.exec(last)?.[1] ?? "";
  const answer = /Answer:\n([\s\S]*)$/.exec(last)?.[1] ?? "";
  const word = rubric.split(/\s+/).at(-1) ?? "";
  const pass = answer.includes(word);
  return JSON.stringify({ pass, reason: pass ? `mentions ${word}` : `never mentions ${word}` });
}
beforeEach(() => vendor.set({ kind: "respond", answer: judgeOrEcho }));
// Every case and judge call holds its worst-case model cost from the owner's wallet (decision 062).
beforeAll(() => fundWallet(creator, 5_000));

// gpt-4-turbo costs $10 per million input tokens and $30 per million output tokens: 10 µ$ and 30 µ$ a token.
const costOf = (input: number, output: number) => input * 10 + output * 30;
const PRICE_MICROS = 250_000; // 25 cents
const FEE_MICROS = 25_000; // the default 10 %

async function liveApp() {
  const { slug, id: appId } = await createLiveApp(
    creator,
    { price_cents: 25 },
    { model: "gpt-4-turbo", max_tokens: 200, prompt_template: "first: {{query}}", changelog: "v2" },
  );
  const config = await creator.api("GET", `/api/app/${slug}/prompt/`);
  return { slug, appId, promptId: config.body.id as string };
}

const evals = (promptId: string) => `/api/prompts/${promptId}/evals`;

describe("eval cases", () => {
  it("are created, listed, changed and deleted; bad input is a 400 naming the field", async () => {
    const { promptId } = await liveApp();
    const created = await creator.api("POST", `${evals(promptId)}/cases`, {
      body: {
        name: "Greets",
        inputs: { query: "hello" },
        assertions: [{ kind: "contains", value: "HELLO", case_insensitive: true }],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "Greets", inputs: { query: "hello" }, position: 0 });

    // RE2 refuses lookbehind: named by its place in the case.
    const badPattern = await creator.api("POST", `${evals(promptId)}/cases`, {
      body: { name: "Bad", inputs: { query: "x" }, assertions: [{ kind: "regex", pattern: "(?<=a)b" }] },
    });
    expect(badPattern.status).toBe(400);
    expect(Object.keys(badPattern.body.fields)).toEqual(["assertions.0.pattern"]);
    // Inputs are checked against the latest version's input schema (its required `query`).
    const missing = await creator.api("POST", `${evals(promptId)}/cases`, {
      body: { name: "No query", inputs: {}, assertions: [] },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.fields).toEqual({ "inputs.query": "is required" });
    const unknownKind = await creator.api("POST", `${evals(promptId)}/cases`, {
      body: { name: "Odd", inputs: { query: "x" }, assertions: [{ kind: "vibes" }] },
    });
    expect(unknownKind.status).toBe(400);
    expect(JSON.stringify(unknownKind.body)).toContain("assertions");
    const unnamed = await creator.api("POST", `${evals(promptId)}/cases`, {
      body: { name: "", inputs: { query: "x" }, assertions: [] },
    });
    expect(unnamed.status).toBe(400);
    expect(JSON.stringify(unnamed.body)).toContain("name");

    const changed = await creator.api("PATCH", `${evals(promptId)}/cases/${created.body.id}`, {
      body: { name: "Greets back", assertions: [{ kind: "max_latency", max_latency_ms: 5000 }] },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      name: "Greets back",
      inputs: { query: "hello" },
      assertions: [{ kind: "max_latency", max_latency_ms: 5000 }],
    });
    const listed = await creator.api("GET", `${evals(promptId)}/cases`);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ require_passing_eval: false, max_cases: 50 });
    expect(listed.body.cases.map((c: { name: string }) => c.name)).toEqual(["Greets back"]);

    // Another person's prompt: not found, whatever they try.
    expect((await stranger.api("GET", `${evals(promptId)}/cases`)).status).toBe(404);
    expect(
      (
        await stranger.api("POST", `${evals(promptId)}/cases`, {
          body: { name: "Mine", inputs: { query: "x" }, assertions: [] },
        })
      ).status,
    ).toBe(404);
    expect((await stranger.api("DELETE", `${evals(promptId)}/cases/${created.body.id}`)).status).toBe(404);
    expect((await stranger.api("POST", `${evals(promptId)}/runs`, { body: { version: 2 } })).status).toBe(
      404,
    );
    expect(
      (await stranger.api("PATCH", `${evals(promptId)}/settings`, { body: { require_passing_eval: true } }))
        .status,
    ).toBe(404);

    expect((await creator.api("DELETE", `${evals(promptId)}/cases/${created.body.id}`)).status).toBe(204);
    expect((await creator.api("GET", `${evals(promptId)}/cases`)).body.cases).toEqual([]);
    // A run needs a case.
    const empty = await creator.api("POST", `${evals(promptId)}/runs`, { body: { version: 2 } });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/eval case/);
  });
});

describe("eval runs", () => {
  it("run every case on the version, judge each assertion, and estimate cost, latency and margin exactly", async () => {
    const { appId, promptId } = await liveApp();
    const walletBefore = (await creator.api("GET", "/api/wallet/")).body.balance_micros;
    const add = (body: object) => creator.api("POST", `${evals(promptId)}/cases`, { body });
    expect(
      (
        await add({
          name: "hello",
          inputs: { query: "hello" },
          assertions: [
            { kind: "contains", value: "first: hello" },
            { kind: "not_contains", value: "goodbye" },
            { kind: "regex", pattern: "^echo: first" },
            { kind: "max_cost", max_cost_micros: 1_000 },
            { kind: "max_latency", max_latency_ms: 60_000 },
            { kind: "rubric", rubric: "The answer must say hello" },
          ],
        })
      ).status,
    ).toBe(201);
    await add({
      name: "long",
      inputs: { query: "one two three four five six" },
      assertions: [
        { kind: "contains", value: "GOODBYE", case_insensitive: true },
        { kind: "max_cost", max_cost_micros: 100 },
        { kind: "rubric", rubric: "The answer must say goodbye" },
        { kind: "output_schema" },
      ],
    });
    await add({
      name: "mid",
      inputs: { query: "a b c" },
      assertions: [{ kind: "contains", value: "a b c" }],
    });

    const run = await creator.api("POST", `${evals(promptId)}/runs`, {
      body: { version: 2, judge_model: "gpt-4o-mini" },
    });
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({
      version: 2,
      status: "failed",
      cases: 3,
      passed: 2,
      judge_model: "gpt-4o-mini",
    });
    const [hello, long, mid] = run.body.results;
    expect(hello).toMatchObject({
      case_name: "hello",
      passed: true,
      output: "echo: first: hello",
      error: null,
    });
    expect(hello.assertion_results.map((r: { kind: string; passed: boolean }) => [r.kind, r.passed])).toEqual(
      [
        ["contains", true],
        ["not_contains", true],
        ["regex", true],
        ["max_cost", true],
        ["max_latency", true],
        ["rubric", true],
      ],
    );
    expect(hello.assertion_results[5].detail).toBe("mentions hello");
    expect(long).toMatchObject({ case_name: "long", passed: false });
    expect(long.assertion_results).toEqual([
      { kind: "contains", passed: false, detail: 'does not contain "GOODBYE" (ignoring case)' },
      { kind: "max_cost", passed: false, detail: `cost ${costOf(5 + 7, 8)} µ$ > 100 µ$` },
      { kind: "rubric", passed: false, detail: "never mentions goodbye" },
      { kind: "output_schema", passed: false, detail: "this version has no output schema" },
    ]);
    expect(mid.passed).toBe(true);

    // Tokens as the fake vendor counts them (words of the system prompt "You are a helpful
    // assistant." and of the rendered template; of the echoed answer), cost from the price table.
    expect([hello, long, mid].map((r) => [r.input_tokens, r.output_tokens])).toEqual([
      [5 + 2, 3],
      [5 + 7, 8],
      [5 + 4, 5],
    ]);
    const costs = [costOf(7, 3), costOf(12, 8), costOf(9, 5)]; // 160, 360, 240
    expect([hello, long, mid].map((r) => r.cost_micros)).toEqual(costs);
    // The judge's cost is its own, apart from the app's cost per call.
    expect(hello.judge_cost_micros).toBeGreaterThan(0);
    expect(run.body.judge_cost_micros).toBe(hello.judge_cost_micros + long.judge_cost_micros);
    // Median and 95th percentile by nearest rank over 160, 240, 360.
    expect(run.body).toMatchObject({
      cost_median_micros: 240,
      cost_p95_micros: 360,
      price_micros: PRICE_MICROS,
      fee_percent: 10,
      fee_micros: FEE_MICROS,
      margin_median_micros: PRICE_MICROS - FEE_MICROS - 240,
      margin_p95_micros: PRICE_MICROS - FEE_MICROS - 360,
    });
    const latencies = [hello, long, mid].map((r) => r.latency_ms).sort((a: number, b: number) => a - b);
    expect(run.body.latency_p50_ms).toBe(latencies[1]);
    expect(run.body.latency_p95_ms).toBe(latencies[2]);

    // The run's calls are the owner's own: no price, recorded with their model cost, which each
    // call took from the owner's wallet (decision 062); the app's callers were never involved.
    const rows = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.applicationId, appId));
    const appCalls = rows.filter((r) => r.model === "gpt-4-turbo");
    expect(appCalls.map((r) => r.chargedCents)).toEqual([0, 0, 0]);
    expect(appCalls.map((r) => r.modelCostMicros).sort((a, b) => a - b)).toEqual([160, 240, 360]);
    expect(appCalls.every((r) => r.appVersion === 2)).toBe(true);
    const judgeCalls = rows.filter((r) => r.model === "gpt-4o-mini");
    expect(judgeCalls).toHaveLength(2);
    expect(judgeCalls.every((r) => r.chargedCents === 0 && r.modelCostMicros > 0)).toBe(true);
    const modelCosts = rows.reduce((sum, r) => sum + r.modelCostMicros, 0);
    expect((await creator.api("GET", "/api/wallet/")).body.balance_micros).toBe(walletBefore - modelCosts);
    expect(rows.every((r) => r.modelCostPostedAt !== null)).toBe(true);
    expect((await reconcile(server.database.db)).ok).toBe(true);

    // Listed (by version too), and read back whole.
    const listed = await creator.api("GET", `${evals(promptId)}/runs?version=2`);
    expect(listed.body.runs.map((r: { id: string }) => r.id)).toEqual([run.body.id]);
    expect((await creator.api("GET", `${evals(promptId)}/runs?version=3`)).body.runs).toEqual([]);
    const read = await creator.api("GET", `${evals(promptId)}/runs/${run.body.id}`);
    expect(read.body.results).toHaveLength(3);
    expect((await stranger.api("GET", `${evals(promptId)}/runs/${run.body.id}`)).status).toBe(404);
    expect((await stranger.api("GET", `${evals(promptId)}/runs`)).status).toBe(404);

    // A judge model that does not exist, a version the app lacks: 400s naming them.
    const badJudge = await creator.api("POST", `${evals(promptId)}/runs`, {
      body: { version: 2, judge_model: "gpt-9" },
    });
    expect(badJudge.status).toBe(400);
    expect(badJudge.body.fields).toEqual({ judge_model: "is not a known model" });
    const badVersion = await creator.api("POST", `${evals(promptId)}/runs`, { body: { version: 9 } });
    expect(badVersion.status).toBe(400);
    expect(Object.keys(badVersion.body.fields)).toEqual(["version"]);
  });

  it("compare two runs case by case, and gate production on a passing run", async () => {
    const { slug, promptId } = await liveApp();
    const created = await creator.api("POST", `${evals(promptId)}/cases`, {
      body: {
        name: "says second",
        inputs: { query: "hi" },
        assertions: [{ kind: "contains", value: "second" }],
      },
    });
    expect(created.status).toBe(201);
    const settings = await creator.api("PATCH", `${evals(promptId)}/settings`, {
      body: { require_passing_eval: true },
    });
    expect(settings.body.require_passing_eval).toBe(true);

    const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { prompt_template: "second: {{query}}" },
    });
    expect(saved.body).toMatchObject({ current_version: 3, production_version: 2 });
    // No run of v3 yet: the release is refused, naming the version and the evals page.
    const refused = await creator.api("PUT", `/api/prompts/${promptId}/labels/production`, {
      body: { version: 3 },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain("v3");
    expect(refused.body.message).toContain(`/prompts/${slug}/evals`);
    const savedAndPromoted = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { prompt_template: "second: {{query}}", promote: true },
    });
    expect(savedAndPromoted.status).toBe(409);

    const before = await creator.api("POST", `${evals(promptId)}/runs`, { body: { version: 2 } });
    expect(before.body).toMatchObject({ status: "failed", passed: 0 });
    // A failed run does not open the gate either.
    expect(
      (await creator.api("PUT", `/api/prompts/${promptId}/labels/production`, { body: { version: 2 } }))
        .status,
    ).toBe(200); // v2 is already production: nothing to judge.
    const after = await creator.api("POST", `${evals(promptId)}/runs`, { body: { version: 3 } });
    expect(after.body).toMatchObject({ status: "passed", passed: 1, cases: 1 });

    const compared = await creator.api(
      "GET",
      `${evals(promptId)}/compare?a=${before.body.id}&b=${after.body.id}`,
    );
    expect(compared.status).toBe(200);
    expect(compared.body.a).toMatchObject({ version: 2 });
    expect(compared.body.b).toMatchObject({ version: 3 });
    expect(compared.body.cases).toEqual([
      expect.objectContaining({
        case_id: created.body.id,
        case_name: "says second",
        change: "fixed",
        a: expect.objectContaining({ passed: false, output: "echo: first: hi" }),
        b: expect.objectContaining({ passed: true, output: "echo: second: hi" }),
      }),
    ]);
    expect(
      (await stranger.api("GET", `${evals(promptId)}/compare?a=${before.body.id}&b=${after.body.id}`)).status,
    ).toBe(404);
    expect((await creator.api("GET", `${evals(promptId)}/compare?a=${before.body.id}&b=nope`)).status).toBe(
      404,
    );

    const promoted = await creator.api("PUT", `/api/prompts/${promptId}/labels/production`, {
      body: { version: 3 },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body.labels).toContainEqual(expect.objectContaining({ name: "production", version: 3 }));

    // Switched off, any version may be released again.
    await creator.api("PATCH", `${evals(promptId)}/settings`, { body: { require_passing_eval: false } });
    expect(
      (await creator.api("PUT", `/api/prompts/${promptId}/labels/production`, { body: { version: 2 } }))
        .status,
    ).toBe(200);
  });

  it("gate the first publish too: a draft goes live only with a passing run of what callers will get", async () => {
    const { slug } = await createPromptApp(
      creator,
      { name: `Gated ${Math.random().toString(36).slice(2, 7)}`, visibility: "public", price_cents: 25 },
      { model: "gpt-4-turbo", max_tokens: 200, prompt_template: "first: {{query}}" },
    );
    const promptId = (await creator.api("GET", `/api/app/${slug}/prompt/`)).body.id as string;
    await creator.api("POST", `${evals(promptId)}/cases`, {
      body: {
        name: "says second",
        inputs: { query: "hi" },
        assertions: [{ kind: "contains", value: "second" }],
      },
    });
    await creator.api("PATCH", `${evals(promptId)}/settings`, { body: { require_passing_eval: true } });
    const status = async () => (await creator.api("GET", `/api/app/${slug}/`)).body.status as string;

    // Set as Live: the draft's production (v2, saved ungated while nobody called it) has no run.
    const published = await creator.api("PATCH", `/api/app/${slug}/update_status/`, {
      body: { status: "live" },
    });
    expect(published.status).toBe(409);
    expect(published.body).toMatchObject({ code: "conflict", status: 409 });
    expect(published.body.message).toMatch(
      /^Version v2 has no passing eval run, and this app requires one before it goes live/,
    );
    expect(published.body.message).toContain(`/prompts/${slug}/evals`);
    expect(await status()).toBe("draft");
    // The app's PATCH is the same publish.
    expect((await creator.api("PATCH", `/api/app/${slug}/`, { body: { status: "live" } })).status).toBe(409);

    // Save & Publish judges the version it saves (v3): refused whole, nothing saved.
    const saveAndPublish = await creator.api("PATCH", `/api/app/${slug}/prompt-application/`, {
      body: { application: { status: "live" }, prompt: { prompt_template: "second: {{query}}" } },
    });
    expect(saveAndPublish.status).toBe(409);
    expect(saveAndPublish.body.message).toMatch(/^Version v3 has no passing eval run/);
    expect(await status()).toBe("draft");
    expect((await creator.api("GET", `/api/app/${slug}/prompt/`)).body.current_version).toBe(2);

    // A failed run of v2 does not open the gate; a passing run of the saved v3 does.
    expect((await creator.api("POST", `${evals(promptId)}/runs`, { body: { version: 2 } })).body.status).toBe(
      "failed",
    );
    expect(
      (await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } })).status,
    ).toBe(409);
    const saved = await creator.api("PATCH", `/api/app/${slug}/prompt/`, {
      body: { prompt_template: "second: {{query}}" },
    });
    expect(saved.body).toMatchObject({ current_version: 3, production_version: 3 });
    expect((await creator.api("POST", `${evals(promptId)}/runs`, { body: { version: 3 } })).body.status).toBe(
      "passed",
    );
    const live = await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
    expect(live.status, JSON.stringify(live.body)).toBe(200);
    expect(await status()).toBe("live");
  });

  it("record a model that fails as the case's error, charged nothing", async () => {
    const { promptId } = await liveApp();
    await creator.api("POST", `${evals(promptId)}/cases`, {
      body: { name: "down", inputs: { query: "x" }, assertions: [{ kind: "contains", value: "x" }] },
    });
    vendor.set({ kind: "status", status: 500, message: "vendor down" });
    const run = await creator.api("POST", `${evals(promptId)}/runs`, { body: { version: 2 } });
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({
      status: "failed",
      passed: 0,
      cost_median_micros: null,
      margin_median_micros: null,
    });
    const [result] = run.body.results;
    expect(result).toMatchObject({ passed: false, output: null, cost_micros: 0 });
    expect(result.error).toEqual(expect.any(String));
    expect(result.assertion_results[0]).toMatchObject({ kind: "contains", passed: false });
    const failedCalls = await server.database.db
      .select()
      .from(invocations)
      .where(inArray(invocations.status, ["error"]));
    expect(failedCalls.every((r) => r.chargedCents === 0)).toBe(true);
  });
});

describe("eval runs offline", () => {
  it("run on the sandbox model, judged deterministically by the sandbox judge", async () => {
    // claude-3-haiku has no key on this server: the sandbox answers, for the app and the judge.
    const { slug } = await createLiveApp(
      creator,
      { price_cents: 25 },
      { model: "claude-3-haiku", prompt_template: "Tell me about {{query}}" },
    );
    const promptId = (await creator.api("GET", `/api/app/${slug}/prompt/`)).body.id as string;
    await creator.api("POST", `${evals(promptId)}/cases`, {
      body: {
        name: "Paris",
        inputs: { query: "Paris" },
        assertions: [
          { kind: "rubric", rubric: 'Must mention "paris"' },
          { kind: "rubric", rubric: 'Must mention "London"' },
        ],
      },
    });
    const runs = await Promise.all(
      [1, 2].map(() =>
        creator.api("POST", `${evals(promptId)}/runs`, {
          body: { version: 2, judge_model: "claude-3-haiku" },
        }),
      ),
    );
    for (const run of runs) {
      expect(run.status).toBe(201);
      expect(run.body.results[0].output).toContain("Tell me about Paris");
      expect(run.body.results[0].assertion_results).toEqual([
        { kind: "rubric", passed: true, detail: 'Sandbox judge (offline): the answer contains "paris"' },
        { kind: "rubric", passed: false, detail: 'Sandbox judge (offline): the answer lacks "London"' },
      ]);
      expect(run.body).toMatchObject({
        status: "failed",
        cost_median_micros: 0,
        margin_median_micros: PRICE_MICROS - FEE_MICROS,
      });
    }
  });
});

describe("eval helpers", () => {
  it("take percentiles by nearest rank, exactly", () => {
    expect(percentile([], 50)).toBeNull();
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([1, 2, 3, 4], 50)).toBe(2);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], 95)).toBe(19);
  });

  it("read the judge's JSON strictly, and judge offline deterministically", () => {
    expect(readVerdict('```json\n{"pass": true, "reason": "fine"}\n```')).toEqual({
      pass: true,
      reason: "fine",
    });
    expect(() => readVerdict("yes")).toThrow(/not JSON/);
    expect(() => readVerdict('{"pass": "yes"}')).toThrow(/boolean/);
    expect(sandboxVerdict('Must mention "Paris" and "France"', "paris is in france").pass).toBe(true);
    expect(sandboxVerdict('Must mention "Paris"', "Lyon")).toEqual({
      pass: false,
      reason: 'Sandbox judge (offline): the answer lacks "Paris"',
    });
    expect(sandboxVerdict("Be polite", "").pass).toBe(false);
  });
});
