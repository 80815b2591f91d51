import { FileText, Plus } from "lucide-react";
import { ButtonLink } from "../../components/ui/button";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /prompts */
export function PromptListPage() {
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
      <ComingSoon icon={FileText} description="Your prompt applications will be listed here." />
    </PageContainer>
  );
}
