import type { RuntimeConfig } from "@promptmint/contracts";
import { useQueryClient } from "@tanstack/react-query";
import { ErrorResponse, User, UserManager, WebStorageStateStore } from "oidc-client-ts";
import { type ReactNode, useEffect, useRef, useState } from "react";
import { AuthProvider, useAuth } from "react-oidc-context";
import { LoadingState } from "../components/ui/spinner";
import { ACCESS_TOKEN_STORAGE_KEY, setAccessTokenProvider, setUnauthorizedHandler } from "../lib/api-client";
import { profileQueryKey } from "../lib/profile-query";

export const AUTH_CALLBACK_PATH = "/auth/callback";

// One UserManager per identity configuration for the page's lifetime: a second instance would
// run its own silent renew and spend the refresh token twice.
const userManagers = new Map<string, UserManager>();

export function userManagerFor(oidc: RuntimeConfig["oidc"]): UserManager {
  const key = JSON.stringify(oidc);
  const existing = userManagers.get(key);
  if (existing) return existing;

  const origin = window.location.origin;
  const userManager = new UserManager({
    authority: oidc.issuer ?? "",
    client_id: oidc.client_id ?? "",
    redirect_uri: `${origin}${AUTH_CALLBACK_PATH}`,
    post_logout_redirect_uri: `${origin}/`,
    response_type: "code",
    scope: oidc.scope,
    // Local storage: a tab opened later finds the user and their refresh token (session storage
    // would not); tabs follow each other through storage events (followOtherTabs).
    userStore: new WebStorageStateStore({ store: window.localStorage }),
    // The library's renewal fires a fixed 60 s before expiry, every second for shorter tokens;
    // keepFresh renews at a share of the token's own lifetime instead.
    automaticSilentRenew: false,
    // External providers such as Auth0 issue API access tokens only for a requested audience.
    ...(oidc.audience && !oidc.embedded ? { extraQueryParams: { audience: oidc.audience } } : {}),
  });
  renewOneAtATime(userManager);
  keepFresh(userManager);
  followOtherTabs(userManager);
  setAccessTokenProvider(() => currentAccessToken(userManager));
  setUnauthorizedHandler((rejected) => accessTokenAfterRejection(userManager, rejected));
  userManagers.set(key, userManager);
  return userManager;
}

/** Where oidc-client-ts keeps the user (WebStorageStateStore's prefix + UserManager's key). */
export function userStorageKey(userManager: UserManager): string {
  return `oidc.user:${userManager.settings.authority}:${userManager.settings.client_id}`;
}

/** Assumed when a token does not say how long it lives (an opaque token of an external issuer). */
const DEFAULT_TOKEN_LIFETIME_SECONDS = 300;

/** The access token's lifetime in seconds, from its `iat` and `exp` when it is a JWT. */
export function tokenLifetimeSeconds(accessToken: string): number {
  try {
    const payload = JSON.parse(
      atob((accessToken.split(".")[1] ?? "").replace(/-/g, "+").replace(/_/g, "/")),
    ) as { iat?: unknown; exp?: unknown };
    if (typeof payload.iat === "number" && typeof payload.exp === "number" && payload.exp > payload.iat)
      return payload.exp - payload.iat;
  } catch {
    // Not a JWT: the default.
  }
  return DEFAULT_TOKEN_LIFETIME_SECONDS;
}

/**
 * Renew this long before expiry: a quarter of the token's lifetime, at most a minute (a 5-minute
 * token at 60 s left, a 20 s token at 5 s left). A token about to expire may be refused on arrival.
 */
export function renewMarginSeconds(user: User): number {
  return Math.min(60, tokenLifetimeSeconds(user.access_token) / 4);
}

export function isRenewalDue(user: User): boolean {
  return (user.expires_in ?? 0) <= renewMarginSeconds(user);
}

/**
 * The access token for the next request. Renewals keep it fresh (keepFresh), but a tab that slept
 * through its timer (browsers throttle background tabs) renews first instead of sending an
 * expired token.
 */
