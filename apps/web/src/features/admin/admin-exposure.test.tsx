import type { AdminExposure } from "@promptmint/contracts";
import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse } from "../../test/fetch-stub";
import { renderRoute } from "../../test/render-route";

const none: AdminExposure = {
  hold_days: 7,
  card_earnings_pending_micros: 0,
  creator_debts: { count: 0, owed_micros: 0 },
  payer_debts: { count: 0, owed_micros: 0 },
  platform_loss_micros: 0,
  open_disputes: { count: 0, amount_micros: 0 },
  reversed_micros: 0,
  unrecovered_micros: 0,
};

function page(exposure: () => Response) {
  const api = stubSignedInApi({
    "GET /api/admin/access": () => jsonResponse({ admin: true }),
    "GET /api/auth/roles/": () => jsonResponse({ roles: ["user", "operator"], is_creator: false }),
    "GET /api/admin/audit?limit=50": () => jsonResponse({ entries: [] }),
    "GET /api/admin/exposure": exposure,
  });
  const original = api.fetchMock.getMockImplementation();
  api.fetchMock.mockImplementation(async (input, init) => {
    if (String(input).startsWith("/api/admin/overview?"))
      return jsonResponse({ code: "unavailable", message: "x" }, 503);
    return original ? original(input, init) : jsonResponse({}, 599);
  });
  renderRoute("/admin", { auth: createTestAuth("signed-in") });
  return screen.findByRole("region", { name: "Chargeback exposure" });
}

describe("/admin chargeback exposure (decision 045)", () => {
  it("shows card earnings in the hold, creators' debts, the platform's loss and open disputes", async () => {
    const section = await page(() =>
      jsonResponse({
        ...none,
        card_earnings_pending_micros: 12_340_000,
        creator_debts: { count: 1, owed_micros: 2_070_000 },
        platform_loss_micros: 1_500,
        open_disputes: { count: 1, amount_micros: 100_000_000 },
        reversed_micros: 100_000_000,
        unrecovered_micros: 2_071_500,
      }),
    );
    expect(await within(section).findByText("$12.34")).toBeTruthy();
    expect(within(section).getByText("$2.07")).toBeTruthy();
    expect(within(section).getByText("$100.00")).toBeTruthy();
    expect(within(section).getByText(/1 creator, paid from their next earnings/)).toBeTruthy();
  });

  it("says when nothing is at risk", async () => {
    const section = await page(() => jsonResponse(none));
    expect(await within(section).findByText(/Nothing at risk/)).toBeTruthy();
  });

  it("shows the API's refusal", async () => {
    const section = await page(() => jsonResponse({ code: "forbidden", message: "Only operators" }, 403));
    expect(await within(section).findByText(/Only operators/)).toBeTruthy();
  });
});
