import type { Application } from "@promptmint/contracts";
import { BarChart3, Settings2 } from "lucide-react";
import { Badge } from "../../components/ui/badge";
import { ButtonLink } from "../../components/ui/button";
import { Card } from "../../components/ui/card";
import { StatusBadge } from "../../components/ui/status-badge";
import { formatCents } from "../../lib/format";

/** One workflow app in the list: what it is, what it costs, and where to manage it. */
export function WorkflowCard({ application }: { application: Application }) {
  return (
    <Card className="flex h-full flex-col p-5">
      <div className="flex items-start justify-between gap-3">
        <div className="min-w-0">
          <h2 className="text-base font-semibold break-words text-slate-900">{application.name}</h2>
          <p className="mt-0.5 truncate font-mono text-xs text-slate-500" title={`/${application.slug}`}>
            /{application.slug}
          </p>
        </div>
        <span className="shrink-0 text-sm font-semibold text-slate-900 tabular-nums">
          {formatCents(application.price_cents)}/call
        </span>
      </div>
      <p className="mt-3 line-clamp-2 flex-1 text-sm text-slate-600">
        {application.description || <span className="text-slate-400">No description</span>}
      </p>
      <div className="mt-4 flex flex-wrap gap-2">
        <Badge className="capitalize">{application.visibility}</Badge>
        <StatusBadge status={application.status} />
      </div>
      <div className="mt-4 flex flex-wrap gap-2 border-t border-slate-100 pt-4">
        {[
          { to: `/workflows/${application.slug}`, label: "Manage", Icon: Settings2, variant: undefined },
          {
            to: `/applications/${application.slug}/analytics`,
            label: "Analytics",
            Icon: BarChart3,
            variant: "secondary" as const,
          },
        ].map(({ to, label, Icon, variant }) => (
          <ButtonLink
            key={label}
            to={to}
            variant={variant}
            size="sm"
            className="flex-1 sm:flex-none"
            aria-label={`${label} ${application.name}`}
          >
            <Icon className="size-4" aria-hidden="true" />
            {label}
          </ButtonLink>
        ))}
      </div>
    </Card>
  );
}
