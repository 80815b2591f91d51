import { Sparkles } from "lucide-react";
import { useParams } from "react-router";
import { ButtonLink } from "../../components/ui/button";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

/** /prompt-builder (create) and /applications/:slug/edit (edit). */
export function PromptBuilderPage() {
  const { slug } = useParams();

  return (
    <PageContainer>
      <PageHeader
        title={slug ? "Edit Prompt" : "Prompt Builder"}
        description={
          slug ? (
            <span className="font-mono">/{slug}</span>
          ) : (
            "Design a prompt, its schema and model settings."
          )
        }
        actions={
          <ButtonLink to="/applications" variant="secondary">
            Cancel
          </ButtonLink>
        }
      />
      <ComingSoon
        icon={Sparkles}
        description="Basic Info, Input/Output Schema, Model Settings and Preview & Test tabs."
      />
    </PageContainer>
  );
}
