import { ArrowLeft, Workflow } from "lucide-react";
import { useParams } from "react-router";
import { ButtonLink } from "../../components/ui/button";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /workflows/:slug */
export function WorkflowEditorPage() {
  const { slug = "" } = useParams();

  return (
    <PageContainer>
      <PageHeader
        eyebrow="Workflow application"
        title={slug}
        description={<span className="font-mono">/{slug}</span>}
        actions={
          <ButtonLink to="/workflows" variant="secondary">
            <ArrowLeft className="size-4" aria-hidden="true" />
            Back to List
          </ButtonLink>
        }
      />
      <ComingSoon icon={Workflow} description="Basic settings and provider configuration of this workflow." />
    </PageContainer>
  );
}
