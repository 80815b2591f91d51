import type { Subscription } from "@promptmint/contracts";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { INTENDED_PATH_STORAGE_KEY } from "../../lib/intended-path";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import {
  packageFixture,
  paymentMethodFixture,
  subscriptionFixture,
  walletFixture,
} from "../../test/billing-fixtures";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { applicationFixture, exploreAppDetailFixture } from "../../test/fixtures";
import { currentPath, renderRoute } from "../../test/render-route";

const DETAIL = "GET /api/explore/apps/haiku-writer";
const APP = "/api/app/haiku-writer";
const pro = packageFixture({ id: "plan-pro", name: "Pro", price: 5, price_cents: 500 });

/** Explore's haiku-writer with the Pro plan, for a signed-in person with these subscriptions. */
function stubSignedIn(options: { subscriptions?: Subscription[]; ownApps?: string[] } = {}) {
  const state = { subscriptions: options.subscriptions ?? [] };
  const api = stubSignedInApi({
    [DETAIL]: () => jsonResponse(exploreAppDetailFixture({ plans: [pro] })),
    "GET /api/app/": () =>
      jsonResponse((options.ownApps ?? []).map((slug) => applicationFixture({ slug, name: "Mine" }))),
    [`GET ${APP}/subscriptions/`]: () => jsonResponse(state.subscriptions),
    [`GET ${APP}/payment-methods/`]: () =>
      jsonResponse([paymentMethodFixture({ id: "pm-1", card_last4: "4444", card_brand: "mastercard" })]),
    "GET /api/wallet/": () => jsonResponse(walletFixture()),
    [`POST ${APP}/subscriptions/`]: () => {
      state.subscriptions = [
        subscriptionFixture({ application_slug: "haiku-writer", package_id: "plan-pro" }),
      ];
      return jsonResponse(state.subscriptions[0], 201);
    },
  });
  return api;
}

describe("subscribing from Explore", () => {
  it("sends a signed-out visitor to sign in, to come back to the same plan's checkout", async () => {
    stubFetch({ [DETAIL]: () => jsonResponse(exploreAppDetailFixture({ plans: [pro] })) });
    const { router } = renderRoute("/explore/haiku-writer");

    await userEvent.click(await screen.findByRole("button", { name: "Subscribe to Pro" }));

    await waitFor(() => expect(currentPath(router)).toBe("/login"));
    expect(window.sessionStorage.getItem(INTENDED_PATH_STORAGE_KEY)).toBe(
      "/explore/haiku-writer?plan=plan-pro#plans",
    );
  });

  it("opens the plan's checkout on return from sign-in, offers the saved card and the wallet, and subscribes", async () => {
    const api = stubSignedIn();
    const { router } = renderRoute("/explore/haiku-writer?plan=plan-pro#plans", {
      auth: createTestAuth("signed-in"),
    });

    const dialog = within(await screen.findByRole("dialog", { name: "Subscribe to Pro" }));
    expect(currentPath(router)).toBe("/explore/haiku-writer");
    expect(router.state.location.hash).toBe("#plans");
    expect(await dialog.findByRole("radio", { name: /Mastercard •••• 4444/ })).toBeDefined();
    expect(dialog.getByRole("radio", { name: /Use a new card/ })).toBeDefined();
    await userEvent.click(dialog.getByRole("radio", { name: /Pay from wallet/ }));
    await userEvent.click(dialog.getByRole("button", { name: "Subscribe for $5.00/usd" }));

    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(api.callsTo(`POST ${APP}/subscriptions/`)[0]?.body).toEqual({ package_id: "plan-pro" });
    const plans = within(screen.getByRole("list", { name: "Plans" }));
    expect(await plans.findByRole("button", { name: "Pro: your current plan" })).toBeDefined();
    expect(screen.getByRole("link", { name: "My subscriptions" }).getAttribute("href")).toBe(
      "/subscriptions",
    );
  });

  it("lands a 402's plans_url on the plans, which take the focus", async () => {
    stubFetch({ [DETAIL]: () => jsonResponse(exploreAppDetailFixture({ plans: [pro] })) });
    renderRoute("/explore/haiku-writer#plans");

    const plans = await screen.findByRole("region", { name: "Plans" });
    await waitFor(() => expect(document.activeElement).toBe(plans));
    expect(plans.id).toBe("plans");
  });

  it("offers the app's owner no subscription (their calls are free), but the way to manage its plans", async () => {
    stubSignedIn({ ownApps: ["haiku-writer"] });
    renderRoute("/explore/haiku-writer", { auth: createTestAuth("signed-in") });

    expect(await screen.findByText(/This is your app: your own calls are free/)).toBeDefined();
    expect(screen.queryByRole("button", { name: "Subscribe to Pro" })).toBeNull();
    expect(screen.getByRole("link", { name: "Manage its plans" }).getAttribute("href")).toBe(
      "/applications/haiku-writer/billing",
    );
  });
});
