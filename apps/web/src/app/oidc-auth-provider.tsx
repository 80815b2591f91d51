import type { RuntimeConfig } from "@promptmint/contracts";
import { useQueryClient } from "@tanstack/react-query";
import { type User, UserManager, WebStorageStateStore } from "oidc-client-ts";
import { type ReactNode, useEffect, useRef } from "react";
import { AuthProvider, useAuth } from "react-oidc-context";
import { ACCESS_TOKEN_STORAGE_KEY, setAccessTokenProvider } from "../lib/api-client";
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
    userStore: new WebStorageStateStore({ store: window.localStorage }),
    automaticSilentRenew: true,
    // External providers such as Auth0 issue API access tokens only for a requested audience.
    ...(oidc.audience && !oidc.embedded ? { extraQueryParams: { audience: oidc.audience } } : {}),
  });
  renewOneAtATime(userManager);
  setAccessTokenProvider(() => currentAccessToken(userManager));
  userManagers.set(key, userManager);
  return userManager;
}

/** Renew this long before expiry: a token about to expire may be refused on arrival. */
const RENEW_MARGIN_SECONDS = 30;

/**
 * The access token for the next request. API tokens live five minutes and the silent renew keeps
 * them fresh, but a tab that slept through its timer (browsers throttle background tabs) renews
 * first instead of sending an expired token.
 */
export async function currentAccessToken(userManager: UserManager): Promise<string | undefined> {
  const user = await userManager.getUser();
  if (!user?.refresh_token || (user.expires_in ?? 0) > RENEW_MARGIN_SECONDS) return user?.access_token;
  const renewed = await userManager.signinSilent().catch(() => null);
  return renewed?.access_token ?? user.access_token;
}

/**
 * The issuer rotates refresh tokens and treats a reused one as stolen: it revokes the whole
 * session. So renewals never overlap, in this tab (timer and requests) or across tabs sharing the
 * stored user (Web Locks); a renewal that finds a token another tab already renewed adopts it.
 */
function renewOneAtATime(userManager: UserManager): void {
  const signinSilent = userManager.signinSilent.bind(userManager);
  let running: Promise<User | null> | undefined;
  const renew = async (): Promise<User | null> => {
    const stored = await userManager.getUser();
    // Renewed meanwhile by another tab (the expiring event fires 60 s before expiry).
    if (stored && (stored.expires_in ?? 0) > 120) {
      await userManager.events.load(stored);
      return stored;
    }
    return signinSilent();
  };
  userManager.signinSilent = () => {
    running ??= (
      navigator.locks ? navigator.locks.request("promptmint:token-renewal", renew) : renew()
    ).finally(() => {
      running = undefined;
    });
    return running;
  };
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
  return (
    <AuthProvider
      userManager={userManagerFor(config.oidc)}
      onSigninCallback={removeAuthParamsFromUrl}
      skipSigninCallback={window.location.pathname !== AUTH_CALLBACK_PATH}
    >
      <AuthSessionSync />
      {children}
    </AuthProvider>
  );
}
