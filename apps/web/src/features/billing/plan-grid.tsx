import type { Package, Subscription } from "@promptmint/contracts";
import { Layers } from "lucide-react";
import {
  isPopularPlan,
  orderPlans,
  PlanFeatureList,
  planPriceLabel,
} from "../../components/billing/plan-features";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card } from "../../components/ui/card";
import { cn } from "../../lib/cn";

export function PlanGrid({
  plans,
  subscriptions,
  ownerPreview = false,
  onSubscribe,
}: {
  plans: readonly Package[];
  subscriptions: readonly Subscription[];
  /** The app's owner sees the grid as subscribers do, without subscribing (their calls are free). */
  ownerPreview?: boolean;
  onSubscribe: (plan: Package) => void;
}) {
  const current = new Set(
    subscriptions.filter((subscription) => subscription.status === "active").map((s) => s.package_id),
  );

  return (
    <section aria-labelledby="available-plans">
      <h2 id="available-plans" className="text-lg font-semibold text-slate-900">
        Available Plans
      </h2>
      <p className="mt-1 text-sm text-slate-500">
        {ownerPreview
          ? "How subscribers see your plans. Your own calls to this application are free."
          : "A plan covers a number of calls each period; calls beyond it are paid from your wallet."}
      </p>
      {plans.length === 0 ? (
        <div className="mt-4 flex items-center gap-3 rounded-xl border border-dashed border-slate-300 bg-white px-5 py-6 text-sm text-slate-500">
          <Layers className="size-5 text-slate-400" aria-hidden="true" />
          {ownerPreview
            ? "No plans yet: callers pay per call from their wallets."
            : "No plans available for this application yet. Calls are paid per call from your wallet."}
        </div>
      ) : (
        <ul aria-label="Available plans" className="mt-4 grid gap-6 md:grid-cols-3">
          {orderPlans(plans).map((plan) => (
            <PlanCard
              key={plan.id}
              plan={plan}
              subscribed={current.has(plan.id)}
              preview={ownerPreview}
              onSubscribe={() => onSubscribe(plan)}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

function PlanCard({
  plan,
  subscribed,
  preview,
  onSubscribe,
}: {
  plan: Package;
  subscribed: boolean;
  preview: boolean;
  onSubscribe: () => void;
}) {
  const popular = isPopularPlan(plan);
  const nameId = `plan-${plan.id}`;
  return (
    <li aria-labelledby={nameId} className="flex">
      <Card
        className={cn(
          "relative flex w-full flex-col overflow-hidden p-6",
          popular && "border-brand-300 ring-1 ring-brand-600/30",
          !plan.is_active && "bg-slate-50",
        )}
      >
        {popular && (
          <span className="absolute top-4 -right-9 w-32 rotate-45 bg-brand-600 py-1 text-center text-xs font-semibold text-white shadow-sm">
            Popular
          </span>
        )}
        <h3 id={nameId} className="pr-10 text-lg font-semibold text-slate-900">
          {plan.name}
        </h3>
        <p className="mt-3 text-3xl font-semibold tracking-tight text-slate-900 tabular-nums">
          {planPriceLabel(plan)}
        </p>
        {!plan.is_active && (
          <Badge tone="gray" className="mt-2 self-start">
            Withdrawn
          </Badge>
        )}
        {plan.description && <p className="mt-3 text-sm text-slate-600">{plan.description}</p>}
        <PlanFeatureList plan={plan} className="mt-5 flex-1 space-y-2 text-sm text-slate-600" />
        <div className="mt-6">
          {!plan.is_active ? (
            <Button variant="secondary" className="w-full" disabled>
              Not Available
            </Button>
          ) : subscribed ? (
            <Button variant="secondary" className="w-full" disabled>
              Current Plan
            </Button>
          ) : (
            <Button
              className="w-full"
              aria-label={`Subscribe to ${plan.name}`}
              disabled={preview}
              onClick={onSubscribe}
            >
              Subscribe
            </Button>
          )}
        </div>
      </Card>
    </li>
  );
}
