import type { SigninRedirectArgs } from "oidc-client-ts";
import { useEffect, useState } from "react";
import { useAuth } from "react-oidc-context";
import { useLocation, useNavigate } from "react-router";
import { fromPathOf, rememberIntendedPath } from "../../lib/intended-path";
import { authErrorOf, SIGN_IN_FAILED } from "./auth-messages";

/**
 * How a sign-in redirect ended without leaving the page. react-oidc-context's signinRedirect does
 * not reject when the redirect cannot start (e.g. the issuer is unreachable): it records the error
 * in its state and resolves null. A redirect that started never resolves, except when the browser
 * brings the page back from its back/forward cache (then it resolves undefined). A rejection is
 * still possible from other UserManager implementations, so both count as failures.
 */
export async function redirectOutcome(start: () => Promise<unknown>): Promise<"failed" | "returned"> {
  try {
    return (await start()) === null ? "failed" : "returned";
  } catch {
    return "failed";
  }
}

/**
 * The login and register buttons: busy while the browser leaves for the issuer, back to normal
 * with SPEC §8's 'Failed to sign in' banner when it cannot, and back to normal without a banner
 * when the user returns from the issuer with the back button.
 */
export function useSignInRedirect() {
  const auth = useAuth();
  const location = useLocation();
  // Where the person was going before being sent to sign in, and why, if a guard said so.
  const from = fromPathOf(location.state);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(authErrorOf(location.state));
  const navigate = useNavigate();
  // The banner is said once: the error leaves the history entry as soon as it is read, so a
  // reload of the same page does not bring it back (issue 32); where the person was going stays.
  useEffect(() => {
    if (authErrorOf(location.state) === null) return;
    const { authError: _shown, ...rest } = location.state as Record<string, unknown>;
    navigate(`${location.pathname}${location.search}`, { replace: true, state: rest });
  }, [location, navigate]);

  async function start(args: SigninRedirectArgs) {
    setError(null);
    setBusy(true);
    if (from) rememberIntendedPath(from);
    const outcome = await redirectOutcome(() => auth.signinRedirect(args));
    if (outcome === "failed") setError(SIGN_IN_FAILED);
    setBusy(false);
  }

  return { auth, from, busy, error, start };
}
