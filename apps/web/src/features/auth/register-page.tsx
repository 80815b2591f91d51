import { UserPlus } from "lucide-react";
import { Link, Navigate } from "react-router";
import { Button } from "../../components/ui/button";
import { AuthScreen } from "./auth-screen";
import { useSignInRedirect } from "./use-sign-in-redirect";

export function RegisterPage() {
  const { auth, from, busy, error, start } = useSignInRedirect();

  if (auth.isAuthenticated) return <Navigate to={from ?? "/dashboard"} replace />;

  function signUp() {
    void start({
      state: { intent: "register" },
      // Replaces the configured extra parameters for this request, so keep them (e.g. audience).
      extraQueryParams: { ...auth.settings.extraQueryParams, screen_hint: "signup" },
    });
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
