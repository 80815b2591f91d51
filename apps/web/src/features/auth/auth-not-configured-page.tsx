import { KeyRound } from "lucide-react";
import { Card } from "../../components/ui/card";
import { LogoMark } from "../../components/ui/logo";

const VARIABLES = [
  {
    name: "OIDC_ISSUER",
    required: true,
    description:
      "The URL of your OpenID Connect identity provider (its issuer), e.g. https://auth.example.com/. " +
      "Its discovery document must be served at /.well-known/openid-configuration.",
  },
  {
    name: "OIDC_CLIENT_ID",
    required: true,
    description:
      "The client ID of this web app as registered at that provider: a public client using the " +
      "authorization-code flow with PKCE.",
  },
  {
    name: "OIDC_AUDIENCE",
    required: false,
    description:
      "The API audience to request access tokens for, when your provider needs one (for example Auth0).",
  },
] as const;

/** Shown for every route when the server has no identity provider settings (SPEC §2). */
export function AuthNotConfiguredPage() {
  const callbackUrl = `${window.location.origin}/auth/callback`;
  return (
    <main className="flex min-h-screen items-center justify-center px-4 py-12">
      <div className="w-full max-w-2xl">
        <div className="mb-6 flex items-center gap-2 text-lg font-semibold text-slate-900">
          <LogoMark className="size-7" />
          Promptmint
        </div>
        <Card className="overflow-hidden">
          <div className="flex items-start gap-4 border-b border-slate-100 bg-amber-50/60 px-6 py-5">
            <div className="flex size-10 shrink-0 items-center justify-center rounded-full bg-amber-100 text-amber-700">
              <KeyRound className="size-5" aria-hidden="true" />
            </div>
            <div>
              <h1 className="text-xl font-semibold text-slate-900">Authentication Not Configured</h1>
              <p className="mt-1 text-sm text-slate-600">
                Sign-in needs an identity provider. Set these environment variables on the server and restart
                it.
              </p>
            </div>
          </div>
          <ul className="divide-y divide-slate-100">
            {VARIABLES.map((variable) => (
              <li key={variable.name} className="px-6 py-4">
                <div className="flex flex-wrap items-center gap-2">
                  <code className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-sm font-semibold text-slate-900">
                    {variable.name}
                  </code>
                  <span className="text-xs font-medium text-slate-500">
                    {variable.required ? "required" : "optional"}
                  </span>
                </div>
                <p className="mt-1.5 text-sm text-slate-600">{variable.description}</p>
              </li>
            ))}
          </ul>
          <div className="border-t border-slate-100 bg-slate-50 px-6 py-4 text-sm text-slate-600">
            Register <code className="font-mono text-slate-900">{callbackUrl}</code> as the redirect URI of
            that client.
          </div>
        </Card>
      </div>
    </main>
  );
}
