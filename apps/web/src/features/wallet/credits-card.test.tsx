import type { SponsoredCredit } from "@promptmint/contracts";
import { screen, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { walletFixture } from "../../test/billing-fixtures";
import { jsonResponse } from "../../test/fetch-stub";
import { renderRoute } from "../../test/render-route";

const REDEEM = "POST /api/promotion-codes/redeem/";

const trial: SponsoredCredit = {
  id: "grant-trial",
  kind: "trial",
  app: { slug: "haiku-writer", name: "Haiku Writer" },
  creator: "Ada",
  code: null,
  calls_left: 2,
  credit_left_micros: null,
  bonus: null,
  expires_at: null,
  created_at: "2026-11-29T10:00:00.000Z",
};

const promotion: SponsoredCredit = {
  id: "grant-promo",
  kind: "promotion",
  app: null,
  creator: "Ada",
  code: "LAUNCH20",
  calls_left: null,
  credit_left_micros: 1_250_000,
  bonus: null,
  expires_at: "2026-12-31T23:59:59.000Z",
  created_at: "2026-11-29T11:00:00.000Z",
};

function stubWallet(credits: SponsoredCredit[]) {
  const state = { credits };
  const api = stubSignedInApi({
    "GET /api/wallet/": () => jsonResponse(walletFixture()),
    "GET /api/wallet/payment-methods/": () => jsonResponse([]),
    "GET /api/wallet/statement/?limit=25": () => jsonResponse({ lines: [], next_cursor: null }),
    "GET /api/receipts/": () => jsonResponse({ receipts: [] }),
    "GET /api/keys/": () => jsonResponse([]),
    "GET /api/app/": () => jsonResponse([]),
    "GET /api/wallet/credits/": () => jsonResponse({ data: state.credits }),
    [REDEEM]: ({ body }) => {
      const { code } = body as { code: string };
      if (code !== "LAUNCH20")
        return jsonResponse({ code: "not_found", message: "Promotion code not found", status: 404 }, 404);
      state.credits = [promotion, ...state.credits];
      return jsonResponse(promotion, 201);
    },
  });
  return api;
}

describe("trials and promotional credit on the wallet", () => {
  it("lists trials with their calls left and app", async () => {
    stubWallet([trial]);
    renderRoute("/wallet", { auth: createTestAuth("signed-in") });

    const card = within(
      (await screen.findByRole("heading", { name: "Trials and promotional credit" })).closest(
        "div.rounded-xl",
      ) as HTMLElement,
    );
    expect(await card.findByText("2 free calls left")).toBeDefined();
    expect(card.getByRole("link", { name: "Haiku Writer" }).getAttribute("href")).toBe(
      "/explore/haiku-writer",
    );
    expect(card.getByText("Does not expire")).toBeDefined();
  });

  it("redeems a code from the keyboard, shows its credit, and names a refusal", async () => {
    const api = stubWallet([]);
    renderRoute("/wallet", { auth: createTestAuth("signed-in") });

    expect(await screen.findByText("No trials or promotional credit yet")).toBeDefined();
    await userEvent.click(screen.getByRole("button", { name: "Redeem" }));
    expect(screen.getByText("Enter a promotion code")).toBeDefined();

    await userEvent.type(screen.getByLabelText("Redeem a code"), "NOPE{enter}");
    expect(await screen.findByText("Promotion code not found")).toBeDefined();

    const field = screen.getByLabelText("Redeem a code");
    await userEvent.clear(field);
    await userEvent.type(field, " LAUNCH20 {enter}");

    expect(await screen.findByText("Code redeemed")).toBeDefined();
    expect(api.callsTo(REDEEM).at(-1)?.body).toEqual({ code: "LAUNCH20" });
    expect(await screen.findByText("$1.25 left")).toBeDefined();
    expect(screen.getByText("every app of Ada")).toBeDefined();
    expect(screen.getByText(/Expires/)).toBeDefined();
  });
});
