import type { EarningsSummary, Payout } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { versionFiguresFixture } from "../../test/analytics-test-support";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { moneyFiguresFixture, profileFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

function summary(overrides: Partial<EarningsSummary> = {}): EarningsSummary {
  return {
    gateway: "sandbox",
    currency: "usd",
    account: {
      state: "enabled",
      details_submitted: true,
      payouts_enabled: true,
      disabled_reason: null,
      requirements_due: [],
    },
    balance_micros: 20_004_500,
    available_micros: 12_504_500,
    reserved_micros: 0,
    withdrawable_cents: 1250,
    pending: [{ amount_micros: 7_500_000, available_at: "2026-12-01T10:00:00.000Z" }],
    in_transit_cents: 0,
    paid_out_cents: 0,
    minimum_cents: 1000,
    hold_days: 7,
    schedule: "weekly",
    now: "2026-11-24T10:00:00.000Z",
    payouts: [],
    ...overrides,
  };
}

const payout = (overrides: Partial<Payout> = {}): Payout => ({
  id: "7b0c0d4e-0000-4000-8000-000000000001",
  amount_cents: 1250,
  currency: "usd",
  status: "paid",
  automatic: false,
  failure_code: null,
  failure_reason: null,
  created_at: "2026-11-24T10:00:00.000Z",
  in_transit_at: "2026-11-24T10:00:00.000Z",
  paid_at: "2026-11-24T10:00:01.000Z",
  failed_at: null,
  ...overrides,
});

const render = () => renderRoute("/earnings", { auth: createTestAuth("signed-in") });

/** A creator who has not started payout onboarding. */
const NOT_ONBOARDED: EarningsSummary["account"] = {
  state: "not_started",
  details_submitted: false,
  payouts_enabled: false,
  disabled_reason: null,
  requirements_due: [],
};

describe("the Earnings page", () => {
  it("shows available, pending with its date, an empty history, and withdraws with an Idempotency-Key", async () => {
    let current = summary();
    const api = stubSignedInApi({
      "GET /api/payouts/": () => jsonResponse(current),
      "POST /api/payouts/": () => {
        current = summary({
          available_micros: 4500,
          withdrawable_cents: 0,
          paid_out_cents: 1250,
          payouts: [payout()],
        });
        return jsonResponse(payout(), 201);
      },
    });
    render();
    const figures = await screen.findByRole("region", { name: "Earnings figures" });
    expect(within(figures).getByText("Available").parentElement?.textContent).toContain("$12.50");
    expect(within(figures).getByText("Pending").parentElement?.textContent).toContain("$7.50");
    expect(screen.getByText("No payouts yet")).toBeDefined();
    expect(screen.getByText("Sandbox payouts — no real money moves")).toBeDefined();
    await userEvent.click(screen.getByRole("button", { name: "Withdraw $12.50" }));
    await waitFor(() => expect(api.callsTo("POST /api/payouts/")).toHaveLength(1));
    expect(api.callsTo("POST /api/payouts/")[0]?.headers.get("Idempotency-Key")).toMatch(/^[0-9a-f-]{36}$/);
    const history = await screen.findByRole("table", { name: "Payout history" });
    expect(within(history).getByText("Paid")).toBeDefined();
    expect(screen.getByRole("button", { name: "Withdraw $0.00" })).toHaveProperty("disabled", true);
    // The history fits a phone: the date alone in the cell, the time on hover; its scroller takes focus.
    const when = history.querySelector("tbody time");
    expect(when?.getAttribute("dateTime")).toBe("2026-11-24T10:00:00.000Z");
    expect(when?.textContent).toBe(new Date("2026-11-24T10:00:00.000Z").toLocaleDateString());
    expect(when?.getAttribute("title")).toBe(new Date("2026-11-24T10:00:00.000Z").toLocaleString());
    expect(history.parentElement?.getAttribute("tabindex")).toBe("0");
  });

  it("links each paid payout to its receipt, and no other payout", async () => {
    const failed = payout({
      id: "7b0c0d4e-0000-4000-8000-000000000002",
      status: "failed",
      failure_reason: "Bank said no",
    });
    stubSignedInApi({
      "GET /api/payouts/": () => jsonResponse(summary({ payouts: [payout(), failed] })),
      "GET /api/receipts/": () =>
        jsonResponse({
          receipts: [
            {
              number: "PM-000007",
              kind: "payout",
              source_id: payout().id,
              description: "Payout of your earnings",
              amount_cents: 1250,
              currency: "USD",
              status: "paid",
              occurred_at: "2026-11-24T10:00:01.000Z",
            },
          ],
        }),
    });
    render();
    const history = await screen.findByRole("table", { name: "Payout history" });
    const [paidRow, failedRow] = within(history).getAllByRole("row").slice(1);
    expect(
      await within(paidRow as HTMLElement).findByRole("button", { name: "Download receipt PM-000007 (PDF)" }),
    ).toBeDefined();
    expect(
      within(paidRow as HTMLElement).getByRole("button", { name: "Open receipt PM-000007" }),
    ).toBeDefined();
    expect(within(failedRow as HTMLElement).queryAllByRole("button")).toHaveLength(0);
  });

  it("says what is kept back for plans' unused included calls beside the available figure", async () => {
    stubSignedInApi({
      "GET /api/payouts/": () => jsonResponse(summary({ reserved_micros: 3_600_000 })),
    });
    render();
    const figures = await screen.findByRole("region", { name: "Earnings figures" });
    expect(within(figures).getByText("Available").parentElement?.textContent).toContain(
      "$3.60 kept for your plans' unused included calls",
    );
  });

  it("shows the calls' gross, fee, model cost and net of the last 30 days, and sub-cent earnings exactly", async () => {
    stubSignedInApi({
      "GET /api/payouts/": () => jsonResponse(summary()),
      "GET /api/analytics/figures/?days=30": () =>
        jsonResponse(moneyFiguresFixture({ gross_micros: 2_000_000, model_cost_micros: 4_500 })),
    });
    render();
    const figures = await screen.findByRole("region", { name: "Earnings figures" });
    // $12.5045 available reads $12.50, the half cent below it one hover away.
    const available = within(figures).getByText("Available").nextSibling as HTMLElement;
    expect(available.textContent).toBe("$12.50");
    expect(within(available).getByTitle("Exactly $12.5045")).toBeDefined();
    const money = within(await screen.findByLabelText("From paid calls, Last 30 days"));
    await waitFor(() => expect(money.getByText("Gross").nextSibling?.textContent).toBe("$2.00"));
    expect(money.getByText("Platform fee").nextSibling?.textContent).toBe("-$0.20");
    // Less than half a cent taken off never reads as nothing.
    expect(money.getByText("Model cost").nextSibling?.textContent).toBe("-<$0.01");
    expect(money.getByTitle("Exactly -$0.0045")).toBeDefined();
    expect(money.getByText("Net").nextSibling?.textContent).toBe("$1.80");
  });

  it("breaks the period down by app and version, totals exactly the figures, money exact on hover", async () => {
    stubSignedInApi({
      "GET /api/payouts/": () => jsonResponse(summary()),
      "GET /api/analytics/figures/?days=30": () =>
        jsonResponse(moneyFiguresFixture({ gross_micros: 2_000_000, model_cost_micros: 4_500 })),
      "GET /api/analytics/figures/versions/?days=30": () =>
        jsonResponse({
          figures: moneyFiguresFixture({ gross_micros: 2_000_000, model_cost_micros: 4_500 }),
          applications: [
            {
              application_name: "Blog Writer",
              application_slug: "blog-writer",
              application_type: "prompt",
              production_version: 12,
              versions: [
                versionFiguresFixture({
                  version: 13,
                  invocations: 40,
                  gross_micros: 1_400_000,
                  fee_micros: 140_000,
                  model_cost_micros: 4_500,
                  net_micros: 1_255_500,
                }),
                versionFiguresFixture({
                  version: 12,
                  production: true,
                  invocations: 20,
                  gross_micros: 600_000,
                  fee_micros: 60_000,
                  model_cost_micros: 0,
                  net_micros: 540_000,
                }),
              ],
            },
          ],
        }),
    });
    render();
    const table = await screen.findByRole("region", { name: "By app and version" }, { timeout: 5_000 });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(
      rows.map((row) => [...row.querySelectorAll("td")].slice(0, 3).map((cell) => cell.textContent)),
    ).toEqual([
      ["Blog Writer", "v13", "40"],
      ["Blog Writer", "v12Production", "20"],
      ["Total", "60", ""],
    ]);
    expect(
      within(rows[0] as HTMLElement)
        .getByRole("link", { name: "Blog Writer" })
        .getAttribute("href"),
    ).toBe("/applications/blog-writer/analytics");
    expect(
      within(rows[0] as HTMLElement)
        .getByText("$1.26")
        .getAttribute("title"),
    ).toBe("Exactly $1.2555");
    const total = rows[2] as HTMLElement;
    expect(within(total).getByText("$2.00")).toBeDefined();
    expect(within(total).getByText("$1.80").getAttribute("title")).toBe("Exactly $1.7955");
  });

  it("offers onboarding when payouts are not set up, and shows a failed payout's reason", async () => {
    stubSignedInApi({
      "GET /api/payouts/": () =>
        jsonResponse(
          summary({
            account: NOT_ONBOARDED,
            payouts: [payout({ status: "failed", failure_reason: "The bank account has been closed" })],
          }),
        ),
    });
    render();
    expect(await screen.findByRole("button", { name: "Set up payouts" })).toBeDefined();
    expect(screen.queryByRole("button", { name: /^Withdraw/ })).toBeNull();
    const history = screen.getByRole("table", { name: "Payout history" });
    expect(within(history).getByText("Failed")).toBeDefined();
    expect(within(history).getByText("The bank account has been closed")).toBeDefined();
  });

  it("says so when the earnings cannot be loaded", async () => {
    stubSignedInApi({ "GET /api/payouts/": () => jsonResponse({ message: "Database unavailable" }, 503) });
    render();
    expect(await screen.findByText(/Failed to load earnings: Database unavailable/)).toBeDefined();
  });

  it("asks an unverified creator to verify their address, and resends the link on request", async () => {
    let sends = 0;
    const api = stubSignedInApi(
      {
        "GET /api/payouts/": () =>
          jsonResponse(
            summary({
              account: NOT_ONBOARDED,
            }),
          ),
        "POST /api/auth/verification-email/": () =>
          ++sends === 1
            ? jsonResponse({ email: "ada@example.com", email_verified: false, sent: true })
            : jsonResponse(
                { code: "rate_limited", message: "A verification email was sent moments ago", status: 429 },
                429,
              ),
      },
      profileFixture({ emailVerified: false }),
    );
    render();
    expect(await screen.findByText("Verify your email address")).toBeDefined();
    expect(screen.getByText(/Payouts go to whoever owns your address/)).toBeDefined();
    await userEvent.click(screen.getByRole("button", { name: "Resend verification email" }));
    expect(await screen.findByText("A new link is on its way to ada@example.com.")).toBeDefined();
    expect(api.callsTo("POST /api/auth/verification-email/")).toHaveLength(1);
    await userEvent.click(screen.getByRole("button", { name: "Resend verification email" }));
    expect(await screen.findByText("A verification email was sent moments ago")).toBeDefined();
  });

  it("shows no verification notice to a verified creator", async () => {
    stubSignedInApi({ "GET /api/payouts/": () => jsonResponse(summary()) });
    render();
    expect(await screen.findByRole("heading", { name: "Earnings", level: 1 })).toBeDefined();
    await screen.findByText("Available");
    expect(screen.queryByText("Verify your email address")).toBeNull();
  });
});
