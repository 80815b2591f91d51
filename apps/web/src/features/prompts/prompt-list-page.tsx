import type { Application } from "@promptmint/contracts";
import { FileText } from "lucide-react";
import { Link } from "react-router";
import { ApplicationListPage } from "../../components/ui/application-list-page";
import { Badge } from "../../components/ui/badge";
import { Card } from "../../components/ui/card";
import { StatusBadge } from "../../components/ui/status-badge";
import { formatCents } from "../../lib/format";

/** /prompts */
export function PromptListPage() {
  return (
    <ApplicationListPage
      type="prompt"
      title="Prompt Applications"
      description="Your prompt templates published as APIs."
      createLabel="Create New Prompt"
      plural="prompts"
      noMatch="No prompt applications match these filters."
      empty={{
        icon: FileText,
        title: "No prompt applications",
        description: "Get started by creating your first prompt application.",
      }}
      card={(app) => <PromptCard application={app} />}
    />
  );
}

function PromptCard({ application }: { application: Application }) {
  return (
    <Card className="relative flex h-full flex-col p-5 transition-shadow focus-within:ring-2 focus-within:ring-brand-600 hover:shadow-md">
      <h2 className="text-base font-semibold text-slate-900">
        {/* The whole card is the link's click target. */}
        <Link to={`/prompts/${application.slug}`} className="after:absolute after:inset-0 focus:outline-none">
          {application.name}
        </Link>
      </h2>
      <p className="mt-1 line-clamp-2 flex-1 text-sm text-slate-600">
        {application.description || <span className="text-slate-400">No description</span>}
      </p>
      <div className="mt-4 flex flex-wrap gap-2">
        <Badge tone="brand">{application.interaction_mode === "chat" ? "Chat" : "Completion"}</Badge>
        <Badge className="capitalize">{application.visibility}</Badge>
        <StatusBadge status={application.status} />
      </div>
      <div className="mt-4 flex items-center justify-between border-t border-slate-100 pt-3 text-sm">
        <span className="truncate text-slate-500">Created by {application.creator_name}</span>
        <span className="font-medium text-slate-900 tabular-nums">
          {formatCents(application.price_cents)}
        </span>
      </div>
    </Card>
  );
}
