import { act, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { stubSignedInApi } from "../test/api-stubs";
import { createTestAuth } from "../test/auth-state";
import { jsonResponse, stubFetch } from "../test/fetch-stub";
import { applicationFixture, promptConfigFixture } from "../test/fixtures";
import { renderRoute } from "../test/render-route";

describe("route table", () => {
  it.each([
    ["/dashboard", "Dashboard"],
    ["/applications", "Applications"],
    ["/applications/create", "Create Application"],
    ["/applications/new", "Create Application"],
    ["/applications/my-app", "Blog Writer"],
    ["/applications/my-app/edit", "Prompt Builder"],
    ["/applications/my-app/billing", "Billing & Subscriptions"],
    ["/applications/my-app/analytics", "Blog Writer Analytics"],
    ["/analytics", "Global Analytics"],
    ["/profile", "Profile Settings"],
    ["/prompt-builder", "Prompt Builder"],
    ["/prompts", "Prompt Applications"],
    ["/prompts/my-prompt", "Blog Writer"],
    ["/workflows", "Workflow Applications"],
    ["/workflows/my-flow", "my-flow"],
    ["/api-test", "API Test Console"],
    ["/billing/success?redirect_status=succeeded", "Payment Complete"],
    ["/api-keys", "API Keys"],
    ["/webhooks", "Webhooks"],
    ["/wallet", "Wallet"],
    ["/subscriptions", "My Subscriptions"],
  ])("shows %s to a signed-in user as '%s'", async (path, title) => {
    stubSignedInApi({
      "GET /api/app/my-app/": () => jsonResponse(applicationFixture({ slug: "my-app" })),
      "GET /api/app/my-prompt/": () => jsonResponse(applicationFixture({ slug: "my-prompt" })),
      "GET /api/app/my-prompt/prompt/": () => jsonResponse(promptConfigFixture()),
    });
    renderRoute(path, { auth: createTestAuth("signed-in") });

    expect(await screen.findByRole("heading", { name: title, level: 1 })).toBeDefined();
  });

  it.each([
    ["/applications/create", "prompt application"],
    ["/applications/new?type=workflow", "workflow application"],
    ["/applications/create?type=unknown", "prompt application"],
  ])("reads the application type of %s", async (path, type) => {
    stubSignedInApi();
    renderRoute(path, { auth: createTestAuth("signed-in") });

    expect(await screen.findByText(type)).toBeDefined();
  });

  it("warns a signed-out visitor of the API test console", () => {
    stubFetch({});
    renderRoute("/api-test?app=my-app");

    expect(screen.getByRole("heading", { name: "API Test Console" })).toBeDefined();
    expect(
      screen.getByText("Authentication Required: Please log in to access your applications and test APIs."),
    ).toBeDefined();
  });

  it("does not warn a signed-in user of the API test console", async () => {
    stubSignedInApi();
    renderRoute("/api-test", { auth: createTestAuth("signed-in") });

    expect(await screen.findByRole("heading", { name: "API Test Console" })).toBeDefined();
    expect(screen.queryByText(/Authentication Required/)).toBeNull();
  });
});

describe("scroll position", () => {
  it("opens a new screen at its top, keeps it for a query change on the same screen, and restores it on Back", async () => {
    stubFetch({});
    const scrollTo = vi.fn((_x: number, y: number) => {
      Object.defineProperty(window, "scrollY", { value: y, configurable: true });
    });
    vi.stubGlobal("scrollTo", scrollTo);
    const { router } = renderRoute("/");
    await screen.findByRole("link", { name: "Promptmint" });
    const scrolledDown = () => Object.defineProperty(window, "scrollY", { value: 900, configurable: true });

    scrolledDown();
    await act(() => router.navigate("/explore"));
    expect(scrollTo).toHaveBeenLastCalledWith(0, 0);

    scrolledDown();
    scrollTo.mockClear();
    await act(() => router.navigate("/explore?q=tea", { preventScrollReset: true }));
    expect(scrollTo).not.toHaveBeenCalled();

    await act(() => router.navigate("/login"));
    expect(scrollTo).toHaveBeenLastCalledWith(0, 0);
    await act(() => router.navigate(-1));
    await waitFor(() => expect(scrollTo).toHaveBeenLastCalledWith(0, 900));
  });
});
