import type { ExploreApp } from "@promptmint/contracts";
import { Link } from "react-router";
import { Badge } from "../../components/ui/badge";
import { Card } from "../../components/ui/card";
import { formatCents, formatPriceNotice } from "../../lib/format";
import { HealthLine } from "./app-health";
import { RatingSummaryLine } from "./rating-stars";

export function AppKindBadges({
  app,
}: {
  app: Pick<ExploreApp, "type" | "interaction_mode" | "accepts_tools">;
}) {
  return (
    <>
      <Badge tone={app.type === "workflow" ? "blue" : "green"} className="capitalize">
        {app.type}
      </Badge>
      {app.type === "prompt" && (
        <Badge tone="brand">{app.interaction_mode === "chat" ? "Chat" : "Completion"}</Badge>
      )}
      {app.accepts_tools && <Badge tone="yellow">Accepts tools</Badge>}
    </>
  );
}

export function ExploreAppCard({ app }: { app: ExploreApp }) {
  const notice = formatPriceNotice(app, " / call");
  return (
    <Card className="relative flex h-full flex-col p-5 transition-shadow focus-within:ring-2 focus-within:ring-brand-600 hover:shadow-md">
      <h2 className="text-base font-semibold text-slate-900">
        {/* The whole card is the link's click target. */}
        <Link to={`/explore/${app.slug}`} className="after:absolute after:inset-0 focus:outline-none">
          {app.name}
        </Link>
      </h2>
      <p className="mt-0.5 truncate text-sm text-slate-500">by {app.creator_name}</p>
      <RatingSummaryLine rating={app.rating} className="mt-2" />
      <p className="mt-3 line-clamp-3 flex-1 text-sm text-slate-600">
        {app.description || <span className="text-slate-400">No description</span>}
      </p>
      <div className="mt-4 flex items-center justify-between gap-3 border-t border-slate-100 pt-3">
        <div className="flex flex-wrap gap-2">
          <AppKindBadges app={app} />
        </div>
        <span className="shrink-0 text-sm font-semibold text-slate-900 tabular-nums">
          {formatCents(app.price_cents)}
          <span className="font-normal text-slate-500"> / call</span>
        </span>
      </div>
      {notice && <p className="mt-2 text-right text-xs text-amber-700">{notice}</p>}
      <HealthLine health={app.health} className="mt-2" />
    </Card>
  );
}
