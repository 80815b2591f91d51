import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { applicationFixture, profileFixture } from "../../test/fixtures";
import { currentPath, renderRoute } from "../../test/render-route";

function mainNav() {
  return screen.getByRole("navigation", { name: "Main" });
}

describe("navigation bar", () => {
  it("offers 'Sign in' and 'Get Started' to a signed-out visitor", async () => {
    stubFetch({});
    renderRoute("/");

    const nav = mainNav();
    expect(within(nav).getByRole("link", { name: "Promptmint" }).getAttribute("href")).toBe("/");
    expect(within(nav).getByRole("link", { name: "Sign in" }).getAttribute("href")).toBe("/login");
    expect(within(nav).getByRole("link", { name: "Get Started" }).getAttribute("href")).toBe("/register");
    expect(within(nav).getByRole("link", { name: "Explore" }).getAttribute("href")).toBe("/explore");
    expect(within(nav).queryByRole("link", { name: "Dashboard" })).toBeNull();
    expect(within(nav).queryByRole("button", { name: "User menu" })).toBeNull();
  });

  it("shows a spinner while auth loads", () => {
    stubFetch({});
    renderRoute("/", { auth: createTestAuth("loading") });

    expect(within(mainNav()).getByRole("status").textContent).toBe("Loading");
    expect(within(mainNav()).queryByRole("link", { name: "Sign in" })).toBeNull();
  });

  it("shows the app's sections and the user's initial when signed in, the current one highlighted", async () => {
    stubSignedInApi();
    renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    const nav = mainNav();
    const expected = { Dashboard: "/dashboard", Applications: "/applications", Analytics: "/analytics" };
    for (const [name, href] of Object.entries(expected)) {
      expect(within(nav).getByRole("link", { name }).getAttribute("href")).toBe(href);
    }
    expect(within(nav).getByRole("link", { name: "API Test" }).getAttribute("href")).toBe("/api-test");
    expect(within(nav).getByRole("link", { name: "Explore" }).getAttribute("href")).toBe("/explore");
    expect(within(nav).getByRole("link", { name: "Dashboard" }).getAttribute("aria-current")).toBe("page");
    expect(within(nav).getByRole("link", { name: "Applications" }).getAttribute("aria-current")).toBeNull();
    expect(within(nav).queryByRole("link", { name: "Sign in" })).toBeNull();
    // The identity token's email gives the initial at first, the profile's display name once loaded.
    await waitFor(() => expect(within(nav).getByRole("button", { name: "User menu" }).textContent).toBe("A"));
  });

  it("falls back to the email's initial when there is no display name", async () => {
    const profile = profileFixture();
    stubSignedInApi(
      {},
      { ...profile, user: { ...profile.user, display_name: "", email: "zed@example.com" } },
    );
    renderRoute("/analytics", {
      auth: createTestAuth("signed-in", { profile: { email: "zed@example.com" } }),
    });

    await waitFor(() => expect(screen.getByRole("button", { name: "User menu" }).textContent).toBe("Z"));
  });

  it("opens the user menu with Profile, API Keys, Webhooks, Wallet, Analytics, API reference and Sign out", async () => {
    stubSignedInApi();
    const { router } = renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    await userEvent.click(screen.getByRole("button", { name: "User menu" }));
    const menu = await screen.findByRole("menu");
    expect(
      within(menu)
        .getAllByRole("menuitem")
        .map((item) => item.textContent),
    ).toEqual(["Profile", "API Keys", "Webhooks", "Wallet", "Analytics", "API reference", "Sign out"]);
    const reference = within(menu).getByRole("menuitem", { name: "API reference" });
    expect([reference.tagName, reference.getAttribute("href")]).toEqual(["A", "/api/docs"]);

    await userEvent.click(within(menu).getByRole("menuitem", { name: "Profile" }));
    await waitFor(() => expect(currentPath(router)).toBe("/profile"));
  });

  it("opens the user menu from the keyboard", async () => {
    stubSignedInApi();
    renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    screen.getByRole("button", { name: "User menu" }).focus();
    await userEvent.keyboard("{Enter}");

    expect(await screen.findByRole("menuitem", { name: "Sign out" })).toBeDefined();
  });

  it("signs out of the API, the local session and the identity provider", async () => {
    const api = stubSignedInApi({ "POST /api/auth/logout/": () => jsonResponse({ success: true }) });
    window.localStorage.setItem("token", "test-access-token");
    const auth = createTestAuth("signed-in");
    const { router, queryClient } = renderRoute("/profile", { auth });
    await screen.findByRole("heading", { name: "Profile Settings" });

    await userEvent.click(screen.getByRole("button", { name: "User menu" }));
    await userEvent.click(await screen.findByRole("menuitem", { name: "Sign out" }));

    await waitFor(() =>
      expect(auth.signoutRedirect).toHaveBeenCalledWith({ id_token_hint: "test-id-token" }),
    );
    expect(api.callsTo("POST /api/auth/logout/")).toHaveLength(1);
    expect(auth.removeUser).toHaveBeenCalled();
    expect(window.localStorage.getItem("token")).toBeNull();
    expect(queryClient.getQueryData(["profile"])).toBeUndefined();
    expect(currentPath(router)).toBe("/");
  });

  it("still goes home when signing out at the provider fails", async () => {
    stubSignedInApi({ "POST /api/auth/logout/": () => new Response("", { status: 500 }) });
    const auth = createTestAuth("signed-in");
    vi.mocked(auth.signoutRedirect).mockRejectedValue(new Error("offline"));
    const { router } = renderRoute("/dashboard", { auth });

    await userEvent.click(screen.getByRole("button", { name: "User menu" }));
    await userEvent.click(await screen.findByRole("menuitem", { name: "Sign out" }));

    await waitFor(() => expect(auth.signoutRedirect).toHaveBeenCalled());
    expect(currentPath(router)).toBe("/");
    expect(await screen.findByRole("link", { name: "Sign in" })).toBeDefined();
  });

  it("shows Earnings only to someone selling an app, not to a brand-new person", async () => {
    // Everyone who signs up has a creator record (the fixture's person too); without an app there is nothing to earn.
    stubSignedInApi({ "GET /api/app/": () => jsonResponse([]) });
    renderRoute("/dashboard", { auth: createTestAuth("signed-in") });
    const nav = await screen.findByRole("navigation", { name: "Main" });
    await within(nav).findByRole("link", { name: "Wallet" });
    await waitFor(() => expect(within(nav).queryByRole("link", { name: "Earnings" })).toBeNull());
  });

  it("has a mobile menu with the same destinations", async () => {
    stubSignedInApi({ "GET /api/app/": () => jsonResponse([applicationFixture()]) });
    const { router } = renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    const toggle = screen.getByRole("button", { name: "Open menu" });
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    await userEvent.click(toggle);

    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    expect(toggle.getAttribute("aria-label")).toBe("Close menu");
    const panel = document.getElementById("mobile-menu");
    if (!panel) throw new Error("mobile menu not shown");
    await within(panel).findByRole("link", { name: "Earnings" });
    const links = within(panel)
      .getAllByRole("link")
      .map((link) => link.textContent);
    expect(links).toEqual([
      "Create organization",
      "Dashboard",
      "Applications",
      "Analytics",
      // The fixture's person sells an app.
      "Earnings",
      "API Test",
      "Explore",
      "Wallet",
      "Subscriptions",
      "Profile",
      "API Keys",
      "Webhooks",
      "API reference",
    ]);
    // The API server's page: a plain link, a full page load.
    expect(within(panel).getByRole("link", { name: "API reference" }).getAttribute("href")).toBe("/api/docs");
    expect(within(panel).getByRole("button", { name: "Sign out" })).toBeDefined();

    await userEvent.click(within(panel).getByRole("link", { name: "Profile" }));
    await waitFor(() => expect(currentPath(router)).toBe("/profile"));
    expect(document.getElementById("mobile-menu")).toBeNull();
  });
});
