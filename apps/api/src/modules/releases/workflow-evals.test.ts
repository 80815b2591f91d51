import http from "node:http";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { applications, invocations } from "../../db/schema/index.ts";
import { fundWallet } from "../../test/caller.ts";
import type { RecordedRequest } from "../../test/fake-openai.ts";
import { listenOnLoopback } from "../../test/loopback.ts";
import { useCaller, useVendorServer } from "../../test/use-test-server.ts";
import { reconcile } from "../billing/reconcile.ts";

// Evals of a workflow app (docs/decisions/059, "Workflow apps"): the same routes and shapes as a
// prompt app's under /workflows/{id}/evals, each case the owner's own call of their workflow at
// the pinned version (two webhook "provider apps" on loopback servers here), free as any owner
// call; only a rubric's judge (the fake OpenAI vendor) is paid from the owner's wallet.
const { server, vendor } = useVendorServer({
  OPENAI_API_KEY: "sk-vendor-test",
  ALLOW_PRIVATE_UPSTREAMS: "true",
});
const creator = useCaller(server, "Flow Eval Creator");
const stranger = useCaller(server, "Flow Eval Stranger");
const consumer = useCaller(server, "Flow Eval Consumer");

/** The judge passes a rubric when the answer contains the phrase the rubric quotes. */
function judge(request: RecordedRequest): string {
  const last = request.messages.at(-1)?.content ?? "";
  const phrase = /Rubric:\n[^"]*"([^"]+)"/.exec(last)?.[1] ?? "";
  const answer = /Answer:\n([\s\S]*)$/.exec(last)?.[1] ?? "";
  const pass = phrase !== "" && answer.includes(phrase);
  return JSON.stringify({ pass, reason: pass ? `mentions ${phrase}` : `never mentions ${phrase}` });
}
beforeEach(() => vendor.set({ kind: "respond", answer: judge }));
beforeAll(() => fundWallet(creator, 5_000));

/** One provider app: a loopback endpoint speaking our webhook contract, answering `{name} says {query}`. */
async function hookServer(name: string) {
  let count = 0;
  const hook = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", () => {
      count += 1;
      const body = raw ? JSON.parse(raw) : {};
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          answer: `${name} says ${body.query}`,
          usage: { input_tokens: 3, output_tokens: 5 },
        }),
      );
    });
  });
  const { port, close } = await listenOnLoopback(hook);
  return { url: `http://127.0.0.1:${port}/run`, close, requests: () => count };
}

let older: Awaited<ReturnType<typeof hookServer>>;
let newer: Awaited<ReturnType<typeof hookServer>>;
beforeAll(async () => {
  older = await hookServer("old");
  newer = await hookServer("new");
});
afterAll(async () => {
  await older?.close();
  await newer?.close();
});

/** A live workflow app: v2 on the old hook (production), v3 on the new hook (saved, not released). */
async function workflowApp() {
  const created = await creator.api("POST", "/api/app/", {
    body: {
      name: `Eval flow ${Math.random().toString(36).slice(2, 7)}`,
      type: "workflow",
      visibility: "public",
      price_cents: 20,
      provider_config: { app_id: "app-1", api_key: "app-dify-key-9999" },
    },
  });
  expect(created.status).toBe(201);
  const slug = created.body.slug as string;
  const first = await creator.api("PATCH", `/api/app/${slug}/workflow/`, {
    body: { provider: "webhook", provider_config: { url: older.url, bearer_token: "tok-old" } },
  });
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect(
    (await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } })).status,
  ).toBe(200);
  const second = await creator.api("PATCH", `/api/app/${slug}/workflow/`, {
    body: { provider_config: { url: newer.url, bearer_token: "tok-new" }, changelog: "the new hook" },
  });
  expect(second.body).toMatchObject({ current_version: 3, production_version: 2 });
  const [app] = await server.database.db.select().from(applications).where(eq(applications.slug, slug));
  if (!app) throw new Error("no app");
  return { slug, workflowId: second.body.id as string, appId: app.id };
}

const evals = (workflowId: string) => `/api/workflows/${workflowId}/evals`;
const wallet = async () => (await creator.api("GET", "/api/wallet/")).body.balance_micros as number;
const customerCalls = async (slug: string) =>
  (await creator.api("GET", `/api/app/${slug}/analytics/usage/?days=7`)).body.total_invocations as number;

