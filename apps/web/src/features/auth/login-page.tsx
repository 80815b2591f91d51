import { LogIn } from "lucide-react";
import { Link, Navigate } from "react-router";
import { Button } from "../../components/ui/button";
import { AuthScreen } from "./auth-screen";
import { useSignInRedirect } from "./use-sign-in-redirect";

export function LoginPage() {
  const { auth, from, busy, error, start } = useSignInRedirect();

  if (auth.isAuthenticated) return <Navigate to={from ?? "/"} replace />;

  function signIn() {
    void start({ state: { intent: "login" } });
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
