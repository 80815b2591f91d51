import type { EmbedSettings } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { walletFixture } from "../../test/billing-fixtures";
import { jsonResponse, type RecordedRequest } from "../../test/fetch-stub";
import { applicationFixture, appUsageTotalsFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

const EMBED = "/api/app/blog-writer/embed";
const SNIPPET = '<script src="http://localhost:3000/embed.js" data-app="blog-writer" async></script>';

function stubEmbedApi(visibility: "embed" | "public" = "embed", spentToday = 75) {
  let settings: EmbedSettings = {
    allowed_origins: ["https://blog.example"],
    snippet: SNIPPET,
    price_cents: 150,
    pending_price_cents: null,
    pending_price_at: null,
    daily_cap_cents: 500,
    spent_today_cents: spentToday,
    visitor_calls_per_hour: 20,
    visitor_calls_per_day: 100,
  };
  return stubSignedInApi({
    "GET /api/app/blog-writer/": () => jsonResponse(applicationFixture({ visibility, status: "live" })),
    "GET /api/app/blog-writer/analytics/usage/?days=30": () => jsonResponse(appUsageTotalsFixture(0, 0)),
    "GET /api/wallet/": () => jsonResponse(walletFixture({ balance_micros: 4_200_000 })),
    [`GET ${EMBED}`]: () => jsonResponse(settings),
    [`PUT ${EMBED}`]: ({ body }: RecordedRequest) => {
      const update = body as Partial<EmbedSettings>;
      if (update.allowed_origins === undefined) {
        if ((update.visitor_calls_per_hour ?? 1) < 1)
          return jsonResponse(
            {
              code: "bad_request",
              message: "Invalid request",
              status: 400,
              fields: { visitor_calls_per_hour: "must be at least 1" },
            },
            400,
          );
        settings = { ...settings, ...update };
        return jsonResponse(settings);
      }
      const origins = update.allowed_origins;
      const bad = origins.findIndex((origin) => origin.includes("/shop"));
      if (bad >= 0)
        return jsonResponse(
          {
            code: "bad_request",
            message: "Invalid request",
            status: 400,
            fields: { [`allowed_origins.${bad}`]: "must be an origin like https://example.com" },
          },
          400,
        );
      settings = { ...settings, allowed_origins: origins };
      return jsonResponse(settings);
    },
  });
}

function renderDetail() {
  return renderRoute("/applications/blog-writer", { auth: createTestAuth("signed-in") });
}

async function embedCard() {
  const heading = await screen.findByRole("heading", { name: "Embed on Your Site" });
  const card = heading.closest("div.rounded-xl");
  if (!(card instanceof HTMLElement)) throw new Error("no embed card");
  return within(card);
}

describe("the embed panel", () => {
  it("says the creator pays for widget calls, with their balance and a top-up link, and shows the snippet", async () => {
    stubEmbedApi();
    renderDetail();
    const card = await embedCard();

    const notice = card.getByRole("note");
    expect(notice.textContent).toContain("Calls from the widget are charged to your wallet");
    expect(notice.textContent).toContain("($1.50)");
    await waitFor(() => expect(notice.textContent).toContain("Your wallet balance: $4.20"));
    expect(card.getByRole("link", { name: "Top Up Wallet" }).getAttribute("href")).toBe("/wallet");
    expect((await card.findByLabelText("Embed snippet")).textContent).toBe(SNIPPET);
    expect((card.getByLabelText("Allowed origins") as HTMLTextAreaElement).value).toBe(
      "https://blog.example",
    );
  });

  it("saves the allowed origins one per line, and names a refused one", async () => {
    const api = stubEmbedApi();
    renderDetail();
    const card = await embedCard();
    const field = await card.findByLabelText("Allowed origins");
    const user = userEvent.setup();

    await user.clear(field);
    await user.type(field, "https://blog.example\n\nhttps://shop.example/shop");
    await user.click(card.getByRole("button", { name: "Save Allowed Origins" }));
    expect(
      await card.findByText("https://shop.example/shop must be an origin like https://example.com"),
    ).toBeDefined();

    await user.clear(field);
    await user.type(field, "https://blog.example\nhttp://localhost:8080");
    await user.click(card.getByRole("button", { name: "Save Allowed Origins" }));
    await waitFor(() => expect(api.callsTo(`PUT ${EMBED}`)).toHaveLength(2));
    expect(api.callsTo(`PUT ${EMBED}`)[1]?.body).toEqual({
      allowed_origins: ["https://blog.example", "http://localhost:8080"],
    });
    await waitFor(() => expect(card.queryByText(/must be an origin/)).toBeNull());
  });

  it("shows today's embedded spend against the daily cap and saves the spending limits", async () => {
    const api = stubEmbedApi();
    renderDetail();
    const card = await embedCard();
    expect((await card.findByText(/Spent today \(UTC\):/)).textContent).toBe(
      "Spent today (UTC): $0.75 of your $5.00 daily cap",
    );
    expect(card.queryByText(/The daily cap is reached/)).toBeNull();
    const user = userEvent.setup();
    const cap = card.getByLabelText("Daily spending cap (USD)");
    const perHour = card.getByLabelText("Calls per visitor per hour");

    await user.clear(perHour);
    await user.type(perHour, "0");
    await user.click(card.getByRole("button", { name: "Save Spending Limits" }));
    expect(await card.findByText("must be at least 1")).toBeDefined();

    await user.clear(cap);
    await user.type(cap, "12.345");
    await user.clear(perHour);
    await user.type(perHour, "5");
    await user.click(card.getByRole("button", { name: "Save Spending Limits" }));
    await waitFor(() => expect(api.callsTo(`PUT ${EMBED}`)).toHaveLength(2));
    expect(api.callsTo(`PUT ${EMBED}`)[1]?.body).toEqual({
      daily_cap_cents: 1235,
      visitor_calls_per_hour: 5,
      visitor_calls_per_day: 100,
    });
    await waitFor(() =>
      expect(card.getByText(/Spent today \(UTC\):/).textContent).toBe(
        "Spent today (UTC): $0.75 of your $12.35 daily cap",
      ),
    );
  });

  it("says when the daily cap is reached", async () => {
    stubEmbedApi("embed", 450);
    renderDetail();
    const card = await embedCard();
    expect(await card.findByText(/The daily cap is reached/)).toBeDefined();
  });

  it("is not shown for apps that are not embeddable", async () => {
    const api = stubEmbedApi("public");
    renderDetail();
    expect(await screen.findByRole("heading", { name: "API Endpoint" })).toBeDefined();
    expect(screen.queryByRole("heading", { name: "Embed on Your Site" })).toBeNull();
    expect(api.callsTo(`GET ${EMBED}`)).toHaveLength(0);
  });
});