describe("Evals of a workflow app", () => {
  it("run every case at two versions of the provider configuration, judge, compare; only the judge is paid", async () => {
    const { slug, workflowId, appId } = await workflowApp();
    const add = (body: Record<string, unknown>) =>
      creator.api("POST", `${evals(workflowId)}/cases`, { body });
    const greets = await add({
      name: "Greets",
      inputs: { lang: "en", polite: true, n: 2 },
      query: "hello",
      assertions: [{ kind: "contains", value: "hello" }],
    });
    expect(greets.status, JSON.stringify(greets.body)).toBe(201);
    expect(greets.body).toMatchObject({
      name: "Greets",
      inputs: { lang: "en", polite: true, n: 2 },
      query: "hello",
    });
    expect(
      (
        await add({
          name: "Is new",
          inputs: {},
          query: "hi",
          assertions: [{ kind: "contains", value: "new says" }],
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await add({
          name: "Weather",
          inputs: {},
          query: "the weather",
          assertions: [{ kind: "rubric", rubric: 'The answer mentions "weather"' }],
        })
      ).status,
    ).toBe(201);
    const listed = await creator.api("GET", `${evals(workflowId)}/cases`);
    expect(listed.body.cases.map((c: { name: string }) => c.name)).toEqual(["Greets", "Is new", "Weather"]);
    expect(listed.body.require_passing_eval).toBe(false);

    // The estimate: the cases cost nothing (owner calls of a workflow); the judge keeps its worst case.
    const paidEstimate = await creator.api(
      "GET",
      `${evals(workflowId)}/estimate?version=2&judge_model=gpt-4o-mini`,
    );
    expect(paidEstimate.status, JSON.stringify(paidEstimate.body)).toBe(200);
    expect(paidEstimate.body).toMatchObject({ calls: 3, judge_calls: 1, needs_confirmation: false });
    expect(paidEstimate.body.estimate_micros).toBeGreaterThan(0);
    expect(paidEstimate.body.largest_call_micros).toBe(paidEstimate.body.estimate_micros);
    // Without a judge model named, the platform's fallback judge (the offline sandbox) costs nothing.
    const freeEstimate = await creator.api("GET", `${evals(workflowId)}/estimate?version=3`);
    expect(freeEstimate.body).toMatchObject({
      calls: 3,
      judge_calls: 1,
      estimate_micros: 0,
      largest_call_micros: 0,
    });

    const walletBefore = await wallet();
    const callsBefore = await customerCalls(slug);
    const oldHits = older.requests();
    const judgeHits = vendor.requests.length;
    const v2 = await creator.api("POST", `${evals(workflowId)}/runs`, {
      body: { version: 2, judge_model: "gpt-4o-mini" },
    });
    expect(v2.status, JSON.stringify(v2.body)).toBe(201);
    expect(v2.body).toMatchObject({
      prompt_id: workflowId,
      version: 2,
      status: "failed",
      cases: 3,
      passed: 2,
      judge_model: "gpt-4o-mini",
    });
    // Each case called the version's own provider (the old hook), and the judge was called once.
    expect(older.requests() - oldHits).toBe(3);
    expect(vendor.requests.length - judgeHits).toBe(1);
    const byName = Object.fromEntries(v2.body.results.map((r: { case_name: string }) => [r.case_name, r]));
    expect(byName.Greets).toMatchObject({
      passed: true,
      output: "old says hello",
      cost_micros: 0,
      judge_cost_micros: 0,
    });
    expect(byName["Is new"]).toMatchObject({
      passed: false,
      output: "old says hi",
      assertion_results: [{ kind: "contains", passed: false, detail: 'does not contain "new says"' }],
    });
    expect(byName.Weather).toMatchObject({
      passed: true,
      cost_micros: 0,
      assertion_results: [{ kind: "rubric", passed: true, detail: "mentions weather" }],
    });
    expect(byName.Weather.judge_cost_micros).toBeGreaterThan(0);
    expect(v2.body.judge_cost_micros).toBe(byName.Weather.judge_cost_micros);
    expect(v2.body).toMatchObject({ cost_median_micros: 0, cost_p95_micros: 0 });

    // The calls were the owner's own, recorded as eval traffic: the cases free and without model
    // cost, the judge's model cost taken from the owner's wallet and nothing else.
    const rows = await server.database.db
      .select()
      .from(invocations)
      .where(eq(invocations.applicationId, appId));
    expect(rows.every((r) => r.purpose === "eval" && r.chargedCents === 0)).toBe(true);
    const cases = rows.filter((r) => r.model !== "gpt-4o-mini");
    expect(cases).toHaveLength(3);
    expect(cases.every((r) => r.modelCostMicros === 0 && r.appVersion === 2)).toBe(true);
    const judged = rows.filter((r) => r.model === "gpt-4o-mini");
    expect(judged).toHaveLength(1);
    expect(judged[0]?.modelCostMicros).toBe(byName.Weather.judge_cost_micros);
    expect(await wallet()).toBe(walletBefore - byName.Weather.judge_cost_micros);
    expect((await reconcile(server.database.db)).ok).toBe(true);
    // The app's customer analytics never saw them.
    expect(await customerCalls(slug)).toBe(callsBefore);

    // v3 (the new hook), judged by the fallback judge: every case passes, nothing is paid.
    const walletMid = await wallet();
    const v3 = await creator.api("POST", `${evals(workflowId)}/runs`, { body: { version: 3 } });
    expect(v3.status, JSON.stringify(v3.body)).toBe(201);
    expect(v3.body).toMatchObject({
      version: 3,
      status: "passed",
      cases: 3,
      passed: 3,
      judge_model: "sandbox",
      judge_cost_micros: 0,
    });
    expect(v3.body.results.map((r: { output: string }) => r.output)).toEqual([
      "new says hello",
      "new says hi",
      "new says the weather",
    ]);
    expect(await wallet()).toBe(walletMid);

    // Listed, read back, compared case by case.
    const runs = await creator.api("GET", `${evals(workflowId)}/runs`);
    expect(runs.body.runs.map((r: { id: string }) => r.id)).toEqual([v3.body.id, v2.body.id]);
    expect((await creator.api("GET", `${evals(workflowId)}/runs?version=2`)).body.runs).toHaveLength(1);
    const read = await creator.api("GET", `${evals(workflowId)}/runs/${v2.body.id}`);
    expect(read.body.results).toHaveLength(3);
    const compared = await creator.api("GET", `${evals(workflowId)}/compare?a=${v2.body.id}&b=${v3.body.id}`);
    expect(compared.status).toBe(200);
    expect(
      Object.fromEntries(
        compared.body.cases.map((c: { case_name: string; change: string }) => [c.case_name, c.change]),
      ),
    ).toEqual({
      Greets: "still_passing",
      "Is new": "fixed",
      Weather: "still_passing",
    });

    // A case changed and deleted; past runs keep its results.
    const caseId = greets.body.id as string;
    const renamed = await creator.api("PATCH", `${evals(workflowId)}/cases/${caseId}`, {
      body: { name: "Says hello" },
    });
    expect(renamed.body.name).toBe("Says hello");
    expect((await creator.api("DELETE", `${evals(workflowId)}/cases/${caseId}`)).status).toBe(204);
    expect((await creator.api("GET", `${evals(workflowId)}/runs/${v2.body.id}`)).body.results).toHaveLength(
      3,
    );
  });

  it("refuse bad input by field name, the release gate by name, and another user's workflow with 404", async () => {
    const { workflowId } = await workflowApp();
    const nested = await creator.api("POST", `${evals(workflowId)}/cases`, {
      body: { name: "Nested", inputs: { topic: { city: "Paris" }, tags: ["a"] }, assertions: [] },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.fields).toEqual({
      "inputs.topic": "must be a string, a number or a boolean",
      "inputs.tags": "must be a string, a number or a boolean",
    });
    const badRegex = await creator.api("POST", `${evals(workflowId)}/cases`, {
      body: { name: "Lookbehind", inputs: {}, assertions: [{ kind: "regex", pattern: "(?<=a)b" }] },
    });
    expect(badRegex.status).toBe(400);
    expect(Object.keys(badRegex.body.fields)).toEqual(["assertions.0.pattern"]);
    const unknownField = await creator.api("POST", `${evals(workflowId)}/cases`, {
      body: { name: "Extra", inputs: {}, assertions: [], shoe_size: 9 },
    });
    expect(unknownField.status).toBe(400);
    expect(JSON.stringify(unknownField.body)).toContain("shoe_size");

    // No cases yet: a run is refused before any call; a version the workflow lacks is named.
    const empty = await creator.api("POST", `${evals(workflowId)}/runs`, { body: { version: 2 } });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toContain("Add an eval case");
    await creator.api("POST", `${evals(workflowId)}/cases`, {
      body: { name: "Any", inputs: {}, query: "x", assertions: [{ kind: "contains", value: "x" }] },
    });
    const missing = await creator.api("POST", `${evals(workflowId)}/runs`, { body: { version: 99 } });
    expect(missing.status).toBe(400);
    expect(missing.body.fields).toEqual({ version: "is not a version of this app (v99)" });
    const badJudge = await creator.api("GET", `${evals(workflowId)}/estimate?version=2&judge_model=gpt-9`);
    expect(badJudge.status).toBe(400);
    expect(badJudge.body.fields).toEqual({ judge_model: "is not a known model" });

    // The release gate on a passing run is a prompt app's: true is refused by name, false is a no-op.
    const gate = await creator.api("PATCH", `${evals(workflowId)}/settings`, {
      body: { require_passing_eval: true },
    });
    expect(gate.status).toBe(400);
    expect(Object.keys(gate.body.fields)).toEqual(["require_passing_eval"]);
    const off = await creator.api("PATCH", `${evals(workflowId)}/settings`, {
      body: { require_passing_eval: false },
    });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ require_passing_eval: false });

    // Another user's workflow, and a workflow id under the prompt routes: 404, nothing said of whose.
    for (const [method, url] of [
      ["GET", `${evals(workflowId)}/cases`],
      ["GET", `${evals(workflowId)}/runs`],
      ["GET", `${evals(workflowId)}/estimate?version=2`],
    ] as const) {
      const seen = await stranger.api(method, url);
      expect(seen.status, url).toBe(404);
      expect(seen.body.message).toContain("Workflow");
    }
    const strangerRun = await stranger.api("POST", `${evals(workflowId)}/runs`, { body: { version: 2 } });
    expect(strangerRun.status).toBe(404);
    const strangerCase = await stranger.api("POST", `${evals(workflowId)}/cases`, {
      body: { name: "Mine", inputs: {}, assertions: [] },
    });
    expect(strangerCase.status).toBe(404);
    expect((await creator.api("GET", `/api/prompts/${workflowId}/evals/cases`)).status).toBe(404);
    expect((await creator.api("GET", `${evals(workflowId)}/cases`)).body.cases).toHaveLength(1);
  });

  it("save a customer's chat call of the workflow app as a case (404 for a call not of this app)", async () => {
    const { workflowId } = await workflowApp();
    await fundWallet(consumer, 1_000);
    const key = (await consumer.api("POST", "/api/keys/", { body: { name: "flows" } })).body.key as string;
    const { slug } = await workflowApp();
    const other = await creator.api("GET", `/api/app/${slug}/workflow/`);
    const called = await consumer.api("POST", `/api/app/${slug}/chat-messages`, {
      auth: key,
      body: { inputs: { lang: "fr" }, query: "bonjour", response_mode: "blocking", user: "u1" },
    });
    expect(called.status, JSON.stringify(called.body)).toBe(200);
    expect(called.body.answer).toBe("old says bonjour");
    const invocationId = called.body.message_id as string;

    // Under the workflow the call is of: a case with its inputs, query and answer as the reference.
    const saved = await creator.api("POST", `/api/workflows/${other.body.id}/evals/cases/from-call`, {
      body: { invocation_id: invocationId },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    expect(saved.body).toMatchObject({ inputs: { lang: "fr" }, query: "bonjour" });
    expect(saved.body.assertions).toHaveLength(1);
    expect(saved.body.assertions[0].kind).toBe("rubric");
    expect(saved.body.assertions[0].rubric).toContain("old says bonjour");
    // Under another workflow of the same owner, or by a stranger: 404.
    const elsewhere = await creator.api("POST", `/api/workflows/${workflowId}/evals/cases/from-call`, {
      body: { invocation_id: invocationId },
    });
    expect(elsewhere.status).toBe(404);
    const byStranger = await stranger.api("POST", `/api/workflows/${other.body.id}/evals/cases/from-call`, {
      body: { invocation_id: invocationId },
    });
    expect(byStranger.status).toBe(404);
  });
});
