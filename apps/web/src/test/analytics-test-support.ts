import type {
  AppPerformance,
  AppUsageAnalytics,
  GlobalDashboard,
  RecentInvocations,
  VersionFigures,
} from "@promptmint/contracts";
import { screen, within } from "@testing-library/react";
import { vi } from "vitest";
import { moneyFiguresFixture } from "./fixtures";

// Test-only helpers of the analytics screens: contract-typed answers and a sized ResizeObserver.

/** The last `count` UTC days, oldest first, as the API lists them. */
export function windowDays(count: number, end = "2025-11-30"): string[] {
  const last = Date.parse(`${end}T00:00:00Z`);
  return Array.from({ length: count }, (_, index) =>
    new Date(last - (count - 1 - index) * 86_400_000).toISOString().slice(0, 10),
  );
}

export function globalDashboardFixture(overrides: Partial<GlobalDashboard> = {}): GlobalDashboard {
  return {
    overview: { total_applications: 3, total_invocations: 12_345, total_users: 87, success_rate: 97.54 },
    time_series: {
      data: windowDays(30).map((date, index) => ({
        date,
        invocations: 400 + index,
        success_count: 390 + index,
        error_count: 10,
        avg_response_time: 1.2,
        input_tokens: 5000,
        output_tokens: 7000,
      })),
    },
    applications: [
      {
        application_name: "Blog Writer",
        application_slug: "blog-writer",
        application_type: "prompt",
        invocations: 12_000,
        success_rate: 98.25,
        avg_response_time: 1.23456,
        last_used: "2025-11-29T14:30:00.000Z",
      },
      {
        application_name: "Support Flow",
        application_slug: "support-flow",
        application_type: "workflow",
        invocations: 345,
        success_rate: 80,
        avg_response_time: 2.5,
        last_used: "",
      },
    ],
    errors: [],
    ...overrides,
  };
}

export function appUsageFixture(
  summary: Partial<AppUsageAnalytics["summary"]> = {},
  days = 30,
): AppUsageAnalytics {
  const full = {
    total_invocations: 1234,
    total_users: 56,
    total_revenue: 18.5,
    series: windowDays(days).map((date) => ({ date, invocations: 41, revenue: 0.6 })),
    ...summary,
  };
  return {
    total_invocations: full.total_invocations,
    total_revenue: full.total_revenue,
    figures: moneyFiguresFixture({ gross_micros: Math.round(full.total_revenue * 1_000_000) }, days),
    production_version: null,
    by_version: [],
    summary: full,
  };
}

export function appPerformanceFixture(
  performance: Partial<AppPerformance["performance"]> = {},
  days = 30,
): AppPerformance {
  return {
    performance: {
      success_rate: 97.54,
      average_response_time: 1.2345,
      series: windowDays(days).map((date) => ({
        date,
        success_count: 40,
        error_count: 1,
        response_time: 1.2,
      })),
      ...performance,
    },
  };
}

/** One version's figures: 100 calls, $0.70 gross less a $0.105 fee and a $0.012345 model cost. */
export function versionFiguresFixture(overrides: Partial<VersionFigures> = {}): VersionFigures {
  return {
    version: 3,
    production: false,
    invocations: 100,
    success_count: 98,
    error_count: 2,
    success_rate: 98,
    avg_response_time: 1.234,
    input_tokens: 600,
    output_tokens: 400,
    gross_micros: 700_000,
    fee_micros: 105_000,
    model_cost_micros: 12_345,
    model_cost_deducted_micros: 12_345,
    net_micros: 582_655,
    ...overrides,
  };
}

type Invocation = RecentInvocations["recent_invocations"][number];

export function invocationFixture(overrides: Partial<Invocation> = {}): Invocation {
  return {
    id: "3f2a9c1e-7b4d-4e8a-9c0d-1a2b3c4d5e6f",
    end_user: "customer-42",
    status: "success",
    response_time: 1.5,
    input_tokens: 600,
    output_tokens: 700,
    version: 3,
    content_kept: false,
    created_at: "2025-11-29T14:30:00.000Z",
    ...overrides,
  };
}

/**
 * jsdom has no layout: this ResizeObserver reports a desktop-sized box, so Recharts'
 * ResponsiveContainer renders its chart instead of warning about a 0×0 container.
 */
export function stubResizeObserver(width = 800, height = 300): void {
  vi.stubGlobal(
    "ResizeObserver",
    class {
      readonly callback: ResizeObserverCallback;
      constructor(callback: ResizeObserverCallback) {
        this.callback = callback;
      }
      observe(target: Element) {
        const entry = { target, contentRect: { width, height } } as unknown as ResizeObserverEntry;
        this.callback([entry], this as unknown as ResizeObserver);
      }
      unobserve() {}
      disconnect() {}
    },
  );
}

/** The value of the summary card with this label. */
export function statValue(label: string): string | null | undefined {
  const summary = screen.getByRole("region", { name: "Summary" });
  return within(summary).getByText(label).nextElementSibling?.textContent;
}

/** The table row whose row header (or first cell) holds this text. */
export function rowWith(table: HTMLElement, text: string): HTMLElement {
  const row = within(table)
    .getAllByRole("row")
    .find((candidate) => candidate.textContent?.includes(text));
  if (!row) throw new Error(`no row with ${text}`);
  return row;
}
