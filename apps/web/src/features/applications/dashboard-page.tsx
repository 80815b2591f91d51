import { BarChart3, FileText, LayoutDashboard, Plus, Workflow } from "lucide-react";
import { ButtonLink } from "../../components/ui/button";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /dashboard and /applications. */
export function DashboardPage() {
  return (
    <PageContainer>
      <PageHeader
        title="Dashboard"
        description="Manage your AI applications and follow how they perform."
        actions={
          <ButtonLink to="/applications/create">
            <Plus className="size-4" aria-hidden="true" />
            Create Application
          </ButtonLink>
        }
      />
      <div className="mb-6 flex flex-wrap gap-2">
        <ButtonLink to="/analytics" variant="secondary" size="sm">
          <BarChart3 className="size-4" aria-hidden="true" />
          Global Analytics
        </ButtonLink>
        <ButtonLink to="/prompts" variant="secondary" size="sm">
          <FileText className="size-4" aria-hidden="true" />
          Manage Prompts
        </ButtonLink>
        <ButtonLink to="/workflows" variant="secondary" size="sm">
          <Workflow className="size-4" aria-hidden="true" />
          Manage Workflows
        </ButtonLink>
      </div>
      <ComingSoon
        icon={LayoutDashboard}
        description="Your applications, their invocations and revenue will be listed here."
      />
    </PageContainer>
  );
}
