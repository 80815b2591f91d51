import { screen, waitFor } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { createTestAuth } from "../../test/auth-state";
import { stubFetch } from "../../test/fetch-stub";
import { currentPath, renderRoute, renderSignInScreen } from "../../test/render-route";

describe("login screen", () => {
  it.each(["/login", "/auth/login"])("offers sign-in at %s", async (path) => {
    stubFetch({});
    renderRoute(path);

    expect(await screen.findByRole("heading", { name: "Sign in to your account" })).toBeDefined();
    expect(screen.getByRole("link", { name: "Promptmint" }).getAttribute("href")).toBe("/");
    expect(screen.getByRole("link", { name: "Create new account" }).getAttribute("href")).toBe("/register");
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("starts the identity provider's sign-in and shows 'Signing in...'", async () => {
    const auth = renderSignInScreen("/login", () => new Promise(() => undefined));

    await userEvent.click(await screen.findByRole("button", { name: "Sign In" }));

    expect(auth.signinRedirect).toHaveBeenCalledWith({ state: { intent: "login" } });
    const busy = screen.getByRole("button", { name: "Signing in..." }) as HTMLButtonElement;
    expect(busy.disabled).toBe(true);
  });

  it("shows 'Failed to sign in' when the redirect cannot start", async () => {
    const _auth = renderSignInScreen("/login", () => Promise.reject(new Error("network down")));

    await userEvent.click(await screen.findByRole("button", { name: "Sign In" }));

    expect((await screen.findByRole("alert")).textContent).toContain("Failed to sign in");
    expect(screen.getByRole("button", { name: "Sign In" })).toBeDefined();
  });

  it("shows 'Failed to sign in' and gives the button back when the provider cannot be reached", async () => {
    // react-oidc-context resolves null (and records the error) instead of rejecting.
    const _auth = renderSignInScreen("/login", () => Promise.resolve(null));

    await userEvent.click(await screen.findByRole("button", { name: "Sign In" }));

    expect((await screen.findByRole("alert")).textContent).toContain("Failed to sign in");
    expect((screen.getByRole("button", { name: "Sign In" }) as HTMLButtonElement).disabled).toBe(false);
  });

  it("gives the button back without a banner when the user comes back from the provider", async () => {
    // The redirect's promise resolves only when the page returns from the back/forward cache.
    const _auth = renderSignInScreen("/login", () => Promise.resolve(undefined));

    await userEvent.click(await screen.findByRole("button", { name: "Sign In" }));

    expect(await screen.findByRole("button", { name: "Sign In" })).toBeDefined();
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("shows the error banner passed by the callback", async () => {
    stubFetch({});
    const { router } = renderRoute("/login", {
      state: { authError: "Failed to sign in", from: { pathname: "/wallet", search: "", hash: "" } },
    });

    expect((await screen.findByRole("alert")).textContent).toContain("Failed to sign in");
    // Said once: the history entry no longer carries it (a reload shows no banner), and keeps where the person was going.
    await waitFor(() =>
      expect(router.state.location.state).toEqual({ from: { pathname: "/wallet", search: "", hash: "" } }),
    );
    expect(screen.getByRole("alert").textContent).toContain("Failed to sign in");
  });

  it("sends a signed-in user back to where they came from", async () => {
    stubFetch({ "GET /api/auth/profile/": () => new Response("{}", { status: 500 }) });
    const { router } = renderRoute("/login", {
      auth: createTestAuth("signed-in"),
      state: { from: { pathname: "/workflows", search: "?status=live", hash: "" } },
    });

    expect(await screen.findByRole("heading", { name: "Workflow Applications" })).toBeDefined();
    expect(currentPath(router)).toBe("/workflows?status=live");
  });

  it("sends a signed-in user without a destination to /", async () => {
    stubFetch({ "GET /api/auth/profile/": () => new Response("{}", { status: 500 }) });
    const { router } = renderRoute("/login", { auth: createTestAuth("signed-in") });

    expect(await screen.findByRole("link", { name: /Go to Dashboard/ })).toBeDefined();
    expect(currentPath(router)).toBe("/");
  });
});
