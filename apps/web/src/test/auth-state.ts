import { User } from "oidc-client-ts";
import type { AuthContextProps } from "react-oidc-context";
import { vi } from "vitest";

export type AuthStatus = "signed-in" | "signed-out" | "loading";

export interface TestAuthOptions {
  /** Claims of the identity token. */
  profile?: Partial<User["profile"]>;
  /** The sign-in state carried through the identity provider, e.g. `{ intent: "register" }`. */
  state?: unknown;
  error?: AuthContextProps["error"];
}

export function createOidcUser({ profile, state }: TestAuthOptions = {}): User {
  return new User({
    access_token: "test-access-token",
    id_token: "test-id-token",
    token_type: "Bearer",
    scope: "openid profile email offline_access",
    expires_at: Math.floor(Date.now() / 1000) + 3600,
    profile: {
      sub: "user-1",
      iss: "https://issuer.test",
      aud: "promptmint-web",
      exp: Math.floor(Date.now() / 1000) + 3600,
      iat: Math.floor(Date.now() / 1000),
      email: "ada@example.com",
      ...profile,
    },
    userState: state,
  });
}

/**
 * The react-oidc-context value a screen sees, without an identity provider: tests put it in
 * `AuthContext` and assert on the mocked methods (signinRedirect, removeUser, ...).
 */
export function createTestAuth(status: AuthStatus, options: TestAuthOptions = {}): AuthContextProps {
  const user = status === "signed-in" ? createOidcUser(options) : null;
  return {
    user,
    isLoading: status === "loading",
    isAuthenticated: status === "signed-in",
    error: options.error,
    settings: {
      authority: "https://issuer.test",
      client_id: "promptmint-web",
      redirect_uri: "http://localhost:3000/auth/callback",
    },
    events: {} as AuthContextProps["events"],
    clearStaleState: vi.fn(async () => undefined),
    removeUser: vi.fn(async () => undefined),
    signinPopup: vi.fn(),
    signinSilent: vi.fn(async () => null),
    signinRedirect: vi.fn(async () => undefined),
    signinResourceOwnerCredentials: vi.fn(),
    signoutRedirect: vi.fn(async () => undefined),
    signoutPopup: vi.fn(async () => undefined),
    signoutSilent: vi.fn(async () => undefined),
    querySessionStatus: vi.fn(async () => null),
    revokeTokens: vi.fn(async () => undefined),
    startSilentRenew: vi.fn(),
    stopSilentRenew: vi.fn(),
  };
}
