import { useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { useAuth } from "react-oidc-context";
import { useNavigate } from "react-router";
import { writeActingOrganization } from "../../lib/acting-account";
import { ACCESS_TOKEN_STORAGE_KEY } from "../../lib/api-client";
import { closeServerSession } from "./api/session";
import { SIGN_OUT_FAILED } from "./auth-messages";

/**
 * Ends the session everywhere: the API's, the local caches and token, then the identity
 * provider's, which sends the browser back to the site root.
 */
export function useSignOut(): () => Promise<void> {
  const { user, removeUser, signoutRedirect } = useAuth();
  const queryClient = useQueryClient();
  const navigate = useNavigate();

  return useCallback(async () => {
    const idTokenHint = user?.id_token;
    await closeServerSession().catch(() => undefined);
    // Leave protected screens first (rendered now, not in a transition) so the guard does not
    // send the signed-out user to /login and remember this screen as the next destination.
    await navigate("/", { replace: true, flushSync: true });
    queryClient.clear();
    window.localStorage.removeItem(ACCESS_TOKEN_STORAGE_KEY);
    // The next person to sign in on this browser starts on their own account.
    writeActingOrganization(null);
    try {
      await removeUser();
      await signoutRedirect({ id_token_hint: idTokenHint });
    } catch {
      // The toast library loads with the first screen that needs it (docs/decisions/016).
      const { toast } = await import("sonner");
      toast.error(SIGN_OUT_FAILED);
      await navigate("/", { replace: true });
    }
  }, [user, removeUser, signoutRedirect, queryClient, navigate]);
}
