import { useDeferredValue, useEffect } from "react";
import { useAuth } from "react-oidc-context";
import { Navigate, Outlet, useLocation } from "react-router";
import { LoadingState } from "../components/ui/spinner";
import { pathOf, rememberIntendedPath } from "../lib/intended-path";

/** SPEC §2: protected screens wait for auth, and send signed-out visitors to /login. */
export function ProtectedRoute() {
  const auth = useAuth();
  // The screen behind the guard renders as a transition once the session is read, in slices that
  // leave the page responsive, rather than in one long task (docs/decisions/016). Signing out still
  // hides it at once: only the step to "signed in" is deferred.
  const deferredAuthenticated = useDeferredValue(auth.isAuthenticated);
  const isAuthenticated = auth.isAuthenticated && deferredAuthenticated;
  const isLoading = auth.isLoading || (auth.isAuthenticated && !deferredAuthenticated);
  const location = useLocation();
  const signedOut = !isAuthenticated && !isLoading;
  const requestedPath = pathOf(location);

  useEffect(() => {
    if (signedOut) rememberIntendedPath(requestedPath);
  }, [signedOut, requestedPath]);

  if (isAuthenticated) return <Outlet />;
  if (isLoading) return <LoadingState label="Checking authentication..." />;
  return <Navigate to="/login" replace state={{ from: location }} />;
}
