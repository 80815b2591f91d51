import type { ApiKey, Receipt, WalletStatement } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { walletFixture } from "../../test/billing-fixtures";
import { jsonResponse } from "../../test/fetch-stub";
import { renderRoute } from "../../test/render-route";

const receipt = (overrides: Partial<Receipt> = {}): Receipt => ({
  number: "PM-000002",
  kind: "top_up",
  source_id: "5d3c0d4e-0000-4000-8000-000000000002",
  description: "Wallet top-up (card •••• 4242)",
  amount_cents: 1000,
  currency: "USD",
  status: "paid",
  occurred_at: "2026-11-24T10:00:00.000Z",
  ...overrides,
});

const key: ApiKey = {
  id: "0b7e0d4e-0000-4000-8000-00000000000a",
  name: "backend",
  prefix: "pm_abc123",
  created_at: "2026-11-01T00:00:00.000Z",
  last_used_at: null,
  spend_limit_cents: null,
  limit_reset: "never",
  expires_at: null,
  allowed_apps: null,
  spent_micros: 0,
  period_resets_at: null,
  made_by: null,
};

const statement: WalletStatement = {
  lines: [
    {
      id: "calls:1",
      kind: "calls",
      description: "Haiku Writer — 3 calls",
      application: { slug: "haiku-writer", name: "Haiku Writer" },
      calls: 3,
      day: "2026-11-24",
      amount_micros: -150_000,
      created_at: "2026-11-24T10:00:00.000Z",
    },
  ],
  next_cursor: null,
};

function stubWallet(handlers: Record<string, () => Response | Promise<Response>>) {
  return stubSignedInApi({
    "GET /api/wallet/": () => jsonResponse(walletFixture({ balance_micros: 10_000_000 })),
    "GET /api/wallet/payment-methods/": () => jsonResponse([]),
    "GET /api/wallet/credits/": () => jsonResponse({ data: [] }),
    "GET /api/app/": () => jsonResponse([]),
    "GET /api/wallet/statement/?limit=25": () => jsonResponse(statement),
    "GET /api/keys/": () => jsonResponse([key]),
    ...handlers,
  });
}

/** Saving a file: the anchor click saveBlob makes, caught, and its blob URL. */
function catchSaves() {
  const createObjectURL = vi.fn(() => "blob:file");
  vi.stubGlobal("URL", Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() }));
  return vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(() => undefined);
}

const render = () => renderRoute("/wallet", { auth: createTestAuth("signed-in") });

