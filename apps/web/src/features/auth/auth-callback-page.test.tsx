import { screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { INTENDED_PATH_STORAGE_KEY } from "../../lib/intended-path";
import { profileQueryKey } from "../../lib/profile-query";
import { stubSignedInApi } from "../../test/api-stubs";
import { createTestAuth } from "../../test/auth-state";
import { jsonResponse, stubFetch } from "../../test/fetch-stub";
import { profileFixture } from "../../test/fixtures";
import { currentPath, renderRoute } from "../../test/render-route";

describe("identity callback", () => {
  it("shows 'Signing you in...' while the provider's answer is processed", () => {
    stubFetch({});
    renderRoute("/auth/callback", { auth: createTestAuth("loading") });

    expect(screen.getByText("Signing you in...")).toBeDefined();
  });

  it("registers after sign-up and lands on the intended path", async () => {
    const profile = profileFixture();
    const api = stubSignedInApi({ "POST /api/auth/register/": () => jsonResponse(profile) });
    window.sessionStorage.setItem(INTENDED_PATH_STORAGE_KEY, "/prompts?status=live");
    const { router, queryClient } = renderRoute("/auth/callback", {
      auth: createTestAuth("signed-in", { state: { intent: "register" } }),
    });

    expect(await screen.findByRole("heading", { name: "Prompt Applications" })).toBeDefined();
    expect(currentPath(router)).toBe("/prompts?status=live");
    const [request] = api.callsTo("POST /api/auth/register/");
    expect(request?.headers.get("Authorization")).toBe("Bearer test-access-token");
    expect(request?.body).toBeUndefined();
    expect(api.callsTo("POST /api/auth/login/")).toHaveLength(0);
    expect(queryClient.getQueryData(profileQueryKey)).toEqual(profile);
    expect(window.sessionStorage.getItem(INTENDED_PATH_STORAGE_KEY)).toBeNull();
  });

  it("logs in after sign-in and goes to /dashboard without an intended path", async () => {
    const api = stubSignedInApi({ "POST /api/auth/login/": () => jsonResponse(profileFixture()) });
    const { router } = renderRoute("/auth/callback", {
      auth: createTestAuth("signed-in", { state: { intent: "login" } }),
    });

    expect(await screen.findByRole("heading", { name: "Dashboard", level: 1 })).toBeDefined();
    expect(currentPath(router)).toBe("/dashboard");
    expect(api.callsTo("POST /api/auth/login/")).toHaveLength(1);
    expect(api.callsTo("POST /api/auth/register/")).toHaveLength(0);
  });

  it("shows the sign-in screen with 'Failed to sign in' when the API refuses", async () => {
    stubFetch({
      "POST /api/auth/login/": () =>
        jsonResponse({ code: "forbidden", message: "Account disabled", status: 403 }, 403),
    });
    const auth = createTestAuth("signed-in");
    const { router } = renderRoute("/auth/callback", { auth });

    expect((await screen.findByRole("alert")).textContent).toContain("Failed to sign in");
    expect(screen.getByRole("heading", { name: "Sign in to your account" })).toBeDefined();
    expect(currentPath(router)).toBe("/login");
    expect(auth.removeUser).toHaveBeenCalled();
  });

  it("shows the sign-in screen with 'Failed to sign in' when the provider's answer is invalid", async () => {
    stubFetch({});
    const error = Object.assign(new Error("No matching state found in storage"), {
      source: "signinCallback" as const,
    });
    const { router } = renderRoute("/auth/callback", { auth: createTestAuth("signed-out", { error }) });

    expect((await screen.findByRole("alert")).textContent).toContain("Failed to sign in");
    expect(currentPath(router)).toBe("/login");
  });

  it("sends a visitor who arrives without an answer to /login", async () => {
    stubFetch({});
    const { router } = renderRoute("/auth/callback");

    await waitFor(() => expect(currentPath(router)).toBe("/login"));
    expect(screen.queryByRole("alert")).toBeNull();
  });
});
