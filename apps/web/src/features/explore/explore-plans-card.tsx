import type { ExploreAppDetail, Package } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useAuth } from "react-oidc-context";
import { Link, useLocation, useNavigate, useSearchParams } from "react-router";
import { CheckoutDialog } from "../../components/billing/checkout-dialog";
import { Button } from "../../components/ui/button";
import { CardBody, CardHeader } from "../../components/ui/card";
import { useApplications } from "../../lib/applications-query";
import { subscriptionsQueryOptions } from "../../lib/billing/list-subscriptions";
import { formatCents, formatNumber, formatPriceNotice } from "../../lib/format";
import { rememberIntendedPath } from "../../lib/intended-path";

/** The query parameter that reopens a plan's checkout after sign-in: `/explore/{slug}?plan={id}#plans`. */
export const PLAN_PARAM = "plan";

/**
 * The app's plans on Explore, each with Subscribe into the one checkout (components/billing). A 402's
 * `plans_url` lands here (`#plans`): the card takes the focus. A signed-out visitor signs in first
 * and comes back to the same plan's checkout.
 */
export function ExplorePlansCard({ app }: { app: ExploreAppDetail }) {
  const { isAuthenticated } = useAuth();
  const location = useLocation();
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const section = useRef<HTMLElement>(null);
  const [checkoutPlan, setCheckoutPlan] = useState<Package | null>(null);
  const subscriptions = useQuery({ ...subscriptionsQueryOptions(app.slug), enabled: isAuthenticated });
  const ownApps = useApplications({ enabled: isAuthenticated });
  const ownApp = ownApps.data?.some((own) => own.slug === app.slug) ?? false;
  const current = new Set(
    (subscriptions.data ?? []).filter((s) => s.status === "active").map((s) => s.package_id),
  );

  useEffect(() => {
    if (location.hash === "#plans") section.current?.focus();
  }, [location.hash]);

  // Back from sign-in with a plan chosen: its checkout opens, once.
  const wanted = searchParams.get(PLAN_PARAM);
  useEffect(() => {
    if (!wanted || !isAuthenticated) return;
    const plan = app.plans.find((candidate) => candidate.id === wanted);
    if (plan) setCheckoutPlan(plan);
    const rest = new URLSearchParams(searchParams);
    rest.delete(PLAN_PARAM);
    const search = rest.toString();
    // The hash stays: the page is still "at the plans".
    navigate(
      { pathname: location.pathname, search: search ? `?${search}` : "", hash: location.hash },
      { replace: true, preventScrollReset: true },
    );
  }, [wanted, isAuthenticated, app.plans, searchParams, navigate, location.pathname, location.hash]);

  const subscribe = (plan: Package) => {
    if (isAuthenticated) {
      setCheckoutPlan(plan);
      return;
    }
    const from = { pathname: location.pathname, search: `?${PLAN_PARAM}=${plan.id}`, hash: "#plans" };
    rememberIntendedPath(`${from.pathname}${from.search}${from.hash}`);
    navigate("/login", { state: { from } });
  };

  return (
    <section
      id="plans"
      ref={section}
      tabIndex={-1}
      aria-labelledby="explore-plans-title"
      className="rounded-xl border border-slate-200 bg-white shadow-sm outline-none focus-visible:ring-2 focus-visible:ring-brand-500"
    >
      <CardHeader
        title={<span id="explore-plans-title">Plans</span>}
        description="Subscribe for included calls at a fixed price each period."
      />
      <CardBody>
        {app.plans.length === 0 ? (
          <p className="text-sm text-slate-500">No plans: pay per call from your wallet.</p>
        ) : (
          <ul aria-label="Plans" className="space-y-3">
            {app.plans.map((plan) => (
              <PlanSummary
                key={plan.id}
                plan={plan}
                state={ownApp ? "own" : current.has(plan.id) ? "current" : "open"}
                onSubscribe={() => subscribe(plan)}
              />
            ))}
          </ul>
        )}
        {ownApp && (
          <p className="mt-3 text-sm text-slate-500">
            This is your app: your own calls are free.{" "}
            <Link
              to={`/applications/${encodeURIComponent(app.slug)}/billing`}
              className="font-medium text-brand-700 hover:underline"
            >
              Manage its plans
            </Link>
          </p>
        )}
        {current.size > 0 && (
          <p className="mt-3 text-sm text-slate-500">
            <Link to="/subscriptions" className="font-medium text-brand-700 hover:underline">
              My subscriptions
            </Link>{" "}
            shows what you have used and lets you cancel.
          </p>
        )}
      </CardBody>
      {isAuthenticated && (
        <CheckoutDialog appSlug={app.slug} plan={checkoutPlan} onClose={() => setCheckoutPlan(null)} />
      )}
    </section>
  );
}

function PlanSummary({
  plan,
  state,
  onSubscribe,
}: {
  plan: Package;
  state: "open" | "current" | "own";
  onSubscribe: () => void;
}) {
  const period = ` / ${formatNumber(plan.period_days)} days`;
  return (
    <li aria-label={plan.name} className="rounded-lg border border-slate-200 p-3">
      <div className="flex items-baseline justify-between gap-3">
        <p className="font-medium text-slate-900">{plan.name}</p>
        <p className="text-sm font-semibold text-slate-900 tabular-nums">
          {formatCents(plan.price_cents)}
          <span className="font-normal text-slate-500">{period}</span>
        </p>
      </div>
      {formatPriceNotice(plan) && (
        <p className="mt-1 text-sm text-amber-700">{`${formatPriceNotice(plan, period)} (periods starting from then)`}</p>
      )}
      <p className="mt-1 text-sm text-slate-600">{formatNumber(plan.included_calls)} calls included</p>
      {plan.description && <p className="mt-1 text-sm text-slate-500">{plan.description}</p>}
      {state !== "own" && (
        <Button
          size="sm"
          className="mt-3 w-full"
          variant={state === "current" ? "secondary" : "primary"}
          disabled={state === "current"}
          aria-label={state === "current" ? `${plan.name}: your current plan` : `Subscribe to ${plan.name}`}
          onClick={onSubscribe}
        >
          {state === "current" ? "Current Plan" : "Subscribe"}
        </Button>
      )}
    </li>
  );
}
