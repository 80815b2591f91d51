import { useEffect } from "react";
import { useAuth } from "react-oidc-context";
import { Navigate, Outlet, useLocation } from "react-router";
import { LoadingState } from "../components/ui/spinner";
import { pathOf, rememberIntendedPath } from "../lib/intended-path";

/** SPEC §2: protected screens wait for auth, and send signed-out visitors to /login. */
export function ProtectedRoute() {
  const { isAuthenticated, isLoading } = useAuth();
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
