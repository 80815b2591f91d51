import type { Application } from "@promptmint/contracts";
import { FileText, Plus } from "lucide-react";
import { useAuth } from "react-oidc-context";
import { Link } from "react-router";
import { Alert } from "../../components/ui/alert";
import { ApplicationFilters, useApplicationFilters } from "../../components/ui/application-filters";
import { Badge } from "../../components/ui/badge";
import { ButtonLink } from "../../components/ui/button";
import { Card } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { LoadingState } from "../../components/ui/spinner";
import { StatusBadge } from "../../components/ui/status-badge";
import { getErrorMessage } from "../../lib/api-client";
import { useApplications } from "../../lib/applications-query";
import { formatCents } from "../../lib/format";

/** /prompts */
export function PromptListPage() {
  const { isAuthenticated } = useAuth();
  const applications = useApplications({ enabled: isAuthenticated });

  const prompts = (applications.data ?? []).filter((app) => app.type === "prompt");
  const { filters, shown } = useApplicationFilters(prompts);

  return (
    <PageContainer>
      <PageHeader
        title="Prompt Applications"
        description="Your prompt templates published as APIs."
        actions={
          <ButtonLink to="/applications/create?type=prompt">
            <Plus className="size-4" aria-hidden="true" />
            Create New Prompt
          </ButtonLink>
        }
      />
      {!isAuthenticated ? (
        <Alert tone="warning" role="status">
          Please log in to view prompts.
        </Alert>
      ) : applications.isPending ? (
        <LoadingState label="Loading prompts..." />
      ) : applications.isError ? (
        <ErrorBox message={getErrorMessage(applications.error)} />
      ) : (
        <>
          <ApplicationFilters filters={filters} />
          {prompts.length > 0 && shown.length === 0 ? (
            <p className="rounded-xl border border-dashed border-slate-300 bg-white px-6 py-10 text-center text-sm text-slate-500">
              No prompt applications match these filters.
            </p>
          ) : shown.length === 0 ? (
            <EmptyState
              icon={FileText}
              title="No prompt applications"
              description="Get started by creating your first prompt application."
              action={
                <ButtonLink to="/applications/create?type=prompt">
                  <Plus className="size-4" aria-hidden="true" />
                  Create New Prompt
                </ButtonLink>
              }
            />
          ) : (
            <ul className="grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
              {shown.map((app) => (
                <li key={app.id}>
                  <PromptCard application={app} />
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </PageContainer>
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
