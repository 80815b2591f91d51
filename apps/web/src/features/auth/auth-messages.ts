// SPEC §8: sign-in and sign-out failures, shown as a banner on the login and register screens.
export const SIGN_IN_FAILED = "Failed to sign in";
export const SIGN_OUT_FAILED = "Failed to sign out";

/** Router state a screen passes to /login to show the error banner there. */
export interface AuthErrorState {
  authError: string;
}

export function authErrorOf(state: unknown): string | null {
  if (typeof state !== "object" || state === null || !("authError" in state)) return null;
  const message = (state as { authError: unknown }).authError;
  return typeof message === "string" ? message : null;
}
