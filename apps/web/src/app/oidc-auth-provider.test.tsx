import { QueryClientProvider } from "@tanstack/react-query";
import { act, render, screen } from "@testing-library/react";
import { ErrorResponse, User, UserManager } from "oidc-client-ts";
import { useAuth } from "react-oidc-context";
import { afterEach, describe, expect, it, vi } from "vitest";
import { profileQueryKey } from "../lib/profile-query";
import { createTestAuth } from "../test/auth-state";
import { profileFixture, runtimeConfigFixture } from "../test/fixtures";
import { createTestQueryClient, renderRoute } from "../test/render-route";
import {
  AuthSessionSync,
  accessTokenAfterRejection,
  currentAccessToken,
  OidcAuthProvider,
  renewMarginSeconds,
  tokenLifetimeSeconds,
  userManagerFor,
  userStorageKey,
} from "./oidc-auth-provider";

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
    // Renewal is keepFresh's, at a share of the token's lifetime (tested below).
    expect(settings.automaticSilentRenew).toBe(false);
    expect(settings.userStore).toMatchObject({ _store: window.localStorage });
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

const NOW = () => Math.floor(Date.now() / 1000);
/** A JWT-shaped access token (unsigned: the client only reads its lifetime). */
const jwt = (lifetime: number, id = "t") =>
  `e30.${btoa(JSON.stringify({ iat: NOW(), exp: NOW() + lifetime, jti: id })).replace(/=+$/, "")}.sig`;

const storedUserFor = (seconds: number, token: string, refreshToken = "refresh-1") =>
  new User({
    access_token: token,
    refresh_token: refreshToken,
    token_type: "Bearer",
    profile: { sub: "user-1", iss: "http://localhost:3000/oidc", aud: "web", exp: 0, iat: 0 },
    expires_at: NOW() + seconds,
  });

describe("renewal timing", () => {
  it("reads a JWT's lifetime, assumes 5 minutes for an opaque token, and renews at a quarter of it (≤ 60 s)", () => {
    expect(tokenLifetimeSeconds(jwt(20))).toBe(20);
    expect(tokenLifetimeSeconds("opaque")).toBe(300);
    expect(renewMarginSeconds(storedUserFor(20, jwt(20)))).toBe(5);
    expect(renewMarginSeconds(storedUserFor(300, jwt(300)))).toBe(60);
    expect(renewMarginSeconds(storedUserFor(3600, jwt(3600)))).toBe(60);
  });

  it("renews a short-lived token shortly before it expires, not every second", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    const renew = vi
      .spyOn(UserManager.prototype, "signinSilent")
      .mockImplementation(async () => storedUserFor(20, jwt(20, "renewed")));
    const manager = userManagerFor(runtimeConfigFixture({ client_id: "timer-test" }).oidc);
    await manager.storeUser(storedUserFor(20, jwt(20, "first")));
    await manager.events.load(await (manager.getUser() as Promise<User>));

    await vi.advanceTimersByTimeAsync(14_000);
    expect(renew).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(renew).toHaveBeenCalledTimes(1);
  });
});

