import { Plus, Workflow } from "lucide-react";
import { ButtonLink } from "../../components/ui/button";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /workflows */
export function WorkflowListPage() {
  return (
    <PageContainer>
      <PageHeader
        title="Workflow Applications"
        description="External workflows you sell as APIs."
        actions={
          <ButtonLink to="/applications/create?type=workflow">
            <Plus className="size-4" aria-hidden="true" />
            Create New Workflow
          </ButtonLink>
        }
      />
      <ComingSoon icon={Workflow} description="Your workflow applications will be listed here." />
    </PageContainer>
  );
}
