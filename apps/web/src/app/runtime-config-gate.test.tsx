import { render, screen } from "@testing-library/react";
import { useAuth } from "react-oidc-context";
import { describe, expect, it } from "vitest";
import { jsonResponse, stubFetch } from "../test/fetch-stub";
import { runtimeConfigFixture } from "../test/fixtures";
import { createTestQueryClient } from "../test/render-route";
import { AppProviders } from "./app-providers";

function AuthProbe() {
  const auth = useAuth();
  return <p>{auth.isLoading ? "auth loading" : auth.isAuthenticated ? "signed in" : "signed out"}</p>;
}

function renderApp() {
  return render(
    <AppProviders queryClient={createTestQueryClient()}>
      <AuthProbe />
    </AppProviders>,
  );
}

describe("runtime configuration", () => {
  it("shows a spinner while the configuration loads", () => {
    stubFetch({ "GET /api/config": () => new Promise<Response>(() => undefined) });
    renderApp();

    expect(screen.getByRole("status").textContent).toContain("Loading");
  });

  it.each([
    ["the issuer", { issuer: null }],
    ["the client id", { client_id: null }],
  ])("explains the missing settings when %s is not configured", async (_, oidc) => {
    stubFetch({ "GET /api/config": () => jsonResponse(runtimeConfigFixture(oidc)) });
    renderApp();

    expect(await screen.findByRole("heading", { name: "Authentication Not Configured" })).toBeDefined();
    for (const name of ["OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_AUDIENCE"]) {
      expect(screen.getByText(name)).toBeDefined();
    }
    expect(screen.queryByText(/signed (in|out)/)).toBeNull();
  });

  it("explains the settings when the configuration cannot be loaded", async () => {
    stubFetch({ "GET /api/config": () => new Response("", { status: 503 }) });
    renderApp();

    expect(await screen.findByRole("heading", { name: "Authentication Not Configured" })).toBeDefined();
  });

  it("starts the app with sign-in when the identity provider is configured", async () => {
    const api = stubFetch({ "GET /api/config": () => jsonResponse(runtimeConfigFixture()) });
    renderApp();

    expect(await screen.findByText("signed out")).toBeDefined();
    expect(api.callsTo("GET /api/config")[0]?.headers.has("Authorization")).toBe(false);
  });

  it("starts from the configuration the server wrote into the page, without a request", async () => {
    const script = document.createElement("script");
    script.id = "runtime-config";
    script.type = "application/json";
    script.textContent = JSON.stringify(runtimeConfigFixture());
    document.head.append(script);
    try {
      const api = stubFetch({});
      renderApp();

      expect(await screen.findByText("signed out")).toBeDefined();
      expect(api.callsTo("GET /api/config")).toHaveLength(0);
    } finally {
      script.remove();
    }
  });

  it("asks the server when the page's configuration is not valid JSON", async () => {
    const script = document.createElement("script");
    script.id = "runtime-config";
    script.type = "application/json";
    script.textContent = "{not json";
    document.head.append(script);
    try {
      const api = stubFetch({ "GET /api/config": () => jsonResponse(runtimeConfigFixture()) });
      renderApp();

      expect(await screen.findByText("signed out")).toBeDefined();
      expect(api.callsTo("GET /api/config")).toHaveLength(1);
    } finally {
      script.remove();
    }
  });
});
