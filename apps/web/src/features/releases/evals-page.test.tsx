import type { EvalCase, EvalEstimate, EvalResult, EvalRun } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture, promptConfigFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const app = applicationFixture({ status: "live", visibility: "public" });
const EVALS = "/api/prompts/prompt-1/evals";

const greets: EvalCase = {
  id: "case-1",
  name: "Writes about bees",
  inputs: { topic: "bees" },
  query: null,
  assertions: [{ kind: "contains", value: "bees", case_insensitive: true }],
  position: 0,
  created_at: "2024-05-02T10:00:00.000Z",
  updated_at: "2024-05-02T10:00:00.000Z",
};

function result(overrides: Partial<EvalResult> = {}): EvalResult {
  return {
    case_id: "case-1",
    case_name: "Writes about bees",
    passed: true,
    output: "All about bees",
    assertion_results: [{ kind: "contains", passed: true, detail: 'contains "bees" (ignoring case)' }],
    cost_micros: 160,
    judge_cost_micros: 0,
    latency_ms: 420,
    input_tokens: 7,
    output_tokens: 3,
    error: null,
    ...overrides,
  };
}

function run(overrides: Partial<EvalRun> = {}): EvalRun {
  return {
    id: "run-1",
    prompt_id: "prompt-1",
    version: 2,
    status: "passed",
    judge_model: null,
    started_by_name: "ada",
    started_at: "2024-05-03T10:00:00.000Z",
    finished_at: "2024-05-03T10:00:02.000Z",
    cases: 1,
    passed: 1,
    cost_median_micros: 160,
    cost_p95_micros: 160,
    latency_p50_ms: 420,
    latency_p95_ms: 420,
    price_micros: 250_000,
    fee_percent: 10,
    fee_micros: 25_000,
    margin_median_micros: 224_840,
    margin_p95_micros: 224_840,
    judge_cost_micros: 0,
    error: null,
    ...overrides,
  };
}

function estimate(overrides: Partial<EvalEstimate> = {}): EvalEstimate {
  return {
    estimate_micros: 12_500,
    largest_call_micros: 6_250,
    calls: 1,
    judge_calls: 0,
    balance_micros: 5_000_000,
    confirm_above_micros: 1_000_000,
    needs_confirmation: false,
    max_concurrent_runs: 2,
    ...overrides,
  };
}

function stubEvalsApi(extra = {}, cases: EvalCase[] = [greets], runs: EvalRun[] = []) {
  return stubSignedInApi({
    "GET /api/app/blog-writer/": () => jsonResponse(app),
    "GET /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
    "GET /api/prompts/prompt-1/versions/": () => jsonResponse([promptConfigFixture().active_version]),
    "GET /api/models/": () =>
      jsonResponse({
        models: [
          { id: "gpt-4-turbo", label: "GPT-4 Turbo", provider: "openai", configured: true, env_var: null },
          { id: "gpt-4o-mini", label: "GPT-4o mini", provider: "openai", configured: true, env_var: null },
        ],
        sandbox_fallback: false,
      }),
    [`GET ${EVALS}/cases`]: () => jsonResponse({ cases, require_passing_eval: false, max_cases: 50 }),
    [`GET ${EVALS}/runs`]: () => jsonResponse({ runs }),
    [`GET ${EVALS}/estimate?version=2`]: () => jsonResponse(estimate()),
    [`GET ${EVALS}/estimate?version=2&judge_model=gpt-4o-mini`]: () =>
      jsonResponse(estimate({ judge_calls: 1 })),
    ...extra,
  });
}

const renderEvals = () => renderRoute("/prompts/blog-writer/evals", { auth: createTestAuth("signed-in") });

