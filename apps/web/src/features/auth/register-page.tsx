import { UserPlus } from "lucide-react";
import { useState } from "react";
import { useAuth } from "react-oidc-context";
import { Link, Navigate, useLocation } from "react-router";
import { Button } from "../../components/ui/button";
import { fromPathOf, rememberIntendedPath } from "../../lib/intended-path";
import { authErrorOf, SIGN_IN_FAILED } from "./auth-messages";
import { AuthScreen } from "./auth-screen";

export function RegisterPage() {
  const auth = useAuth();
  const location = useLocation();
  const from = fromPathOf(location.state);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(() => authErrorOf(location.state));

  if (auth.isAuthenticated) return <Navigate to={from ?? "/dashboard"} replace />;

  async function signUp() {
    setError(null);
    setBusy(true);
    if (from) rememberIntendedPath(from);
    try {
      await auth.signinRedirect({
        state: { intent: "register" },
        // Replaces the configured extra parameters for this request, so keep them (e.g. audience).
        extraQueryParams: { ...auth.settings.extraQueryParams, screen_hint: "signup" },
      });
    } catch {
      setError(SIGN_IN_FAILED);
      setBusy(false);
    }
  }

  return (
    <AuthScreen
      title="Create your account"
      subtitle="Start monetizing your AI prompts today"
      error={error}
      footer={
        <Link to="/login" className="font-medium text-brand-600 hover:text-brand-700">
          Already have an account? Sign in
        </Link>
      }
    >
      <Button size="lg" className="w-full" busy={busy} onClick={signUp}>
        {!busy && <UserPlus className="size-4" aria-hidden="true" />}
        {busy ? "Creating account..." : "Create Account"}
      </Button>
      <p className="text-center text-xs leading-relaxed text-slate-500">
        By creating an account, you agree to our Terms of Service and Privacy Policy.
      </p>
    </AuthScreen>
  );
}
