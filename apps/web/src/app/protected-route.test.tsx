import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { INTENDED_PATH_STORAGE_KEY } from "../lib/intended-path";
import { stubSignedInApi } from "../test/api-stubs";
import { createTestAuth } from "../test/auth-state";
import { stubFetch } from "../test/fetch-stub";
import { currentPath, renderRoute } from "../test/render-route";

const PROTECTED_PATHS = [
  "/dashboard",
  "/applications",
  "/applications/create",
  "/applications/new",
  "/applications/my-app",
  "/applications/my-app/edit",
  "/applications/my-app/billing",
  "/applications/my-app/analytics",
  "/analytics",
  "/profile",
  "/prompt-builder",
  "/prompts",
  "/prompts/my-prompt",
  "/workflows",
  "/workflows/my-flow",
];

describe("protected routes", () => {
  it("shows 'Checking authentication...' while auth loads", () => {
    stubFetch({});
    renderRoute("/dashboard", { auth: createTestAuth("loading") });

    expect(screen.getByText("Checking authentication...")).toBeDefined();
  });

  it.each(PROTECTED_PATHS)(
    "sends a signed-out visitor of %s to /login and remembers the path",
    async (path) => {
      stubFetch({});
      const { router } = renderRoute(`${path}?tab=2`);

      expect(await screen.findByRole("heading", { name: "Sign in to your account" })).toBeDefined();
      expect(currentPath(router)).toBe("/login");
      expect(router.state.location.state).toMatchObject({ from: { pathname: path, search: "?tab=2" } });
      expect(window.sessionStorage.getItem(INTENDED_PATH_STORAGE_KEY)).toBe(`${path}?tab=2`);
    },
  );

  it.each(["/login", "/register", "/auth/login", "/auth/register"])("does not remember %s", async (path) => {
    stubFetch({});
    renderRoute(path);

    expect(await screen.findByRole("button", { name: /Sign In|Create Account/ })).toBeDefined();
    expect(window.sessionStorage.getItem(INTENDED_PATH_STORAGE_KEY)).toBeNull();
  });

  it("shows the screen to a signed-in user", async () => {
    stubSignedInApi();
    const { router } = renderRoute("/dashboard", { auth: createTestAuth("signed-in") });

    expect(await screen.findByRole("heading", { name: "Dashboard", level: 1 })).toBeDefined();
    expect(currentPath(router)).toBe("/dashboard");
    expect(window.sessionStorage.getItem(INTENDED_PATH_STORAGE_KEY)).toBeNull();
  });

  it.each(["/", "/api-test", "/billing/success", "/no-such-page"])(
    "lets a signed-out visitor see %s",
    async (path) => {
      stubFetch({});
      const { router } = renderRoute(path);

      expect(await screen.findByRole("heading", { level: 1 })).toBeDefined();
      expect(currentPath(router)).toBe(path);
    },
  );
});
