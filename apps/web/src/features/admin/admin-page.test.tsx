import type { AdminOverview } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { profileFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

function overviewFixture(suspended = false): AdminOverview {
  return {
    period: { from: "2026-01-01T00:00:00.000Z", to: "2026-02-01T00:00:00.000Z" },
    gross_micros: 50_000_000,
    fee_income_micros: 5_000_000,
    model_cost_paid_micros: 1_234_500,
    model_cost_recovered_micros: 1_234_500,
    refunded_cents: 1_000,
    disputed_cents: 500,
    payouts: { source: "ledger", queued_micros: 0, in_transit_micros: 0, paid_micros: 0, failed_micros: 0 },
    disputes: [
      {
        id: "d1",
        payment_intent: "pi_disputed",
        payer_email: "payer@example.com",
        amount_cents: 500,
        status: "open",
        reason: "fraudulent",
        created_at: "2026-01-02T00:00:00.000Z",
      },
    ],
    debts: [{ user_id: "u2", email: "debtor@example.com", owed_micros: 2_500_000 }],
    top_apps: [
      {
        id: "app-1",
        slug: "haiku",
        name: "Haiku Writer",
        owner_email: "creator@example.com",
        gross_micros: 45_000_000,
        calls: 900,
        suspended,
      },
    ],
    top_creators: [{ id: "c1", email: "creator@example.com", gross_micros: 45_000_000, suspended: false }],
    suspensions: suspended
      ? [
          {
            target_kind: "application",
            target_id: "app-1",
            label: "haiku",
            reason: "spam",
            created_at: "2026-01-03T00:00:00.000Z",
          },
        ]
      : [],
  };
}

describe("/admin", () => {
  it("shows an operator the figures, disputes and debts, and suspends an app with a reason", async () => {
    let suspended = false;
    const api = stubSignedInApi({
      "GET /api/admin/access": () => jsonResponse({ admin: true }),
      "GET /api/auth/roles/": () => jsonResponse({ roles: ["user", "operator"], is_creator: false }),
      "GET /api/admin/audit?limit=50": () =>
        jsonResponse({
          entries: suspended
            ? [
                {
                  id: 1,
                  actor_email: "op@example.com",
                  action: "app.suspend",
                  target_kind: "application",
                  target_id: "app-1",
                  reason: "spam",
                  details: {},
                  created_at: "2026-01-03T00:00:00.000Z",
                },
              ]
            : [],
        }),
      "POST /api/admin/apps/app-1/suspend": () => {
        suspended = true;
        return jsonResponse({ suspended: true, changed: true });
      },
    });
    // Any period the page asks for answers the same figures.
    const original = api.fetchMock.getMockImplementation();
    api.fetchMock.mockImplementation(async (input, init) => {
      if (String(input).startsWith("/api/admin/overview?")) return jsonResponse(overviewFixture(suspended));
      return original ? original(input, init) : jsonResponse({}, 599);
    });
    renderRoute("/admin", { auth: createTestAuth("signed-in") });

    const figures = await screen.findByRole("region", { name: "Figures" });
    expect(within(figures).getByText("$50.00")).toBeTruthy();
    expect(within(figures).getByText("$5.00")).toBeTruthy();
    expect(within(figures).getByText("$2.50")).toBeTruthy();
    expect(within(screen.getByRole("region", { name: "Disputes" })).getByText("pi_disputed")).toBeTruthy();
    expect(
      within(screen.getByRole("region", { name: "Debts" })).getByText("debtor@example.com"),
    ).toBeTruthy();
    // The nav shows Admin to an operator.
    const nav = screen.getByRole("navigation", { name: "Main" });
    await waitFor(() =>
      expect(within(nav).getByRole("link", { name: "Admin" }).getAttribute("href")).toBe("/admin"),
    );

    const apps = screen.getByRole("region", { name: "Top apps" });
    await userEvent.click(within(apps).getByRole("button", { name: "Suspend" }));
    const form = screen.getByRole("form", { name: "suspend haiku" });
    // The form opens below the tables; its reason takes the focus (keyboard users land on it).
    expect(document.activeElement).toBe(within(form).getByRole("textbox"));
    await userEvent.type(within(form).getByRole("textbox"), "spam");
    await userEvent.click(within(form).getByRole("button", { name: "Suspend" }));
    await waitFor(() => expect(api.callsTo("POST /api/admin/apps/app-1/suspend")).toHaveLength(1));
    expect(api.callsTo("POST /api/admin/apps/app-1/suspend")[0]?.body).toEqual({ reason: "spam" });
    const log = screen.getByRole("region", { name: "Audit log" });
    expect(await within(log).findByText("app.suspend")).toBeTruthy();
    expect(
      await within(screen.getByRole("region", { name: "Top apps" })).findByText("Suspended"),
    ).toBeTruthy();
  });

  it("tells anyone else once why the API refused them, asks for nothing more, and shows no Admin link", async () => {
    const refusal = {
      code: "forbidden",
      message: "Only the platform's operators may use /admin",
    };
    const api = stubSignedInApi({
      "GET /api/admin/access": () => jsonResponse(refusal, 403),
      "GET /api/auth/roles/": () => jsonResponse({ roles: ["user"], is_creator: false }),
    });
    renderRoute("/admin", { auth: createTestAuth("signed-in") });
    expect(await screen.findByText("This page is for the platform's operators")).toBeTruthy();
    expect(screen.getAllByText(/Only the platform's operators may use/)).toHaveLength(1);
    expect(screen.getByRole("link", { name: /Back to dashboard/ }).getAttribute("href")).toBe("/dashboard");
    // No period to pick, no sections failing one by one: nothing else was asked of the API.
    expect(screen.queryByLabelText("From")).toBeNull();
    expect(screen.queryByRole("region", { name: "Figures" })).toBeNull();
    expect(api.fetchMock.mock.calls.filter(([input]) => String(input).startsWith("/api/admin/")).length).toBe(
      1,
    );
    const nav = screen.getByRole("navigation", { name: "Main" });
    expect(within(nav).queryByRole("link", { name: "Admin" })).toBeNull();
  });

  it("tells a non-operator with an unverified address they are not an operator, not to verify it", async () => {
    stubSignedInApi(
      {
        "GET /api/admin/access": () =>
          jsonResponse(
            {
              code: "forbidden",
              message: "Only the platform's operators may use /admin, and you are not one",
            },
            403,
          ),
        "GET /api/auth/roles/": () => jsonResponse({ roles: ["user"], is_creator: false }),
      },
      profileFixture({ emailVerified: false }),
    );
    renderRoute("/admin", { auth: createTestAuth("signed-in") });

    expect(await screen.findByText(/and you are not one/)).toBeTruthy();
    expect(screen.queryByText("Verify your email address")).toBeNull();
  });

  it("asks a future operator (their address not verified yet) to verify it", async () => {
    stubSignedInApi(
      {
        "GET /api/admin/access": () =>
          jsonResponse(
            {
              code: "email_unverified",
              message: "Only the platform's operators may use /admin, and a@b.test is not verified yet",
            },
            403,
          ),
        "GET /api/auth/roles/": () => jsonResponse({ roles: ["user"], is_creator: false }),
      },
      profileFixture({ emailVerified: false }),
    );
    renderRoute("/admin", { auth: createTestAuth("signed-in") });

    expect(await screen.findByText("Verify your email address")).toBeTruthy();
  });

  it("counts the day shown in To: the API's exclusive `to` is the day after", async () => {
    const api = stubSignedInApi({
      "GET /api/admin/access": () => jsonResponse({ admin: true }),
      "GET /api/auth/roles/": () => jsonResponse({ roles: ["user", "operator"], is_creator: false }),
      "GET /api/admin/audit?limit=50": () => jsonResponse({ entries: [] }),
    });
    const asked: string[] = [];
    const original = api.fetchMock.getMockImplementation();
    api.fetchMock.mockImplementation(async (input, init) => {
      if (String(input).startsWith("/api/admin/overview?")) {
        asked.push(String(input));
        return jsonResponse(overviewFixture());
      }
      return original ? original(input, init) : jsonResponse({}, 599);
    });
    renderRoute("/admin", { auth: createTestAuth("signed-in") });
    await screen.findByRole("region", { name: "Figures" });
    const to = screen.getByLabelText("To") as HTMLInputElement;
    const today = new Date().toISOString().slice(0, 10);
    expect(to.value).toBe(today);
    const tomorrow = new Date(Date.parse(`${today}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(asked.at(-1)).toContain(`&to=${tomorrow}`);
    // A table that scrolls sideways on a phone can be reached and scrolled by keyboard.
    const table = within(screen.getByRole("region", { name: "Top apps" })).getByRole("table");
    expect(table.parentElement?.getAttribute("tabindex")).toBe("0");
  });
});
