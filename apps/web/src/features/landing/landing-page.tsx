import { ArrowRight, BarChart3, CreditCard, Rocket, Workflow } from "lucide-react";
import { useAuth } from "react-oidc-context";
import { Link } from "react-router";
import { Alert } from "../../components/ui/alert";
import { ButtonLink, buttonClasses } from "../../components/ui/button";
import { IconTile } from "../../components/ui/icon-tile";
import { useDocumentTitle } from "../../lib/document-title";
import { describeSession, useProfile } from "../../lib/profile-query";

/**
 * What the landing page promises. Each line is true of the product today (landing-page.test.tsx
 * pins them; change a promise only with the product): the fee and model cost come off a creator's
 * share (billing/postings.ts), failed calls and an owner's own calls are not charged
 * (gateway/paid-call.ts), payouts go through Stripe Connect or the sandbox (modules/payouts), token
 * usage is charted across applications (/analytics), and Dify, n8n and Flowise are the workflow
 * providers (workflows/providers).
 */
const FEATURES = [
  {
    icon: Rocket,
    title: "One-click API hosting",
    description:
      "Publish a prompt template with its model settings as a production HTTP endpoint. No servers, no deploys.",
  },
  {
    icon: CreditCard,
    title: "Seamless payments",
    description:
      "Set a price per call and earn on every paid call, less the platform fee and, on the platform's model keys, the model cost. Plans, wallets and payouts to your bank through Stripe are built in.",
  },
  {
    icon: BarChart3,
    title: "Usage analytics",
    description:
      "Follow invocations, success rates, response times and revenue for every application, and token usage across them.",
  },
  {
    icon: Workflow,
    title: "Bring your workflows",
    description:
      "Turn a Dify, n8n or Flowise workflow into a paid API with the same keys, limits and billing.",
  },
] as const;

export function LandingPage() {
  useDocumentTitle("Turn prompts and workflows into paid APIs");
  const auth = useAuth();
  const profile = useProfile();
  const signedIn = auth.isAuthenticated;
  const { name } = describeSession(profile.data, auth.user);

  return (
    <div>
      <section className="relative overflow-hidden border-b border-slate-200 bg-white">
        <div
          aria-hidden="true"
          className="pointer-events-none absolute inset-x-0 -top-40 h-96 bg-linear-to-b from-brand-100/70 to-transparent blur-2xl"
        />
        <div className="relative mx-auto max-w-5xl px-4 py-20 text-center sm:px-6 sm:py-28">
          <p className="inline-flex items-center rounded-full border border-brand-200 bg-brand-50 px-3 py-1 text-xs font-medium text-brand-700">
            Prompts and workflows, sold as APIs
          </p>
          <h1 className="mx-auto mt-6 max-w-3xl text-4xl font-semibold tracking-tight text-slate-900 sm:text-6xl">
            Monetize your AI prompts as{" "}
            {/* Never broken at a hyphen ("pay-per- / call"): the phrase wraps as a whole. */}
            <span className="whitespace-nowrap text-brand-600">pay-per-call</span>{" "}
            <span className="text-brand-600">APIs</span>
          </h1>
          <p className="mx-auto mt-6 max-w-2xl text-base text-slate-600 sm:text-lg">
            Turn a prompt or an AI workflow into a hosted endpoint, set your price per call, and earn on every
            paid call.
          </p>

          {signedIn && (
            <Alert tone="info" role="status" className="mx-auto mt-8 max-w-md justify-center text-left">
              Welcome back, {name}!
            </Alert>
          )}

          <div className="mt-10 flex flex-col items-center justify-center gap-3 sm:flex-row">
            {signedIn ? (
              <ButtonLink to="/dashboard" size="lg">
                Go to Dashboard
                <ArrowRight className="size-4" aria-hidden="true" />
              </ButtonLink>
            ) : (
              <>
                <ButtonLink to="/register" size="lg">
                  Get Started Free
                  <ArrowRight className="size-4" aria-hidden="true" />
                </ButtonLink>
                <ButtonLink to="/login" size="lg" variant="secondary">
                  Sign In
                </ButtonLink>
              </>
            )}
            {/* biome-ignore lint/a11y/noAmbiguousAnchorText: SPEC names it 'Learn more'; it leads to the features right below. */}
            <a href="#features" className={buttonClasses("ghost", "lg")}>
              Learn more
            </a>
          </div>
          <p className="mt-6 text-sm text-slate-500">
            Looking for an AI API to use?{" "}
            <Link to="/explore" className="font-medium text-brand-600 hover:text-brand-700">
              Explore the apps creators have published
            </Link>
          </p>
        </div>
      </section>

      <section id="features" className="mx-auto max-w-6xl scroll-mt-20 px-4 py-20 sm:px-6">
        <div className="mx-auto max-w-2xl text-center">
          <h2 className="text-3xl font-semibold tracking-tight text-slate-900">
            Everything you need to sell AI
          </h2>
          <p className="mt-3 text-slate-600">From the first prompt to the first payout, in one place.</p>
        </div>
        <ul className="mt-12 grid gap-6 sm:grid-cols-2 lg:grid-cols-4">
          {FEATURES.map(({ icon, title, description }) => (
            <li
              key={title}
              className="rounded-xl border border-slate-200 bg-white p-6 shadow-sm shadow-slate-900/5"
            >
              <IconTile icon={icon} />
              <h3 className="mt-4 font-semibold text-slate-900">{title}</h3>
              <p className="mt-2 text-sm leading-relaxed text-slate-600">{description}</p>
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}