describe("the wallet's receipts", () => {
  it("lists each receipt with its number, amount and status, and downloads its PDF", async () => {
    const api = stubWallet({
      "GET /api/receipts/": () =>
        jsonResponse({
          receipts: [
            receipt({
              number: "PM-000003",
              kind: "plan_payment",
              description: "Plan 'Pro' for Haiku",
              amount_cents: 300,
            }),
            receipt({ status: "refunded" }),
          ],
        }),
      "GET /api/receipts/PM-000002/pdf": () =>
        new Response(new Blob(["%PDF-1.7"]), {
          status: 200,
          headers: { "Content-Disposition": 'attachment; filename="receipt-PM-000002.pdf"' },
        }),
    });
    const click = catchSaves();
    render();
    const table = await screen.findByRole("table", { name: "Receipts" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((row) => row.textContent)).toEqual([
      expect.stringMatching(/PM-000003.*Plan payment.*Plan 'Pro' for Haiku.*\$3\.00.*Paid/),
      expect.stringMatching(/PM-000002.*Top-up.*\$10\.00.*Refunded/),
    ]);
    await userEvent.click(within(table).getByRole("button", { name: "Download receipt PM-000002 (PDF)" }));
    await waitFor(() => expect(click).toHaveBeenCalled());
    expect((click.mock.contexts[0] as HTMLAnchorElement).download).toBe("receipt-PM-000002.pdf");
    expect(api.callsTo("GET /api/receipts/PM-000002/pdf")).toHaveLength(1);
  });

  it("opens a receipt's page in a new tab from the fetched HTML", async () => {
    const api = stubWallet({
      "GET /api/receipts/": () => jsonResponse({ receipts: [receipt()] }),
      "GET /api/receipts/PM-000002/html": () =>
        new Response("<h1>Receipt PM-000002</h1>", { status: 200, headers: { "Content-Type": "text/html" } }),
    });
    catchSaves();
    const open = vi.spyOn(window, "open").mockImplementation(() => null);
    render();
    await userEvent.click(await screen.findByRole("button", { name: "Open receipt PM-000002" }));
    await waitFor(() => expect(open).toHaveBeenCalledWith("blob:file", "_blank", "noopener"));
    expect(api.callsTo("GET /api/receipts/PM-000002/html")).toHaveLength(1);
  });

  it("says when there are no receipts yet, and when they fail to load", async () => {
    stubWallet({ "GET /api/receipts/": () => jsonResponse({ receipts: [] }) });
    const first = render();
    expect(await screen.findByText("No receipts yet")).toBeDefined();
    first.unmount();
    stubWallet({
      "GET /api/receipts/": () => jsonResponse({ code: "internal", message: "boom", status: 500 }, 500),
    });
    render();
    expect(await screen.findByText("Failed to load receipts")).toBeDefined();
  });
});

describe("the usage export", () => {
  it("downloads the CSV for the chosen dates, key and app", async () => {
    const url =
      "GET /api/usage/export.csv?from=2026-11-01&to=2026-11-24&key=0b7e0d4e-0000-4000-8000-00000000000a&app=haiku-writer";
    const api = stubWallet({
      "GET /api/receipts/": () => jsonResponse({ receipts: [] }),
      [url]: () =>
        new Response("call_id\r\n", {
          status: 200,
          headers: { "Content-Disposition": 'attachment; filename="usage-2026-11-01-to-2026-11-24.csv"' },
        }),
    });
    const click = catchSaves();
    render();
    const form = within(
      (await screen.findByRole("heading", { name: "Download usage (CSV)" })).closest(
        "div.rounded-xl",
      ) as HTMLElement,
    );
    const from = form.getByLabelText("From");
    const to = form.getByLabelText("To (included)");
    await userEvent.clear(from);
    await userEvent.type(from, "2026-11-01");
    await userEvent.clear(to);
    await userEvent.type(to, "2026-11-24");
    await waitFor(() => expect(form.getByRole("option", { name: "backend (pm_abc123…)" })).toBeDefined());
    await userEvent.selectOptions(form.getByLabelText("API key"), "backend (pm_abc123…)");
    await waitFor(() => expect(form.getByRole("option", { name: "Haiku Writer" })).toBeDefined());
    await userEvent.selectOptions(form.getByLabelText("App"), "Haiku Writer");
    await userEvent.click(form.getByRole("button", { name: "Download usage (CSV)" }));
    await waitFor(() => expect(click).toHaveBeenCalled());
    expect((click.mock.contexts[0] as HTMLAnchorElement).download).toBe("usage-2026-11-01-to-2026-11-24.csv");
    expect(api.callsTo(url)).toHaveLength(1);
  });

  it("shows the server's refusal beside the field it names, and refuses an end before the start itself", async () => {
    const api = stubWallet({
      "GET /api/receipts/": () => jsonResponse({ receipts: [] }),
      "GET /api/usage/export.csv?from=1999-01-01&to=2026-11-24": () =>
        jsonResponse(
          {
            code: "bad_request",
            message: "Invalid request: from must be between 2000-01-01 and 2027-11-25",
            status: 400,
            fields: { from: "must be between 2000-01-01 and 2027-11-25" },
          },
          400,
        ),
    });
    render();
    const form = within(
      (await screen.findByRole("heading", { name: "Download usage (CSV)" })).closest(
        "div.rounded-xl",
      ) as HTMLElement,
    );
    const from = form.getByLabelText("From");
    const to = form.getByLabelText("To (included)");
    await userEvent.clear(to);
    await userEvent.type(to, "2026-11-24");
    await userEvent.clear(from);
    await userEvent.type(from, "2026-11-25");
    await userEvent.click(form.getByRole("button", { name: "Download usage (CSV)" }));
    expect(await form.findByText("must be on or after the start date")).toBeDefined();
    expect(api.requests.filter((r) => r.path.startsWith("/api/usage/"))).toHaveLength(0);

    await userEvent.clear(from);
    await userEvent.type(from, "1999-01-01");
    await userEvent.click(form.getByRole("button", { name: "Download usage (CSV)" }));
    expect(await form.findByText("must be between 2000-01-01 and 2027-11-25")).toBeDefined();
    expect(from.getAttribute("aria-invalid")).toBe("true");
  });
});
