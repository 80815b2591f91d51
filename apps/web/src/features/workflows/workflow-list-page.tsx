import { Plus, Workflow } from "lucide-react";
import { useAuth } from "react-oidc-context";
import { Alert } from "../../components/ui/alert";
import { ApplicationFilters, useApplicationFilters } from "../../components/ui/application-filters";
import { ButtonLink } from "../../components/ui/button";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { useApplications } from "../../lib/applications-query";
import { WorkflowCard } from "./workflow-card";

function CreateWorkflowLink() {
  return (
    <ButtonLink to="/applications/create?type=workflow">
      <Plus className="size-4" aria-hidden="true" />
      Create New Workflow
    </ButtonLink>
  );
}

/** /workflows */
export function WorkflowListPage() {
  const { isAuthenticated } = useAuth();
  const applications = useApplications({ enabled: isAuthenticated });

  const workflows = (applications.data ?? []).filter((app) => app.type === "workflow");
  const { filters, shown } = useApplicationFilters(workflows);

  return (
    <PageContainer>
      <PageHeader
        title="Workflow Applications"
        description="External workflows (Dify, n8n, Flowise, any webhook) you sell as APIs."
        actions={<CreateWorkflowLink />}
      />
      {!isAuthenticated ? (
        <Alert tone="warning" role="status">
          Please log in to view workflows.
        </Alert>
      ) : applications.isPending ? (
        <LoadingState label="Loading workflows..." />
      ) : applications.isError ? (
        <ErrorBox message={getErrorMessage(applications.error)} />
      ) : (
        <>
          <ApplicationFilters filters={filters} />
          {workflows.length > 0 && shown.length === 0 ? (
            <p className="rounded-xl border border-dashed border-slate-300 bg-white px-6 py-10 text-center text-sm text-slate-500">
              No workflows match these filters.
            </p>
          ) : shown.length === 0 ? (
            <EmptyState
              icon={Workflow}
              title="No workflows"
              description="Get started by creating your first workflow application."
              action={<CreateWorkflowLink />}
            />
          ) : (
            <ul aria-label="Workflows" className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
              {shown.map((app) => (
                <li key={app.id}>
                  <WorkflowCard application={app} />
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </PageContainer>
  );
}
