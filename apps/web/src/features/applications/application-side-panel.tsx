import type { Application } from "@promptmint/contracts";
import { BarChart3 } from "lucide-react";
import type { ReactNode } from "react";
import { ButtonLink } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { MoneyFiguresList, noMoneyFigures } from "../../components/ui/money-figures";
import { formatCents, formatDate, formatNumber, formatPriceNotice } from "../../lib/format";
import { USAGE_DAYS, useApplicationUsage } from "./api/get-application-usage";

function Item({ term, children }: { term: string; children: ReactNode }) {
  return (
    <div className="flex items-baseline justify-between gap-4 py-2.5 first:pt-0 last:pb-0">
      <dt className="text-sm text-slate-500">{term}</dt>
      <dd className="text-right text-sm font-medium text-slate-900 tabular-nums">{children}</dd>
    </div>
  );
}

/** SPEC §2: the detail page's side column, Analytics then Details. */
export function ApplicationSidePanel({ application }: { application: Application }) {
  const usage = useApplicationUsage(application.slug);
  const figures = usage.data?.figures ?? noMoneyFigures(USAGE_DAYS);

  return (
    <div className="space-y-6">
      <Card>
        <CardHeader title="Analytics" description={figures.period} />
        <CardBody className="space-y-4">
          <dl className="divide-y divide-slate-100">
            <Item term="Total Invocations">{formatNumber(usage.data?.total_invocations ?? 0)}</Item>
          </dl>
          <MoneyFiguresList figures={figures} className="border-t border-slate-100 pt-2.5" />
          <ButtonLink
            to={`/applications/${application.slug}/analytics`}
            variant="secondary"
            size="sm"
            className="w-full"
          >
            <BarChart3 className="size-4" aria-hidden="true" />
            View Detailed Analytics
          </ButtonLink>
        </CardBody>
      </Card>
      <Card>
        <CardHeader title="Details" />
        <CardBody>
          <dl className="divide-y divide-slate-100">
            <Item term="Created">{formatDate(application.created_at)}</Item>
            <Item term="Updated">{formatDate(application.updated_at)}</Item>
            <Item term="Price per Call">
              {formatCents(application.price_cents)}
              {formatPriceNotice(application) && (
                <span className="block text-xs text-amber-700">{formatPriceNotice(application)}</span>
              )}
            </Item>
            <Item term="Creator">{application.creator_name || "N/A"}</Item>
          </dl>
        </CardBody>
      </Card>
    </div>
  );
}
