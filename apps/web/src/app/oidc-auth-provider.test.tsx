import { screen } from "@testing-library/react";
import { User, UserManager } from "oidc-client-ts";
import { afterEach, describe, expect, it, vi } from "vitest";
import { profileQueryKey } from "../lib/profile-query";
import { createTestAuth } from "../test/auth-state";
import { profileFixture, runtimeConfigFixture } from "../test/fixtures";
import { createTestQueryClient, renderRoute } from "../test/render-route";
import { AuthSessionSync, currentAccessToken, userManagerFor } from "./oidc-auth-provider";

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

describe("access tokens for requests", () => {
  afterEach(() => vi.restoreAllMocks());

  const userExpiringIn = (seconds: number, token: string) =>
    new User({
      access_token: token,
      refresh_token: "refresh",
      token_type: "Bearer",
      profile: { sub: "user-1", iss: "http://localhost:3000/oidc", aud: "web", exp: 0, iat: 0 },
      expires_at: Math.floor(Date.now() / 1000) + seconds,
    });

  it("sends a fresh token as it is, and renews an expired one first, once for concurrent requests", async () => {
    const renew = vi
      .spyOn(UserManager.prototype, "signinSilent")
      .mockImplementation(async () => userExpiringIn(300, "renewed-token"));
    const manager = userManagerFor(runtimeConfigFixture({ client_id: "renew-test" }).oidc);
    const getUser = vi.spyOn(manager, "getUser").mockResolvedValue(userExpiringIn(200, "fresh-token"));
    expect(await currentAccessToken(manager)).toBe("fresh-token");
    expect(renew).not.toHaveBeenCalled();

    getUser.mockResolvedValue(userExpiringIn(-10, "expired-token"));
    const tokens = await Promise.all([currentAccessToken(manager), currentAccessToken(manager)]);
    expect(tokens).toEqual(["renewed-token", "renewed-token"]);
    expect(renew).toHaveBeenCalledTimes(1);
  });

  it("adopts a token another tab renewed instead of spending the refresh token again", async () => {
    const renew = vi.spyOn(UserManager.prototype, "signinSilent");
    const manager = userManagerFor(runtimeConfigFixture({ client_id: "adopt-test" }).oidc);
    vi.spyOn(manager, "getUser").mockResolvedValue(userExpiringIn(280, "renewed-elsewhere"));
    expect((await manager.signinSilent())?.access_token).toBe("renewed-elsewhere");
    expect(renew).not.toHaveBeenCalled();
  });
});
