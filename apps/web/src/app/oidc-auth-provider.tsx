import type { RuntimeConfig } from "@promptmint/contracts";
import { useQueryClient } from "@tanstack/react-query";
import { UserManager, WebStorageStateStore } from "oidc-client-ts";
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
  setAccessTokenProvider(async () => (await userManager.getUser())?.access_token);
  userManagers.set(key, userManager);
  return userManager;
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
