import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { beforeEach, describe, expect, it } from "vitest";
import {
  appPerformanceFixture,
  appUsageFixture,
  invocationFixture,
  rowWith,
  statValue,
  stubResizeObserver,
  versionFiguresFixture,
} from "../../test/analytics-test-support";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { applicationFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const APP = "GET /api/app/blog-writer/";
const USAGE = "GET /api/app/blog-writer/analytics/usage/?days=30";
const PERFORMANCE = "GET /api/app/blog-writer/analytics/performance/?days=30";
const INVOCATIONS = "GET /api/app/blog-writer/analytics/invocations/?limit=20";

function stubAnalyticsApi(extra: Parameters<typeof stubSignedInApi>[0] = {}) {
  return stubSignedInApi({
    [APP]: () => jsonResponse(applicationFixture()),
    [USAGE]: () => jsonResponse(appUsageFixture()),
    [PERFORMANCE]: () => jsonResponse(appPerformanceFixture()),
    [INVOCATIONS]: () =>
      jsonResponse({
        recent_invocations: [
          invocationFixture(),
          invocationFixture({
            id: "9e8d7c6b-0000-4000-8000-000000000000",
            end_user: null,
            status: "error",
            response_time: 0.25,
            input_tokens: 1000,
            output_tokens: 234,
            version: null,
          }),
        ],
      }),
    ...extra,
  });
}

function renderApplicationAnalytics(path = "/applications/blog-writer/analytics") {
  return renderRoute(path, { auth: createTestAuth("signed-in") });
}

describe("per-application analytics", () => {
  beforeEach(() => stubResizeObserver());

  it("loads the application, then its usage, performance and recent invocations", async () => {
    const api = stubAnalyticsApi();
    renderApplicationAnalytics();

    expect(await screen.findByRole("heading", { name: "Blog Writer Analytics", level: 1 })).toBeDefined();
    expect(
      screen.getByText("Usage, performance and revenue of Blog Writer, a prompt application."),
    ).toBeDefined();
    expect(screen.getByRole("link", { name: "Back to Application" }).getAttribute("href")).toBe(
      "/applications/blog-writer",
    );

    await screen.findByRole("region", { name: "Summary" });
    expect(statValue("Total Invocations")).toBe("1,234");
    expect(statValue("Unique Users")).toBe("56");
    expect(statValue("Success Rate")).toBe("97.5%");
    expect(statValue("Avg Response Time")).toBe("1.2 s");

    for (const chart of ["Usage Over Time", "Performance Metrics", "Response Time Trend", "Revenue Trend"]) {
      expect(screen.getByRole("region", { name: chart })).toBeDefined();
    }
    expect(
      within(screen.getByRole("region", { name: "Revenue Trend" })).getByText(
        "$18.50 gross revenue in the last 30 days",
      ),
    ).toBeDefined();
    // Gross, fee, model cost and net for the window, the same figures as the detail page's.
    const money = within(screen.getByLabelText("Earnings, Last 30 days"));
    expect(money.getByText("Gross").nextSibling?.textContent).toBe("$18.50");
    expect(money.getByText("Platform fee").nextSibling?.textContent).toBe("-$1.85");
    expect(money.getByText("Net").nextSibling?.textContent).toBe("$16.65");

    const paths = api.requests.map((request) => request.path);
    expect(paths.indexOf("/api/app/blog-writer/")).toBeLessThan(
      Math.min(
        paths.indexOf("/api/app/blog-writer/analytics/usage/?days=30"),
        paths.indexOf("/api/app/blog-writer/analytics/performance/?days=30"),
        paths.indexOf("/api/app/blog-writer/analytics/invocations/?limit=20"),
      ),
    );
  });

  it("lists recent invocations with short IDs, users, statuses, times and token totals", async () => {
    stubAnalyticsApi();
    renderApplicationAnalytics();

    const table = await screen.findByRole("region", { name: "Recent Invocations" });
    const headers = within(table)
      .getAllByRole("columnheader")
      .map((header) => header.textContent);
    expect(headers).toEqual([
      "ID",
      "User",
      "Status",
      "Version",
      "Response time",
      "Tokens",
      "Created At",
      "Eval case",
    ]);

    const first = rowWith(table, "3f2a9c1e…");
    expect(within(first).getByText("customer-42")).toBeDefined();
    // The version that answered, as the creator names it.
    expect(within(first).getByText("v3")).toBeDefined();
    expect(within(first).getByText("success").className).toContain("green");
    expect(within(first).getByText("1.5 s")).toBeDefined();
    expect(within(first).getByText("1,300")).toBeDefined();
    expect(within(first).getByText(new Date("2025-11-29T14:30:00.000Z").toLocaleString())).toBeDefined();

    const second = rowWith(table, "9e8d7c6b…");
    expect(within(second).getByText("Anonymous")).toBeDefined();
    expect(within(second).getByText("error").className).toContain("red");
    expect(within(second).getByText("250 ms")).toBeDefined();
    // A call that names no version (a workflow's, or from before versions) shows a dash.
    expect(within(second).getByTitle("No version").textContent).toBe("—");
    expect(within(second).getByText("1,234")).toBeDefined();
  });

  it("breaks the window down by version, production marked, money to the cent with the exact figure on hover", async () => {
    stubAnalyticsApi({
      [USAGE]: () =>
        jsonResponse({
          ...appUsageFixture(),
          production_version: 2,
          by_version: [
            versionFiguresFixture({ version: 3 }),
            versionFiguresFixture({
              version: 2,
              production: true,
              invocations: 1_100,
              success_rate: 97.5,
              gross_micros: 17_800_000,
              fee_micros: 1_745_000,
              model_cost_micros: 0,
              net_micros: 16_055_000,
            }),
            versionFiguresFixture({
              version: null,
              invocations: 34,
              gross_micros: 0,
              fee_micros: 0,
              model_cost_micros: 0,
              model_cost_deducted_micros: null,
              net_micros: 0,
            }),
          ],
        }),
    });
    renderApplicationAnalytics();

    // The page's three requests load together; on a busy machine that takes more than a second.
    const table = await screen.findByRole("region", { name: "By version" }, { timeout: 5_000 });
    expect(
      within(table)
        .getAllByRole("columnheader")
        .map((header) => header.textContent),
    ).toEqual([
      "Version",
      "Calls",
      "Success",
      "Avg time (s)",
      "Tokens",
      "Revenue",
      "Fee",
      "Model cost",
      "Margin",
    ]);
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((row) => row.querySelector("td")?.textContent)).toEqual([
      "v3",
      "v2Production",
      "No version",
    ]);
    const v3 = rowWith(table, "v3");
    expect(within(v3).getByText("98.0%")).toBeDefined();
    expect(within(v3).getByText("1.2 s")).toBeDefined();
    expect(within(v3).getByText("1,000")).toBeDefined();
    expect(within(v3).getByText("$0.70")).toBeDefined();
    // Rounded for reading, exact on hover.
    expect(within(v3).getByText("$0.11").getAttribute("title")).toBe("Exactly $0.105");
    expect(within(v3).getByText("$0.01").getAttribute("title")).toBe("Exactly $0.012345");
    expect(within(v3).getByText("$0.58").getAttribute("title")).toBe("Exactly $0.582655");
    const v2 = rowWith(table, "Production");
    expect(within(v2).getByText("v2")).toBeDefined();
    expect(within(v2).getByText("1,100")).toBeDefined();
    expect(within(v2).getByText("$16.06").getAttribute("title")).toBe("Exactly $16.055");
    expect(within(rowWith(table, "No version")).getByText("34")).toBeDefined();
  });

  it("shows no version table for an app whose calls name no version (a workflow app)", async () => {
    stubAnalyticsApi({
      [USAGE]: () =>
        jsonResponse({ ...appUsageFixture(), by_version: [versionFiguresFixture({ version: null })] }),
    });
    renderApplicationAnalytics();
    await screen.findByRole("region", { name: "Summary" }, { timeout: 5_000 });
    expect(screen.queryByRole("region", { name: "By version" })).toBeNull();
  });

  it("reloads usage and performance with ?days=7 when 7d is chosen", async () => {
    const api = stubAnalyticsApi({
      "GET /api/app/blog-writer/analytics/usage/?days=7": () =>
        jsonResponse(appUsageFixture({ total_invocations: 70, total_users: 3, total_revenue: 1.05 }, 7)),
      "GET /api/app/blog-writer/analytics/performance/?days=7": () =>
        jsonResponse(appPerformanceFixture({ success_rate: 100, average_response_time: 0.5 }, 7)),
    });
    renderApplicationAnalytics();
    await screen.findByRole("region", { name: "Summary" });
    expect(screen.getByRole("button", { name: "30d" }).getAttribute("aria-pressed")).toBe("true");

    await userEvent.click(screen.getByRole("button", { name: "7d" }));
    expect(screen.getByRole("button", { name: "7d" }).getAttribute("aria-pressed")).toBe("true");
    await waitFor(() => expect(statValue("Total Invocations")).toBe("70"));
    expect(statValue("Success Rate")).toBe("100.0%");
    expect(statValue("Avg Response Time")).toBe("500 ms");
    expect(api.callsTo("GET /api/app/blog-writer/analytics/usage/?days=7")).toHaveLength(1);
    expect(api.callsTo("GET /api/app/blog-writer/analytics/performance/?days=7")).toHaveLength(1);
    expect(api.callsTo(INVOCATIONS)).toHaveLength(1);
  });

  it("says 'No data available' and 'No invocations found' for an application never called", async () => {
    stubAnalyticsApi({
      [USAGE]: () =>
        jsonResponse(appUsageFixture({ total_invocations: 0, total_users: 0, total_revenue: 0 })),
      [PERFORMANCE]: () => jsonResponse(appPerformanceFixture({ success_rate: 0, average_response_time: 0 })),
      [INVOCATIONS]: () => jsonResponse({ recent_invocations: [] }),
    });
    renderApplicationAnalytics();

    expect(await screen.findByRole("heading", { name: "No data available" })).toBeDefined();
    expect(screen.queryByRole("region", { name: "Summary" })).toBeNull();
    const table = screen.getByRole("region", { name: "Recent Invocations" });
    expect(within(table).getByText("No invocations found")).toBeDefined();
    expect(screen.getByRole("button", { name: "7d" })).toBeDefined();
  });

  it("shows an Error box when the analytics fail to load", async () => {
    stubAnalyticsApi({ [PERFORMANCE]: () => jsonResponse({ message: "boom" }, 500) });
    renderApplicationAnalytics();

    const alert = await screen.findByRole("alert");
    expect(within(alert).getByText("Error")).toBeDefined();
    expect(within(alert).getByText("Failed to load analytics data")).toBeDefined();
    expect(screen.getByRole("heading", { name: "Blog Writer Analytics" })).toBeDefined();
    expect(screen.queryByRole("region", { name: "Recent Invocations" })).toBeNull();
  });

  it("shows the not-found screen, without asking for analytics, when the application does not exist", async () => {
    const api = stubAnalyticsApi({ [APP]: () => jsonResponse({ detail: "Not found" }, 404) });
    renderApplicationAnalytics();

    expect(await screen.findByRole("heading", { name: "Application not found" })).toBeDefined();
    expect(screen.getByRole("link", { name: "Back to dashboard" }).getAttribute("href")).toBe("/dashboard");
    expect(api.callsTo(USAGE)).toHaveLength(0);
    expect(api.callsTo(INVOCATIONS)).toHaveLength(0);
  });

  it("says 'Failed to load analytics data' when the application fails for another reason", async () => {
    stubAnalyticsApi({ [APP]: () => jsonResponse({ detail: "database down" }, 500) });
    renderApplicationAnalytics();

    const alert = await screen.findByRole("alert");
    expect(within(alert).getByText("Failed to load analytics data")).toBeDefined();
  });
});
