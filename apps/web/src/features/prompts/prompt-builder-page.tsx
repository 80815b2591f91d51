import { Navigate, useParams } from "react-router";
import { ButtonLink } from "../../components/ui/button";
import { ErrorBox } from "../../components/ui/error-box";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { LoadingState } from "../../components/ui/spinner";
import { useApplication } from "../../lib/applications-query";
import { usePromptConfig } from "../../lib/prompt-config-query";
import { PromptBuilderForm } from "./prompt-builder-form";
import { builderValuesOf, newPromptBuilderValues } from "./prompt-builder-values";

/** /prompt-builder (create) and /applications/:slug/edit (edit). */
export function PromptBuilderPage() {
  const { slug } = useParams();
  if (!slug) return <PromptBuilderForm key="new" initialValues={newPromptBuilderValues()} />;
  return <EditPromptBuilder key={slug} slug={slug} />;
}

function EditPromptBuilder({ slug }: { slug: string }) {
  const application = useApplication(slug);
  const config = usePromptConfig(slug);

  // A workflow app has no prompt to build: its settings live in the workflow editor.
  if (application.isSuccess && application.data.type === "workflow") {
    return <Navigate to={`/workflows/${slug}`} replace />;
  }
  if (application.isSuccess && config.isSuccess) {
    return (
      <PromptBuilderForm
        slug={slug}
        savedStatus={application.data.status}
        initialValues={builderValuesOf(application.data, config.data)}
      />
    );
  }
  const failed = application.isError || (config.isError && application.isSuccess);
  return (
    <PageContainer>
      <PageHeader
        title="Prompt Builder"
        description={<span className="font-mono">/{slug}</span>}
        actions={
          <ButtonLink to="/applications" variant="secondary">
            Cancel
          </ButtonLink>
        }
      />
      {failed ? (
        <ErrorBox message="Failed to load prompt data" />
      ) : (
        <LoadingState label="Loading prompt..." />
      )}
    </PageContainer>
  );
}