describe("evals page", () => {
  it("shows the empty state, then adds a case with inputs from the input schema and an assertion", async () => {
    const api = stubEvalsApi(
      {
        [`POST ${EVALS}/cases`]: () => jsonResponse(greets, 201),
      },
      [],
    );
    renderEvals();
    // The page's code loads on first visit: the first test waits for it.
    expect(
      await screen.findByRole("heading", { name: "No test cases yet" }, { timeout: 10_000 }),
    ).toBeDefined();
    expect(await screen.findByRole("heading", { name: "No runs yet" })).toBeDefined();
    expect((screen.getByRole("button", { name: /Run on v2/ }) as HTMLButtonElement).disabled).toBe(true);

    await userEvent.click(screen.getByRole("button", { name: /Add the first case/ }));
    const form = within(screen.getByRole("form", { name: "New test case" }));
    await userEvent.type(form.getByLabelText("Case name"), "Writes about bees");
    // The input schema's one field, `topic`, is a field of the form.
    await userEvent.type(form.getByLabelText("topic"), "bees");
    await userEvent.type(form.getByLabelText("Text"), "bees");
    await userEvent.click(form.getByLabelText("Ignore case"));
    await userEvent.click(form.getByRole("button", { name: "Add case" }));

    await waitFor(() => expect(api.callsTo(`POST ${EVALS}/cases`)).toHaveLength(1));
    expect(api.callsTo(`POST ${EVALS}/cases`)[0]?.body).toEqual({
      name: "Writes about bees",
      inputs: { topic: "bees" },
      query: null,
      assertions: [{ kind: "contains", value: "bees", case_insensitive: true }],
    });
  });

  it("shows a field the server refused under that field", async () => {
    stubEvalsApi({
      [`POST ${EVALS}/cases`]: () =>
        jsonResponse(
          {
            code: "bad_request",
            message: "Invalid request: assertions.0.pattern is not a supported regular expression",
            fields: { "assertions.0.pattern": "is not a supported regular expression" },
          },
          400,
        ),
    });
    renderEvals();
    await userEvent.click(await screen.findByRole("button", { name: /Add case/ }));
    const form = within(screen.getByRole("form", { name: "New test case" }));
    await userEvent.type(form.getByLabelText("Case name"), "Bad");
    await userEvent.selectOptions(form.getByLabelText("Assertion 1"), "regex");
    await userEvent.type(form.getByLabelText("Pattern (RE2)"), "(?<=a)b");
    await userEvent.click(form.getByRole("button", { name: "Add case" }));
    expect(await form.findByText("is not a supported regular expression")).toBeDefined();
    // Said once: under the field, not again in a banner.
    expect(screen.getAllByText(/is not a supported regular expression/)).toHaveLength(1);
    expect(form.queryByRole("alert")).toBeNull();
  });

  it("shows in the banner only what no field shows: a refusal without fields, or a field the form has not", async () => {
    const answers = [
      { code: "conflict", message: "This prompt has 50 cases, the most a run takes", status: 409 },
      {
        code: "bad_request",
        message: "Invalid request: name is required; inputs.mood is not an input of the latest version",
        fields: { name: "is required", "inputs.mood": "is not an input of the latest version" },
        status: 400,
      },
    ];
    stubEvalsApi({
      [`POST ${EVALS}/cases`]: () => {
        const answer = answers.shift();
        return jsonResponse(answer, answer?.status ?? 500);
      },
    });
    renderEvals();
    await userEvent.click(await screen.findByRole("button", { name: /Add case/ }));
    const form = within(screen.getByRole("form", { name: "New test case" }));
    await userEvent.type(form.getByLabelText("Case name"), "Many");
    await userEvent.click(form.getByRole("button", { name: "Add case" }));
    expect((await form.findByRole("alert")).textContent).toBe(
      "This prompt has 50 cases, the most a run takes",
    );

    await userEvent.click(form.getByRole("button", { name: "Add case" }));
    await waitFor(() =>
      expect(form.getByRole("alert").textContent).toBe("inputs.mood is not an input of the latest version"),
    );
    expect(screen.getAllByText(/is required/)).toHaveLength(1);
    expect(form.getByRole("alert").textContent).not.toContain("name is required");
  });

  it("runs the cases on a version with a judge and shows each result, the cost and the margin", async () => {
    const finished = run({
      results: [
        result(),
        result({
          case_id: "case-2",
          case_name: "Polite",
          passed: false,
          assertion_results: [{ kind: "rubric", passed: false, detail: "never says please" }],
          cost_micros: 240,
        }),
      ],
      status: "failed",
      cases: 2,
      passed: 1,
      judge_model: "gpt-4o-mini",
      cost_median_micros: 160,
      cost_p95_micros: 240,
      margin_median_micros: 224_840,
      margin_p95_micros: 224_760,
    });
    const api = stubEvalsApi({
      [`POST ${EVALS}/runs`]: () => jsonResponse(finished, 201),
      [`GET ${EVALS}/runs/run-1`]: () => jsonResponse(finished),
    });
    renderEvals();
    expect(await screen.findByRole("heading", { name: "Writes about bees" })).toBeDefined();
    await screen.findByRole("option", { name: "GPT-4o mini" });
    await userEvent.selectOptions(screen.getByLabelText("Judge model (for rubrics)"), "gpt-4o-mini");
    await userEvent.click(screen.getByRole("button", { name: /Run on v2/ }));
    await waitFor(() => expect(api.callsTo(`POST ${EVALS}/runs`)).toHaveLength(1));
    expect(api.callsTo(`POST ${EVALS}/runs`)[0]?.body).toEqual({ version: 2, judge_model: "gpt-4o-mini" });

    const results = within(await screen.findByRole("list", { name: "Case results" }));
    expect(results.getByText(/never says please/)).toBeDefined();
    expect(results.getByText(/Polite/).textContent).toContain("failed");
    expect(screen.getByText("1 / 2")).toBeDefined();
    // Cost per call $0.00016 (160 µ$), to the micro-dollar; margin $0.22484: price − fee − cost.
    expect(screen.getByText("$0.00016")).toBeDefined();
    expect(screen.getByText("$0.22484")).toBeDefined();
    expect(screen.getByText(/price \$0\.25 − fee \$0\.025 − cost/)).toBeDefined();
  });

  it("shows the run's estimate and, above the threshold, asks before starting it with the figure confirmed", async () => {
    const large = estimate({
      estimate_micros: 1_500_000,
      balance_micros: 1_000_000,
      needs_confirmation: true,
    });
    const api = stubEvalsApi({
      [`GET ${EVALS}/estimate?version=2`]: () => jsonResponse(large),
      [`POST ${EVALS}/runs`]: () => jsonResponse(run(), 201),
      [`GET ${EVALS}/runs/run-1`]: () => jsonResponse(run()),
    });
    renderEvals();
    expect(await screen.findByText(/\$1\.50/)).toBeDefined();
    expect(screen.getByText(/paid from your wallet \(\$1\.00 available\)/)).toBeDefined();
    await userEvent.click(screen.getByRole("button", { name: /Run on v2/ }));
    // Not started yet: the question comes first, naming the figure and the wallet.
    expect(
      await screen.findByText(/may cost up to \$1\.50 in model costs, more than your wallet/),
    ).toBeDefined();
    expect(api.callsTo(`POST ${EVALS}/runs`)).toHaveLength(0);
    await userEvent.click(screen.getByRole("button", { name: "Start the run" }));
    await waitFor(() => expect(api.callsTo(`POST ${EVALS}/runs`)).toHaveLength(1));
    expect(api.callsTo(`POST ${EVALS}/runs`)[0]?.body).toEqual({
      version: 2,
      confirm_cost_micros: 1_500_000,
    });
  });

  it("compares two runs case by case and flips the release gate", async () => {
    const a = run({ id: "run-a", version: 2, status: "failed", passed: 0 });
    const b = run({ id: "run-b", version: 3 });
    const api = stubEvalsApi(
      {
        [`GET ${EVALS}/compare?a=run-a&b=run-b`]: () =>
          jsonResponse({
            a,
            b,
            cases: [
              {
                case_id: "case-1",
                case_name: "Writes about bees",
                a: result({ passed: false }),
                b: result(),
                change: "fixed",
              },
            ],
          }),
        [`PATCH ${EVALS}/settings`]: () =>
          jsonResponse({ cases: [greets], require_passing_eval: true, max_cases: 50 }),
      },
      [greets],
      [b, a],
    );
    renderEvals();
    await userEvent.selectOptions(await screen.findByLabelText("Run A"), "run-a");
    await userEvent.selectOptions(screen.getByLabelText("Run B"), "run-b");
    const table = within(await screen.findByRole("table", { name: "Comparison by case" }));
    expect(table.getByText("fixed")).toBeDefined();
    expect(table.getByText("A (v2)")).toBeDefined();

    const gate = screen.getByRole("switch", { name: /Require a passing eval run/ });
    expect(gate.getAttribute("aria-checked")).toBe("false");
    await userEvent.click(gate);
    await waitFor(() => expect(gate.getAttribute("aria-checked")).toBe("true"));
    expect(api.callsTo(`PATCH ${EVALS}/settings`)[0]?.body).toEqual({ require_passing_eval: true });
  });

  it("says when the prompt is not found", async () => {
    stubSignedInApi({
      "GET /api/app/blog-writer/": () =>
        jsonResponse({ code: "not_found", message: "Application not found" }, 404),
    });
    renderEvals();
    expect(await screen.findByRole("heading", { name: "Prompt not found" })).toBeDefined();
  });
});
