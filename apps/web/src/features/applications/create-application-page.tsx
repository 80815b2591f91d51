import { PlusCircle } from "lucide-react";
import { useSearchParams } from "react-router";
import { Badge } from "../../components/ui/badge";
import { ButtonLink } from "../../components/ui/button";
import { ComingSoon } from "../../components/ui/coming-soon";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";

export type ApplicationType = "prompt" | "workflow";

/** SPEC §2: `?type=prompt|workflow`, prompt by default. */
export function applicationTypeOf(value: string | null): ApplicationType {
  return value === "workflow" ? "workflow" : "prompt";
}

/** /applications/create and /applications/new. */
export function CreateApplicationPage() {
  const [searchParams] = useSearchParams();
  const type = applicationTypeOf(searchParams.get("type"));

  return (
    <PageContainer className="max-w-3xl">
      <PageHeader
        title="Create Application"
        description="Turn a prompt or a workflow into a paid API endpoint."
        eyebrow={<Badge tone={type === "workflow" ? "blue" : "green"}>{type} application</Badge>}
      />
      <ComingSoon
        icon={PlusCircle}
        description="The application form is on its way."
        action={
          <ButtonLink to="/applications" variant="secondary">
            Cancel
          </ButtonLink>
        }
      />
    </PageContainer>
  );
}
