import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef } from "react";
import { useAuth } from "react-oidc-context";
import { useNavigate } from "react-router";
import { LoadingState } from "../../components/ui/spinner";
import { takeIntendedPath } from "../../lib/intended-path";
import { profileQueryKey } from "../../lib/profile-query";
import { openServerSession, signInIntentOf } from "./api/session";
import { type AuthErrorState, SIGN_IN_FAILED } from "./auth-messages";

/**
 * Where the identity provider sends the person back. The auth provider has already checked
 * the answer (state, code, tokens); this screen opens the API session, loads the profile and
 * goes on to the page the person first asked for.
 */
export function AuthCallbackPage() {
  const { isLoading, isAuthenticated, user, error, removeUser } = useAuth();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const handled = useRef(false);

  useEffect(() => {
    if (isLoading || handled.current) return;
    handled.current = true;
    const failed: AuthErrorState = { authError: SIGN_IN_FAILED };

    if (error) {
      navigate("/login", { replace: true, state: failed });
      return;
    }
    if (!isAuthenticated || !user) {
      navigate("/login", { replace: true });
      return;
    }

    openServerSession(signInIntentOf(user.state), user.access_token).then(
      (profile) => {
        queryClient.setQueryData(profileQueryKey, profile);
        navigate(takeIntendedPath() ?? "/dashboard", { replace: true });
      },
      async () => {
        // The API refused this person: drop the local session so the sign-in screen shows.
        await removeUser().catch(() => undefined);
        navigate("/login", { replace: true, state: failed });
      },
    );
  }, [isLoading, isAuthenticated, user, error, removeUser, navigate, queryClient]);

  return <LoadingState label="Signing you in..." />;
}
