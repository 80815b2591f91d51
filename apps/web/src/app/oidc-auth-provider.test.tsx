import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { profileQueryKey } from "../lib/profile-query";
import { createTestAuth } from "../test/auth-state";
import { profileFixture, runtimeConfigFixture } from "../test/fixtures";
import { createTestQueryClient, renderRoute } from "../test/render-route";
import { AuthSessionSync, userManagerFor } from "./oidc-auth-provider";

describe("auth session sync", () => {
  function renderSync(auth = createTestAuth("signed-in")) {
    const queryClient = createTestQueryClient();
    queryClient.setQueryData(profileQueryKey, profileFixture());
    const view = renderRoute("/", {
      auth,
      queryClient,
      routes: [
        {
          path: "/",
          element: (
            <>
              <AuthSessionSync />
              <p>app</p>
            </>
          ),
        },
      ],
    });
    return { ...view, queryClient };
  }

  it("keeps the access token in local storage under 'token'", async () => {
    renderSync();

    await screen.findByText("app");
    expect(window.localStorage.getItem("token")).toBe("test-access-token");
  });

  it("reloads the profile when another user signs in, and drops it on sign-out", async () => {
    const { queryClient, setAuth } = renderSync();
    await screen.findByText("app");
    expect(queryClient.getQueryState(profileQueryKey)?.isInvalidated).toBe(false);

    setAuth(createTestAuth("signed-in", { profile: { sub: "user-2" } }));
    expect(queryClient.getQueryState(profileQueryKey)?.isInvalidated).toBe(true);

    setAuth(createTestAuth("signed-out"));
    expect(queryClient.getQueryData(profileQueryKey)).toBeUndefined();
    expect(window.localStorage.getItem("token")).toBeNull();
  });
});

describe("identity client settings", () => {
  it("uses the code flow with the server's issuer, client and scope, returning to /auth/callback", () => {
    const { settings } = userManagerFor(runtimeConfigFixture({ client_id: "settings-test" }).oidc);

    expect(settings.authority).toBe("http://localhost:3000/oidc");
    expect(settings.client_id).toBe("settings-test");
    expect(settings.response_type).toBe("code");
    expect(settings.scope).toBe("openid profile email offline_access");
    expect(settings.redirect_uri).toBe(`${window.location.origin}/auth/callback`);
    expect(settings.post_logout_redirect_uri).toBe(`${window.location.origin}/`);
    expect(settings.automaticSilentRenew).toBe(true);
    expect(settings.extraQueryParams).toEqual({});
  });

  it("asks an external provider for the API audience, but not the embedded one", () => {
    const external = runtimeConfigFixture({
      client_id: "ext",
      audience: "https://api.example",
      embedded: false,
    });
    const embedded = runtimeConfigFixture({
      client_id: "emb",
      audience: "https://api.example",
      embedded: true,
    });

    expect(userManagerFor(external.oidc).settings.extraQueryParams).toEqual({
      audience: "https://api.example",
    });
    expect(userManagerFor(embedded.oidc).settings.extraQueryParams).toEqual({});
  });
});
