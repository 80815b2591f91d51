import { screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it } from "vitest";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { stubFetch } from "../../test/fetch-stub";
import { currentPath, renderRoute, renderSignInScreen } from "../../test/render-route";

describe("register screen", () => {
  it.each(["/register", "/auth/register"])("offers sign-up at %s", async (path) => {
    stubFetch({});
    renderRoute(path);

    expect(await screen.findByRole("heading", { name: "Create your account" })).toBeDefined();
    expect(screen.getByText("Start monetizing your AI prompts today")).toBeDefined();
    expect(screen.getByText(/Terms of Service and Privacy Policy/)).toBeDefined();
    expect(screen.getByRole("link", { name: "Already have an account? Sign in" }).getAttribute("href")).toBe(
      "/login",
    );
  });

  it("opens the provider's sign-up page and shows 'Creating account...'", async () => {
    const auth = renderSignInScreen("/register", () => new Promise(() => undefined));

    await userEvent.click(await screen.findByRole("button", { name: "Create Account" }));

    expect(auth.signinRedirect).toHaveBeenCalledWith({
      state: { intent: "register" },
      extraQueryParams: { screen_hint: "signup" },
    });
    const busy = screen.getByRole("button", { name: "Creating account..." }) as HTMLButtonElement;
    expect(busy.disabled).toBe(true);
  });

  it("shows 'Failed to sign in' and gives the button back when the provider cannot be reached", async () => {
    // react-oidc-context resolves null (and records the error) instead of rejecting.
    const _auth = renderSignInScreen("/register", () => Promise.resolve(null));

    await userEvent.click(await screen.findByRole("button", { name: "Create Account" }));

    expect((await screen.findByRole("alert")).textContent).toContain("Failed to sign in");
    expect((screen.getByRole("button", { name: "Create Account" }) as HTMLButtonElement).disabled).toBe(
      false,
    );
  });

  it("keeps the configured extra parameters such as the audience", async () => {
    stubFetch({});
    const auth = createTestAuth("signed-out");
    const withAudience = {
      ...auth,
      settings: { ...auth.settings, extraQueryParams: { audience: "https://api" } },
    };
    renderRoute("/register", { auth: withAudience });

    await userEvent.click(await screen.findByRole("button", { name: "Create Account" }));

    expect(auth.signinRedirect).toHaveBeenCalledWith({
      state: { intent: "register" },
      extraQueryParams: { audience: "https://api", screen_hint: "signup" },
    });
  });

  it("sends a signed-in user to /dashboard by default", async () => {
    stubSignedInApi();
    const { router } = renderRoute("/register", { auth: createTestAuth("signed-in") });

    expect(await screen.findByRole("heading", { name: "Dashboard", level: 1 })).toBeDefined();
    expect(currentPath(router)).toBe("/dashboard");
  });

  it("sends a signed-in user back to where they came from", async () => {
    stubSignedInApi();
    const { router } = renderRoute("/register", {
      auth: createTestAuth("signed-in"),
      state: { from: { pathname: "/profile", search: "", hash: "" } },
    });

    expect(await screen.findByRole("heading", { name: "Profile Settings" })).toBeDefined();
    expect(currentPath(router)).toBe("/profile");
  });
});
