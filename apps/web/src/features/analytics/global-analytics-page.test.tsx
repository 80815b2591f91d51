import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it } from "vitest";
import {
  globalDashboardFixture,
  rowWith,
  statValue,
  stubResizeObserver,
  windowDays,
} from "../../test/analytics-test-support";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { moneyFiguresFixture } from "../../test/fixtures";
import { currentPath, renderRoute } from "../../test/render-route";

const DASHBOARD = "GET /api/analytics/dashboard/?days=30";

function renderGlobalAnalytics(path = "/analytics") {
  return renderRoute(path, { auth: createTestAuth("signed-in") });
}

describe("global analytics", () => {
  beforeEach(() => stubResizeObserver());

  it("shows the overview cards, the four charts and each application's performance", async () => {
    const api = stubSignedInApi({
      [DASHBOARD]: () => jsonResponse(globalDashboardFixture()),
      "GET /api/analytics/figures/?days=30": () =>
        jsonResponse(moneyFiguresFixture({ gross_micros: 50_000, model_cost_micros: 12_345 })),
    });
    renderGlobalAnalytics();

    expect(screen.getByRole("heading", { name: "Global Analytics", level: 1 })).toBeDefined();
    expect(
      screen.getByText("Comprehensive analytics and insights across all your applications"),
    ).toBeDefined();
    expect(screen.getByRole("status").textContent).toContain("Loading analytics...");

    await screen.findByRole("region", { name: "Summary" });
    expect(statValue("Applications")).toBe("3");
    expect(statValue("Total Invocations")).toBe("12,345");
    expect(statValue("Active Users")).toBe("87");
    expect(statValue("Success Rate")).toBe("97.5%");

    // Gross, fee, model cost and net of the window, to the cent; the exact sub-cent figures on hover.
    const money = within(await screen.findByLabelText("Earnings, Last 30 days"));
    await waitFor(() => expect(money.getByText("Gross").nextSibling?.textContent).toBe("$0.05"));
    expect(money.getByText("Platform fee").nextSibling?.textContent).toBe("-$0.01");
    expect(money.getByTitle("Exactly -$0.005")).toBeDefined();
    expect(money.getByText("Model cost").nextSibling?.textContent).toBe("-$0.01");
    expect(money.getByTitle("Exactly -$0.012345")).toBeDefined();
    expect(money.getByText("Net").nextSibling?.textContent).toBe("$0.03");
    expect(money.getByTitle("Exactly $0.032655")).toBeDefined();

    for (const chart of [
      "Invocations Over Time",
      "Success vs Error Rate",
      "Response Time Trend",
      "Token Usage",
    ]) {
      expect(screen.getByRole("region", { name: chart })).toBeDefined();
    }

    const table = screen.getByRole("region", { name: "Application Performance" });
    const headers = within(table)
      .getAllByRole("columnheader")
      .map((header) => header.textContent);
    expect(headers).toEqual([
      "Application",
      "Type",
      "Invocations",
      "Success Rate",
      "Avg Response Time",
      "Last Used",
    ]);
    const blog = within(rowWith(table, "Blog Writer"));
    expect(blog.getByRole("link", { name: "Blog Writer" }).getAttribute("href")).toBe(
      "/applications/blog-writer/analytics",
    );
    expect(blog.getByText("prompt").className).toContain("green");
    expect(blog.getByText("12,000")).toBeDefined();
    expect(blog.getByText("98.3%")).toBeDefined();
    expect(blog.getByText("1.2 s")).toBeDefined();
    expect(blog.getByText(new Date("2025-11-29T14:30:00.000Z").toLocaleDateString())).toBeDefined();
    const flow = within(rowWith(table, "Support Flow"));
    expect(flow.getByText("workflow").className).toContain("blue");
    expect(flow.getByText("80.0%")).toBeDefined();
    expect(flow.getByText("2.5 s")).toBeDefined();
    expect(flow.getByText("Never")).toBeDefined();

    expect(screen.queryByRole("region", { name: "Top Errors" })).toBeNull();
    expect(api.callsTo(DASHBOARD)).toHaveLength(1);
  });

  it("shows '—' and 'No calls yet' for an application never called, not 0.0% and 0 s", async () => {
    const dashboard = globalDashboardFixture();
    const idle = {
      ...dashboard.applications[0],
      application_name: "Idle App",
      application_slug: "idle-app",
      invocations: 0,
      success_rate: 0,
      avg_response_time: 0,
      last_used: "",
    };
    stubSignedInApi({
      [DASHBOARD]: () => jsonResponse({ ...dashboard, applications: [...dashboard.applications, idle] }),
    });
    renderGlobalAnalytics();

    const table = await screen.findByRole("region", { name: "Application Performance" });
    const row = within(rowWith(table, "Idle App"));
    expect(row.getByText("No calls yet", { selector: "span.block" })).toBeDefined();
    expect(row.getAllByTitle("No calls yet")).toHaveLength(2);
    expect(row.queryByText("0.0%")).toBeNull();
  });

  it("lists the top errors by count, naming a missing type 'Unknown Error'", async () => {
    stubSignedInApi({
      [DASHBOARD]: () =>
        jsonResponse(
          globalDashboardFixture({
            errors: [
              { error_type: "upstream_timeout", count: 3 },
              { error_type: null, count: 1_200 },
            ],
          }),
        ),
    });
    renderGlobalAnalytics();

    const errors = await screen.findByRole("region", { name: "Top Errors" });
    const legend = within(errors).getByRole("list", { name: "Error types" });
    const items = within(legend)
      .getAllByRole("listitem")
      .map((item) => item.textContent);
    expect(items).toEqual(["Unknown Error1,200", "upstream_timeout3"]);
  });

  it("starts on 30 days and reloads with ?days=7 when 7d is chosen", async () => {
    const api = stubSignedInApi({
      [DASHBOARD]: () => jsonResponse(globalDashboardFixture()),
      "GET /api/analytics/dashboard/?days=7": () =>
        jsonResponse(
          globalDashboardFixture({
            overview: { total_applications: 3, total_invocations: 2_001, total_users: 5, success_rate: 100 },
          }),
        ),
    });
    const { router } = renderGlobalAnalytics();

    const periods = screen.getByRole("group", { name: "Time period" });
    const pressed = () =>
      within(periods)
        .getAllByRole("button")
        .map((button) => `${button.textContent}:${button.getAttribute("aria-pressed")}`);
    expect(pressed()).toEqual(["7d:false", "30d:true", "90d:false"]);
    await waitFor(() => expect(statValue("Total Invocations")).toBe("12,345"));

    await userEvent.click(within(periods).getByRole("button", { name: "7d" }));
    expect(pressed()).toEqual(["7d:true", "30d:false", "90d:false"]);
    await waitFor(() => expect(statValue("Total Invocations")).toBe("2,001"));
    expect(statValue("Success Rate")).toBe("100.0%");
    expect(api.callsTo("GET /api/analytics/dashboard/?days=7")).toHaveLength(1);
    expect(currentPath(router)).toBe("/analytics?days=7");
  });

  it("opens on the window named in the address", async () => {
    const api = stubSignedInApi({
      "GET /api/analytics/dashboard/?days=90": () => jsonResponse(globalDashboardFixture()),
    });
    renderGlobalAnalytics("/analytics?days=90");

    await screen.findByRole("region", { name: "Summary" });
    expect(screen.getByRole("button", { name: "90d" }).getAttribute("aria-pressed")).toBe("true");
    expect(api.callsTo("GET /api/analytics/dashboard/?days=90")).toHaveLength(1);
  });

  it("shows a red Error panel when the dashboard fails to load", async () => {
    stubSignedInApi({ [DASHBOARD]: () => jsonResponse({ detail: "database down" }, 500) });
    renderGlobalAnalytics();

    const alert = await screen.findByRole("alert");
    expect(within(alert).getByText("Error")).toBeDefined();
    expect(within(alert).getByText("Failed to load analytics data")).toBeDefined();
    expect(alert.className).toContain("red");
    expect(screen.queryByRole("region", { name: "Summary" })).toBeNull();
  });

  it("says 'No data available' for a window without invocations and keeps the period buttons", async () => {
    stubSignedInApi({
      [DASHBOARD]: () =>
        jsonResponse(
          globalDashboardFixture({
            overview: { total_applications: 2, total_invocations: 0, total_users: 0, success_rate: 0 },
            time_series: {
              data: windowDays(30).map((date) => ({
                date,
                invocations: 0,
                success_count: 0,
                error_count: 0,
                avg_response_time: 0,
                input_tokens: 0,
                output_tokens: 0,
              })),
            },
          }),
        ),
    });
    renderGlobalAnalytics();

    expect(await screen.findByRole("heading", { name: "No data available" })).toBeDefined();
    expect(screen.getByRole("button", { name: "90d" })).toBeDefined();
    expect(screen.queryByRole("region", { name: "Summary" })).toBeNull();
    expect(screen.queryByRole("region", { name: "Invocations Over Time" })).toBeNull();
  });
});
