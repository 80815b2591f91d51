import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { evalRuns } from "../../db/schema/index.ts";
import { createCaller, fundWallet } from "../../test/caller.ts";
import { createLiveApp } from "../../test/live-app.ts";
import { useVendorServer } from "../../test/use-test-server.ts";
import { reconcile } from "../billing/reconcile.ts";
import { CONFIRM_ABOVE_MICROS, MAX_CONCURRENT_EVAL_RUNS } from "./eval-costs.ts";

// What an eval run may cost, before it starts (issue 37, docs/decisions/062): the estimate, its
// confirmation, and the limit of runs at once per account.
const { server, vendor } = useVendorServer();

/** A creator with `cents` in the wallet and a live app on gpt-4-turbo answering up to `maxTokens`. */
async function creatorWithEvals(name: string, cents: number, maxTokens: number, cases: string[]) {
  const creator = await createCaller(server.baseUrl, name);
  if (cents > 0) await fundWallet(creator, cents);
  const { slug } = await createLiveApp(
    creator,
    { price_cents: 100 },
    { model: "gpt-4-turbo", max_tokens: maxTokens, prompt_template: "{{query}}" },
  );
  const prompt = (await creator.api("GET", `/api/app/${slug}/prompt/`)).body;
  const promptId = prompt.id as string;
  // The version the settings above made (the app's first version had the starter's).
  const version = prompt.current_version as number;
  for (const query of cases) {
    const added = await creator.api("POST", `/api/prompts/${promptId}/evals/cases`, {
      body: {
        name: query.slice(0, 20),
        inputs: { query },
        assertions: [{ kind: "rubric", rubric: "is polite" }],
      },
    });
    expect(added.status).toBe(201);
  }
  return { creator, promptId, version, path: `/api/prompts/${promptId}/evals` };
}

describe("an eval run's cost is estimated and, when large, confirmed before it starts", () => {
  it("answers the estimate: every case and judge call at its worst case, beside the wallet", async () => {
    const { creator, path, version } = await creatorWithEvals("Estimating Creator", 500, 1000, ["a", "b"]);
    const estimate = await creator.api("GET", `${path}/estimate?version=${version}&judge_model=gpt-4o-mini`);
    expect(estimate.status).toBe(200);
    expect(estimate.body).toMatchObject({
      calls: 2,
      judge_calls: 2,
      balance_micros: 5_000_000,
      confirm_above_micros: CONFIRM_ABOVE_MICROS,
      needs_confirmation: false,
      max_concurrent_runs: MAX_CONCURRENT_EVAL_RUNS,
    });
    // Each case may answer 1,000 tokens at $30 per million: at least 30,000 µ$ a case.
    expect(estimate.body.estimate_micros).toBeGreaterThan(2 * 30_000);
    expect(estimate.body.largest_call_micros).toBeGreaterThan(30_000);
    const unknown = await creator.api("GET", `${path}/estimate?version=${version}&judge_model=gpt-9`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.fields).toEqual({ judge_model: "is not a known model" });
  });

  it("refuses a run above the wallet with 409 naming confirm_cost_micros, and runs it once confirmed", async () => {
    // Four cases of up to 8,000 tokens ($0.24 each, and their judges reading as much) on a $1 wallet.
    const { creator, path, version } = await creatorWithEvals("Confirming Creator", 100, 8000, [
      "a",
      "b",
      "c",
      "d",
    ]);
    const estimate = (await creator.api("GET", `${path}/estimate?version=${version}`)).body;
    expect(estimate.needs_confirmation).toBe(true);
    expect(estimate.estimate_micros).toBeGreaterThan(estimate.balance_micros);
    const before = vendor.requests.length;
    const refused = await creator.api("POST", `${path}/runs`, { body: { version } });
    expect(refused.status).toBe(409);
    expect(Object.keys(refused.body.fields)).toEqual(["confirm_cost_micros"]);
    expect(refused.body.message).toContain(String(estimate.estimate_micros));
    const tooLittle = await creator.api("POST", `${path}/runs`, {
      body: { version, confirm_cost_micros: estimate.estimate_micros - 1 },
    });
    expect(tooLittle.status).toBe(409);
    expect(vendor.requests.length).toBe(before);

    const confirmed = await creator.api("POST", `${path}/runs`, {
      body: { version, confirm_cost_micros: estimate.estimate_micros },
    });
    expect(confirmed.status).toBe(201);
    expect(confirmed.body.cases).toBe(4);
    expect(vendor.requests.length).toBeGreaterThan(before);
    expect((await reconcile(server.database.db)).ok).toBe(true);
  });

  it(`lets an account run at most ${MAX_CONCURRENT_EVAL_RUNS} runs at once (429 naming the limit)`, async () => {
    const { creator, path, version } = await creatorWithEvals("Busy Creator", 500, 100, ["hi"]);
    const me = (await creator.api("GET", "/api/auth/profile/")).body.user.id as string;
    // The vendor keeps every case in flight until the test opens it: the first runs are still
    // running when the next comes, however slow the machine.
    let open = () => {};
    vendor.set({ kind: "gated", open: new Promise<void>((resolve) => (open = resolve)) });
    try {
      const running = Array.from({ length: MAX_CONCURRENT_EVAL_RUNS }, () =>
        creator.api("POST", `${path}/runs`, { body: { version, judge_model: "claude-3-haiku" } }),
      );
      await expect
        .poll(
          async () =>
            (
              await server.database.db
                .select()
                .from(evalRuns)
                .where(and(eq(evalRuns.startedBy, me), eq(evalRuns.status, "running")))
            ).length,
          { timeout: 60_000 },
        )
        .toBe(MAX_CONCURRENT_EVAL_RUNS);
      const third = await creator.api("POST", `${path}/runs`, { body: { version } });
      expect(third.status).toBe(429);
      expect(third.body.message).toContain(`At most ${MAX_CONCURRENT_EVAL_RUNS} eval runs at a time`);
      open();
      const finished = await Promise.all(running);
      expect(finished.map((run) => run.status)).toEqual(Array(MAX_CONCURRENT_EVAL_RUNS).fill(201));
    } finally {
      open();
      vendor.set({ kind: "echo" });
    }
    // Once they are done, the next run starts.
    expect((await creator.api("POST", `${path}/runs`, { body: { version } })).status).toBe(201);
  }, 120_000);
});
