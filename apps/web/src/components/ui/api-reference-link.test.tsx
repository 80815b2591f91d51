import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { renderBillingPage } from "../../test/billing-api";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { applicationFixture, appUsageTotalsFixture, exploreAppDetailFixture } from "../../test/fixtures";
import { renderRoute } from "../../test/render-route";

/** The one API reference link in `scope`: a plain link to the API server's page. */
function expectReferenceLink(scope: HTMLElement, name: string | RegExp = "API reference") {
  const link = within(scope).getByRole("link", { name });
  expect(link.getAttribute("href")).toBe("/api/docs");
  return link;
}

// The navigation bar's menus are in app/layout/navbar.test.tsx.
describe("the API reference link on every app page", () => {
  it("is on an app's API endpoint card, beside Test API", async () => {
    stubSignedInApi({
      "GET /api/app/blog-writer/": () => jsonResponse(applicationFixture()),
      "GET /api/app/blog-writer/analytics/usage/?days=30": () => jsonResponse(appUsageTotalsFixture(0, 0)),
    });
    renderRoute("/applications/blog-writer", { auth: createTestAuth("signed-in") });

    const card = (await screen.findByRole("heading", { name: "API Endpoint" })).closest<HTMLElement>(
      ".rounded-xl",
    );
    if (!card) throw new Error("no API Endpoint card");
    expectReferenceLink(card);
    expect(within(card).getByRole("link", { name: "Test API" })).toBeDefined();
  });

  it("is in the header of an app's billing page", async () => {
    renderBillingPage({ owner: true });

    await screen.findByRole("heading", { name: "Billing & Subscriptions" });
    expectReferenceLink(document.body);
  });

  it("is in the explore app page's code samples, in the sentence that names it", async () => {
    stubFetch({ "GET /api/explore/apps/haiku-writer": () => jsonResponse(exploreAppDetailFixture()) });
    renderRoute("/explore/haiku-writer");

    const heading = await screen.findByRole("heading", { name: "Call it from your code" });
    const link = expectReferenceLink(heading.parentElement as HTMLElement);
    expect(link.parentElement?.textContent).toMatch(/Every endpoint is described in the API reference\./);
  });
});
