import type { OnlineEvalSummary } from "@promptmint/contracts";
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
const ONLINE = "/api/prompts/prompt-1/online-evals";

function summary(overrides: Partial<OnlineEvalSummary> = {}): OnlineEvalSummary {
  return {
    settings: null,
    spent_today_micros: 0,
    cap_reached: false,
    versions: [],
    recent: [],
    ...overrides,
  };
}

function stubApi(online: () => Response, extra = {}) {
  return stubSignedInApi({
    "GET /api/app/blog-writer/": () => jsonResponse(app),
    "GET /api/app/blog-writer/prompt/": () => jsonResponse(promptConfigFixture()),
    "GET /api/prompts/prompt-1/versions/": () => jsonResponse([promptConfigFixture().active_version]),
    "GET /api/models/": () => jsonResponse({ models: [], sandbox_fallback: false }),
    [`GET ${EVALS}/cases`]: () => jsonResponse({ cases: [], require_passing_eval: false, max_cases: 50 }),
    [`GET ${EVALS}/runs`]: () => jsonResponse({ runs: [] }),
    [`GET ${ONLINE}`]: online,
    ...extra,
  });
}

const renderEvals = () => renderRoute("/prompts/blog-writer/evals", { auth: createTestAuth("signed-in") });

describe("online evals panel", () => {
  it("turns online evals on with a sample, a rubric and a daily cap in dollars", async () => {
    const saved = summary({
      settings: {
        enabled: true,
        sample_percent: 10,
        assertions: [{ kind: "rubric", rubric: "answers politely" }],
        daily_cap_cents: 250,
      },
    });
    const api = stubApi(() => jsonResponse(summary()), { [`PUT ${ONLINE}`]: () => jsonResponse(saved) });
    renderEvals();
    const form = within(
      await screen.findByRole("form", { name: "Online eval settings" }, { timeout: 10_000 }),
    );
    expect(await screen.findByRole("heading", { name: "No live calls judged yet" })).toBeDefined();
    await userEvent.click(form.getByRole("switch", { name: /Judge live calls/ }));
    const sample = form.getByLabelText(/Sample/);
    await userEvent.clear(sample);
    await userEvent.type(sample, "10");
    const cap = form.getByLabelText(/Daily cap/);
    await userEvent.clear(cap);
    await userEvent.type(cap, "2.50");
    await userEvent.type(form.getByLabelText("Rubric"), "answers politely");
    await userEvent.click(form.getByRole("button", { name: "Save online evals" }));
    await waitFor(() => expect(api.callsTo(`PUT ${ONLINE}`)).toHaveLength(1));
    expect(api.callsTo(`PUT ${ONLINE}`)[0]?.body).toEqual({
      enabled: true,
      sample_percent: 10,
      assertions: [{ kind: "rubric", rubric: "answers politely" }],
      daily_cap_cents: 250,
    });
  });

  it("shows today's spend against the cap, scores per version beside revenue and margin, and recent results", async () => {
    stubApi(() =>
      jsonResponse(
        summary({
          settings: {
            enabled: true,
            sample_percent: 5,
            assertions: [{ kind: "contains", value: "hello" }],
            daily_cap_cents: 100,
          },
          spent_today_micros: 1_000_000,
          cap_reached: true,
          versions: [
            {
              version: 2,
              experiment_id: null,
              scored_calls: 40,
              passed_calls: 30,
              pass_rate: 0.75,
              mean_score: 0.8,
              eval_cost_micros: 120_000,
              revenue_micros: 10_000_000,
              margin_micros: 7_500_000,
            },
          ],
          recent: [
            {
              invocation_id: "inv-1",
              version: 2,
              passed: false,
              score: 0.5,
              created_at: "2024-05-03T10:00:00.000Z",
            },
          ],
        }),
      ),
    );
    renderEvals();
    const spend = await screen.findByLabelText("Today's spend", {}, { timeout: 10_000 });
    expect(spend.textContent).toContain("$1.00 of $1.00");
    expect(within(spend).getByText(/cap reached/)).toBeDefined();
    const table = within(screen.getByRole("table", { name: "Online eval scores per version" }));
    const row = table.getByRole("row", { name: /v2/ });
    expect(row.textContent).toContain("40");
    expect(row.textContent).toContain("75.0%");
    expect(row.textContent).toContain("0.80");
    expect(row.textContent).toContain("$0.12");
    expect(row.textContent).toContain("$10.00");
    expect(row.textContent).toContain("+$7.50");
    const recent = within(screen.getByRole("region", { name: "Recent online results" }));
    expect(recent.getByText("fail")).toBeDefined();
    expect(recent.getByText("score 0.50")).toBeDefined();
  });

  it("says which field the server refused", async () => {
    stubApi(() => jsonResponse(summary()), {
      [`PUT ${ONLINE}`]: () =>
        jsonResponse(
          {
            code: "bad_request",
            message: "Invalid request: sample_percent must be at least 0.1",
            fields: { sample_percent: "must be at least 0.1" },
          },
          400,
        ),
    });
    renderEvals();
    const form = within(
      await screen.findByRole("form", { name: "Online eval settings" }, { timeout: 10_000 }),
    );
    const sample = form.getByLabelText(/Sample/);
    await userEvent.clear(sample);
    await userEvent.type(sample, "0");
    await userEvent.click(form.getByRole("button", { name: "Save online evals" }));
    expect(await form.findByText("must be at least 0.1")).toBeDefined();
  });
});