export async function currentAccessToken(userManager: UserManager): Promise<string | undefined> {
  const user = await userManager.getUser();
  if (!user?.refresh_token || !isRenewalDue(user)) return user?.access_token;
  const renewed = await userManager.signinSilent().catch(() => null);
  return renewed?.access_token ?? user.access_token;
}

/**
 * The API refused `rejected` (401): a token renewed since (by another tab, or a renewal under
 * way), or a new one from the refresh token; undefined when there is none, and the request fails.
 */
export async function accessTokenAfterRejection(
  userManager: UserManager,
  rejected: string,
): Promise<string | undefined> {
  const renew = renewals.get(userManager);
  if (!renew) return undefined;
  const user = await renew(rejected).catch(() => null);
  return user?.access_token && user.access_token !== rejected ? user.access_token : undefined;
}

/** The token endpoint refused the refresh token: it expired, was revoked, or was used already. */
export function isRefreshTokenRefused(error: unknown): boolean {
  return error instanceof ErrorResponse && error.error === "invalid_grant";
}

type Renewal = (rejected?: string) => Promise<User | null>;
const renewals = new WeakMap<UserManager, Renewal>();

/**
 * The issuer rotates refresh tokens and treats a reused one as stolen: it revokes the whole
 * session. So renewals never overlap, in this tab (timer and requests) or across tabs sharing the
 * stored user (Web Locks); a renewal that finds a token another tab already renewed adopts it.
 * A refused refresh token signs the user out (in every tab): the guard then sends them to /login.
 */
function renewOneAtATime(userManager: UserManager): void {
  const signinSilent = userManager.signinSilent.bind(userManager);
  let running: Promise<User | null> | undefined;
  const renew = async (rejected?: string): Promise<User | null> => {
    const stored = await userManager.getUser();
    // Signed out meanwhile (here or in another tab): nothing to renew.
    if (!stored) return null;
    // Renewed meanwhile (by another tab, or by the renewal this one waited for).
    if (!isRenewalDue(stored) && (rejected === undefined || stored.access_token !== rejected)) {
      await userManager.events.load(stored);
      return stored;
    }
    try {
      return await signinSilent();
    } catch (error) {
      if (isRefreshTokenRefused(error)) await userManager.removeUser();
      throw error;
    }
  };
  const once: Renewal = (rejected) => {
    running ??= (
      navigator.locks
        ? navigator.locks.request("promptmint:token-renewal", () => renew(rejected))
        : renew(rejected)
    ).finally(() => {
      running = undefined;
    });
    return running;
  };
  renewals.set(userManager, once);
  userManager.signinSilent = () => once();
}

/** A renewal that failed for another reason than a refused refresh token is tried again after this. */
const RETRY_RENEWAL_MS = 10_000;

/**
 * Renews the access token before it expires, from each load of the user (sign-in, renewal,
 * another tab's renewal), and again when a hidden tab comes back (its timers were throttled).
 */
function keepFresh(userManager: UserManager): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const renewIn = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      userManager.signinSilent().catch((error: unknown) => {
        if (!isRefreshTokenRefused(error)) renewIn(RETRY_RENEWAL_MS);
      });
    }, ms);
  };
  const schedule = (user: User | null) => {
    clearTimeout(timer);
    if (!user || user.expires_in === undefined) return;
    renewIn(Math.max(0, (user.expires_in - renewMarginSeconds(user)) * 1000));
  };
  userManager.events.addUserLoaded(schedule);
  userManager.events.addUserUnloaded(() => clearTimeout(timer));
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") void userManager.getUser().then(schedule);
  });
  void userManager.getUser().then(schedule);
}

/**
 * Another tab signed in, renewed or signed out (the stored user changed): this tab follows, so
 * signing out in one tab signs out all of them.
 */
