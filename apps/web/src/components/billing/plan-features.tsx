import type { Package } from "@promptmint/contracts";
import { Check } from "lucide-react";
import { formatDateTime, formatDollars, formatNumber, formatPlanTerms } from "../../lib/format";

/** An announced change of a plan's terms, or null: `Changes on <date>: $5.00 for 1 call per 30 days`. */
export function planChangeNotice(plan: Pick<Package, "pending_terms">): string | null {
  const next = plan.pending_terms;
  return next ? `Changes on ${formatDateTime(next.effective_from)}: ${formatPlanTerms(next)}` : null;
}

/** SPEC §2: '$' plus the price per currency, e.g. `$5.00/usd`. */
export function planPriceLabel(plan: Pick<Package, "price" | "currency">): string {
  return `${formatDollars(plan.price)}/${plan.currency}`;
}

/** SPEC §2: a plan whose name contains 'pro' gets the 'Popular' ribbon. */
/** Plans as a person compares them: the ones on offer first, cheapest first; withdrawn ones last. */
export function orderPlans<T extends Pick<Package, "is_active" | "price_cents">>(plans: readonly T[]): T[] {
  return [...plans].sort(
    (a, b) => Number(b.is_active) - Number(a.is_active) || a.price_cents - b.price_cents,
  );
}

export function isPopularPlan(plan: Pick<Package, "name">): boolean {
  return /pro/i.test(plan.name);
}

/** The included calls, then the plan's features as `key: value`. */
export function PlanFeatureList({ plan, className }: { plan: Package; className?: string }) {
  const items = [
    `${formatNumber(plan.included_calls)} ${plan.included_calls === 1 ? "call" : "calls"} included per period`,
    ...Object.entries(plan.features).map(([key, value]) => (value ? `${key}: ${value}` : key)),
  ];
  return (
    <ul className={className ?? "space-y-2 text-sm text-slate-600"}>
      {items.map((item) => (
        <li key={item} className="flex gap-2">
          <Check className="mt-0.5 size-4 shrink-0 text-green-600" aria-hidden="true" />
          <span className="min-w-0 break-words">{item}</span>
        </li>
      ))}
    </ul>
  );
}
