import { LogIn } from "lucide-react";
import { useState } from "react";
import { useAuth } from "react-oidc-context";
import { Link, Navigate, useLocation } from "react-router";
import { Button } from "../../components/ui/button";
import { fromPathOf, rememberIntendedPath } from "../../lib/intended-path";
import { authErrorOf, SIGN_IN_FAILED } from "./auth-messages";
import { AuthScreen } from "./auth-screen";

export function LoginPage() {
  const auth = useAuth();
  const location = useLocation();
  const from = fromPathOf(location.state);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(() => authErrorOf(location.state));

  if (auth.isAuthenticated) return <Navigate to={from ?? "/"} replace />;

  async function signIn() {
    setError(null);
    setBusy(true);
    if (from) rememberIntendedPath(from);
    try {
      await auth.signinRedirect({ state: { intent: "login" } });
    } catch {
      setError(SIGN_IN_FAILED);
      setBusy(false);
    }
  }

  return (
    <AuthScreen
      title="Sign in to your account"
      subtitle="Welcome back. Continue to your Promptmint dashboard."
      error={error}
      footer={
        <>
          New to Promptmint?{" "}
          <Link to="/register" className="font-medium text-brand-600 hover:text-brand-700">
            Create new account
          </Link>
        </>
      }
    >
      <Button size="lg" className="w-full" busy={busy} onClick={signIn}>
        {!busy && <LogIn className="size-4" aria-hidden="true" />}
        {busy ? "Signing in..." : "Sign In"}
      </Button>
      <p className="text-center text-xs text-slate-500">
        You will continue on our secure sign-in page and come straight back here.
      </p>
    </AuthScreen>
  );
}