function followOtherTabs(userManager: UserManager): void {
  const key = userStorageKey(userManager);
  window.addEventListener("storage", (event) => {
    if (event.storageArea !== window.localStorage || (event.key !== null && event.key !== key)) return;
    void userManager
      .getUser()
      .then((user) => (user ? userManager.events.load(user) : userManager.events.unload()));
  });
}

/** The stored user, read at once (no renewal, no event). */
function storedUser(userManager: UserManager): User | null {
  try {
    const stored = window.localStorage.getItem(userStorageKey(userManager));
    return stored ? User.fromStorageString(stored) : null;
  } catch {
    return null;
  }
}

/**
 * A returning user's access token has expired (or is about to) but their refresh token may still
 * be good: renew before the app reads the session, so it never sees them signed out meanwhile.
 */
export function needsRestore(userManager: UserManager): boolean {
  if (window.location.pathname === AUTH_CALLBACK_PATH) return false;
  const user = storedUser(userManager);
  return Boolean(user?.refresh_token && isRenewalDue(user));
}

/**
 * Renews the stored session before the app starts; a refused refresh token removes the user (the
 * guard then sends them to /login, remembering the page), another failure leaves it as it was.
 */
export async function restoreSession(userManager: UserManager): Promise<void> {
  await userManager.signinSilent().catch(() => undefined);
}

/** False while the returning user's session is being renewed (restoreSession). */
export function useRestoredSession(userManager: UserManager): boolean {
  const [restored, setRestored] = useState(() => !needsRestore(userManager));
  useEffect(() => {
    if (restored) return;
    let active = true;
    void restoreSession(userManager).finally(() => {
      if (active) setRestored(true);
    });
    return () => {
      active = false;
    };
  }, [userManager, restored]);
  return restored;
}

/**
 * Without a refresh token, silent renew loads the callback in a hidden iframe. That frame only
 * hands the provider's answer to the app in the parent window; it must not start the app.
 */
export function isSilentRenewFrame(): boolean {
  return window.self !== window.top && window.location.pathname === AUTH_CALLBACK_PATH;
}

export async function completeSilentRenewInFrame(): Promise<void> {
  const origin = window.location.origin;
  // Only notifies the parent window; the settings are never used for a request.
  const frameManager = new UserManager({
    authority: origin,
    client_id: "silent-renew-frame",
    redirect_uri: `${origin}${AUTH_CALLBACK_PATH}`,
    automaticSilentRenew: false,
  });
  await frameManager.signinSilentCallback();
}

function removeAuthParamsFromUrl(): void {
  window.history.replaceState(window.history.state, document.title, window.location.pathname);
}

/** Keeps the stored token and the profile in step with the signed-in user. */
export function AuthSessionSync() {
  const { user, isLoading } = useAuth();
  const queryClient = useQueryClient();
  const accessToken = user?.access_token;
  const subject = user?.profile.sub;
  const previousSubject = useRef(subject);

  useEffect(() => {
    if (accessToken) window.localStorage.setItem(ACCESS_TOKEN_STORAGE_KEY, accessToken);
    else if (!isLoading) window.localStorage.removeItem(ACCESS_TOKEN_STORAGE_KEY);
  }, [accessToken, isLoading]);

  useEffect(() => {
    if (previousSubject.current === subject) return;
    previousSubject.current = subject;
    if (subject) void queryClient.invalidateQueries({ queryKey: profileQueryKey });
    else queryClient.removeQueries({ queryKey: profileQueryKey });
  }, [subject, queryClient]);

  return null;
}

export function OidcAuthProvider({ config, children }: { config: RuntimeConfig; children: ReactNode }) {
  const userManager = userManagerFor(config.oidc);
  const restored = useRestoredSession(userManager);
  if (!restored) return <LoadingState label="Loading Promptmint..." fullScreen />;
  return (
    <AuthProvider
      userManager={userManager}
      onSigninCallback={removeAuthParamsFromUrl}
      skipSigninCallback={window.location.pathname !== AUTH_CALLBACK_PATH}
    >
      <AuthSessionSync />
      {children}
    </AuthProvider>
  );
}