describe("a returning user", () => {
  afterEach(() => vi.restoreAllMocks());

  function Session() {
    const auth = useAuth();
    if (auth.isLoading) return <p>auth loading</p>;
    return <p>{auth.isAuthenticated ? `signed in with ${auth.user?.access_token}` : "signed out"}</p>;
  }

  function renderApp(clientId: string) {
    const config = runtimeConfigFixture({ client_id: clientId });
    return render(
      <QueryClientProvider client={createTestQueryClient()}>
        <OidcAuthProvider config={config}>
          <Session />
        </OidcAuthProvider>
      </QueryClientProvider>,
    );
  }

  const storeExpired = (clientId: string) => {
    const manager = userManagerFor(runtimeConfigFixture({ client_id: clientId }).oidc);
    window.localStorage.setItem(
      userStorageKey(manager),
      storedUserFor(-30, "expired-token").toStorageString(),
    );
    return manager;
  };

  it("with an expired access token is renewed before the app sees the session, behind the loading screen", async () => {
    let finish: (user: User) => void = () => undefined;
    const renew = vi.spyOn(UserManager.prototype, "signinSilent").mockImplementation(
      () =>
        new Promise<User>((resolve) => {
          finish = resolve;
        }),
    );
    const manager = storeExpired("restore-test");
    renderApp("restore-test");

    expect(screen.getByText("Loading Promptmint...")).toBeDefined();
    expect(screen.queryByText("signed out")).toBeNull();
    await vi.waitFor(() => expect(renew).toHaveBeenCalledTimes(1));
    expect(screen.getByText("Loading Promptmint...")).toBeDefined();
    const renewed = storedUserFor(300, "renewed-token");
    await act(async () => {
      await manager.storeUser(renewed);
      finish(renewed);
    });
    expect(await screen.findByText("signed in with renewed-token")).toBeDefined();
    expect(renew).toHaveBeenCalledTimes(1);
  });

  it("whose refresh token is refused is signed out (the guard then sends them to /login)", async () => {
    vi.spyOn(UserManager.prototype, "signinSilent").mockRejectedValue(
      new ErrorResponse({ error: "invalid_grant", error_description: "grant request is invalid" }),
    );
    const manager = storeExpired("refused-test");
    renderApp("refused-test");

    expect(await screen.findByText("signed out")).toBeDefined();
    expect(window.localStorage.getItem(userStorageKey(manager))).toBeNull();
  });

  it("keeps the stored session when the renewal fails for another reason (offline)", async () => {
    vi.spyOn(UserManager.prototype, "signinSilent").mockRejectedValue(new TypeError("Failed to fetch"));
    const manager = storeExpired("offline-test");
    renderApp("offline-test");

    expect(await screen.findByText("signed out")).toBeDefined();
    expect(window.localStorage.getItem(userStorageKey(manager))).not.toBeNull();
  });

  it("is signed out in this tab when another tab signs out, and follows another tab's renewal", async () => {
    vi.spyOn(UserManager.prototype, "signinSilent").mockImplementation(async () => null);
    const manager = userManagerFor(runtimeConfigFixture({ client_id: "tabs-test" }).oidc);
    const key = userStorageKey(manager);
    await manager.storeUser(storedUserFor(300, "first-token"));
    renderApp("tabs-test");
    expect(await screen.findByText("signed in with first-token")).toBeDefined();

    // What the other tab's writes look like here: the storage changed, then a storage event.
    const otherTab = async (value: string | null) => {
      if (value === null) window.localStorage.removeItem(key);
      else window.localStorage.setItem(key, value);
      await act(async () => {
        window.dispatchEvent(
          new StorageEvent("storage", { key, newValue: value, storageArea: window.localStorage }),
        );
      });
    };
    await otherTab(storedUserFor(300, "other-tab-token").toStorageString());
    expect(await screen.findByText("signed in with other-tab-token")).toBeDefined();
    await otherTab(null);
    expect(await screen.findByText("signed out")).toBeDefined();
  });
});

describe("a token the API refused", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is renewed with the refresh token even before it is due, or replaced by one renewed since", async () => {
    const renew = vi
      .spyOn(UserManager.prototype, "signinSilent")
      .mockImplementation(async () => storedUserFor(300, "renewed-token"));
    const manager = userManagerFor(runtimeConfigFixture({ client_id: "rejected-test" }).oidc);
    await manager.storeUser(storedUserFor(280, "refused-token"));

    expect(await accessTokenAfterRejection(manager, "refused-token")).toBe("renewed-token");
    expect(renew).toHaveBeenCalledTimes(1);

    await manager.storeUser(storedUserFor(280, "renewed-elsewhere"));
    expect(await accessTokenAfterRejection(manager, "refused-token")).toBe("renewed-elsewhere");
    expect(renew).toHaveBeenCalledTimes(1);
  });

  it("gives nothing to retry with when the refresh fails", async () => {
    vi.spyOn(UserManager.prototype, "signinSilent").mockRejectedValue(
      new ErrorResponse({ error: "invalid_grant" }),
    );
    const manager = userManagerFor(runtimeConfigFixture({ client_id: "rejected-fails" }).oidc);
    await manager.storeUser(storedUserFor(280, "refused-token"));

    expect(await accessTokenAfterRejection(manager, "refused-token")).toBeUndefined();
    expect(await manager.getUser()).toBeNull();
  });
});
