import { ArrowLeft, FileText } from "lucide-react";
import { useParams } from "react-router";
import { ButtonLink } from "../../components/ui/button";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /prompts/:slug */
export function PromptEditorPage() {
  const { slug = "" } = useParams();

  return (
    <PageContainer>
      <PageHeader
        eyebrow="Prompt application"
        title={slug}
        description={<span className="font-mono">/{slug}</span>}
        actions={
          <ButtonLink to="/prompts" variant="secondary">
            <ArrowLeft className="size-4" aria-hidden="true" />
            Back to List
          </ButtonLink>
        }
      />
      <ComingSoon
        icon={FileText}
        description="Basic settings and prompt configuration of this application."
      />
    </PageContainer>
  );
}
