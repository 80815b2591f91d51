import type { UsageExportDay, UsageExportReconcile } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { renderRoute } from "../../test/render-route";

const RECONCILE = "/api/admin/usage-export/reconcile?days=";

function day(overrides: Partial<UsageExportDay> = {}): UsageExportDay {
  return {
    day: "2026-11-28",
    creator_id: "c1",
    creator_email: "creator@example.com",
    charged_calls: 3,
    charged_micros: 150_000,
    logged_calls: 3,
    logged_micros: 150_000,
    exported: { cloudevents: { events: 3, micros: 150_000 } },
    differences: [],
    ...overrides,
  };
}

const cloudevents = {
  sink: "cloudevents",
  exported: 1_204,
  exported_micros: 60_200_000,
  behind: 0,
  last_error: null,
  last_error_at: null,
  updated_at: "2026-11-29T10:00:00.000Z",
};

/** The admin page with the usage export answering `reconcile(days)`; the other sections answer too. */
function page(reconcile: (days: string) => Response) {
  const api = stubSignedInApi({
    "GET /api/admin/access": () => jsonResponse({ admin: true }),
    "GET /api/auth/roles/": () => jsonResponse({ roles: ["user", "operator"], is_creator: false }),
    "GET /api/admin/audit?limit=50": () => jsonResponse({ entries: [] }),
    "GET /api/admin/exposure": () => jsonResponse({ code: "unavailable", message: "x" }, 503),
  });
  const original = api.fetchMock.getMockImplementation();
  api.fetchMock.mockImplementation(async (input, init) => {
    const path = String(input);
    if (path.startsWith("/api/admin/overview?"))
      return jsonResponse({ code: "unavailable", message: "x" }, 503);
    if (path.startsWith(RECONCILE)) return reconcile(path.slice(RECONCILE.length));
    return original ? original(input, init) : jsonResponse({}, 599);
  });
  renderRoute("/admin", { auth: createTestAuth("signed-in") });
  return { api, section: screen.findByRole("region", { name: "Usage export" }) };
}

const answer = (body: UsageExportReconcile) => () => jsonResponse(body);

describe("/admin usage export (decision 068)", () => {
  it("shows each sink's exports, how far behind it is and its last error, in a fixed order", async () => {
    const { section } = page(
      answer({
        // In the API's order; the console lists the known sinks in its own.
        sinks: [
          {
            sink: "stripe_meter",
            exported: 40,
            exported_micros: 2_000_000,
            behind: 12,
            last_error: "Stripe answered 429",
            last_error_at: "2026-11-29T09:30:00.000Z",
            updated_at: "2026-11-29T09:31:00.000Z",
          },
          cloudevents,
        ],
        days: [day()],
      }),
    );
    const sinks = await within(await section).findByRole("region", { name: "Sinks" });
    const [, caughtUp, behind] = within(sinks).getAllByRole("row");
    expect(within(caughtUp as HTMLElement).getByText("CloudEvents (OpenMeter)")).toBeTruthy();
    expect(within(caughtUp as HTMLElement).getByText("1,204")).toBeTruthy();
    expect(within(caughtUp as HTMLElement).getByText("$60.20")).toBeTruthy();
    expect(within(caughtUp as HTMLElement).getByText("Caught up")).toBeTruthy();
    expect(within(behind as HTMLElement).getByText("Stripe meter events")).toBeTruthy();
    expect(within(behind as HTMLElement).getByText("$2.00")).toBeTruthy();
    expect(within(behind as HTMLElement).getByText("12 behind")).toBeTruthy();
    const error = within(behind as HTMLElement).getByText("Stripe answered 429");
    expect(error.className).toContain("text-red-700");
    expect(error.textContent).toContain(new Date("2026-11-29T09:30:00.000Z").toLocaleString());
  });

  it("highlights a creator-day that differs, lists its differences and counts them on top", async () => {
    const difference = "cloudevents exported 2 (100000 micros), the log has 3 (150000)";
    const { section } = page(
      answer({
        sinks: [cloudevents],
        days: [
          day({ exported: { cloudevents: { events: 2, micros: 100_000 } }, differences: [difference] }),
          day({ day: "2026-11-27", creator_id: "c2", creator_email: "other@example.com" }),
        ],
      }),
    );
    const usage = await section;
    expect(await within(usage).findByText("1 creator-day differs")).toBeTruthy();
    const table = within(usage).getByRole("region", { name: "Per creator and day" });
    expect(
      within(table).getByRole("columnheader", { name: "CloudEvents (OpenMeter) exported" }),
    ).toBeTruthy();
    const [, differing, agreeing] = within(table).getAllByRole("row");
    expect(differing?.className).toContain("bg-red-50");
    expect(within(differing as HTMLElement).getByRole("listitem").textContent).toBe(difference);
    expect(within(differing as HTMLElement).getByText("creator@example.com")).toBeTruthy();
    expect(agreeing?.className ?? "").not.toContain("bg-red-50");
    expect(within(agreeing as HTMLElement).getByText("None")).toBeTruthy();
  });

  it("says ledger, log and exports agree, and asks again for 30 days", async () => {
    const { api, section } = page(answer({ sinks: [cloudevents], days: [day()] }));
    const usage = await section;
    expect(await within(usage).findByText("Ledger = log = exports for every creator and day")).toBeTruthy();
    await userEvent.click(within(usage).getByRole("button", { name: "30d" }));
    expect(await within(usage).findByText("Per creator and day, last 30 days (UTC)")).toBeTruthy();
    const asked = () =>
      api.fetchMock.mock.calls.map(([input]) => String(input)).filter((p) => p.startsWith(RECONCILE));
    await waitFor(() => expect(asked()).toEqual([`${RECONCILE}7`, `${RECONCILE}30`]));
    expect(within(usage).getByRole("button", { name: "30d" }).getAttribute("aria-pressed")).toBe("true");
  });

  it("says when no export has run and no call was charged", async () => {
    const { section } = page(answer({ sinks: [], days: [] }));
    const usage = await section;
    expect(
      await within(usage).findByText(/No export has run yet: set USAGE_EXPORT_CLOUDEVENTS_URL/),
    ).toBeTruthy();
    expect(within(usage).getByText("No charged calls in the last 7 days.")).toBeTruthy();
  });

  it("shows the API's refusal", async () => {
    const { section } = page(() => jsonResponse({ code: "forbidden", message: "Only operators" }, 403));
    expect(await within(await section).findByText(/Only operators/)).toBeTruthy();
  });
});
