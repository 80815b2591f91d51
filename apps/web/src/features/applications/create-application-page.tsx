import type { AppType } from "@promptmint/contracts";
import { useState } from "react";
import { useSearchParams } from "react-router";
import { Badge } from "../../components/ui/badge";
import { Card, CardBody } from "../../components/ui/card";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { CreateApplicationForm } from "./create-application-form";

/** SPEC §2: `?type=prompt|workflow`, prompt by default. */
export function applicationTypeOf(value: string | null): AppType {
  return value === "workflow" ? "workflow" : "prompt";
}

/** /applications/create and /applications/new. */
export function CreateApplicationPage() {
  const [searchParams] = useSearchParams();
  const type = applicationTypeOf(searchParams.get("type"));
  // The badge follows the form's type select (the form, keyed by ?type, reports it on mount too).
  const [shown, setShown] = useState(type);

  return (
    <PageContainer className="max-w-3xl">
      <PageHeader
        title="Create Application"
        description="Turn a prompt or a workflow into a paid API endpoint."
        eyebrow={<Badge tone={shown === "workflow" ? "blue" : "green"}>{shown} application</Badge>}
      />
      <Card>
        <CardBody>
          {/* A new ?type starts a fresh form. */}
          <CreateApplicationForm key={type} initialType={type} onTypeChange={setShown} />
        </CardBody>
      </Card>
    </PageContainer>
  );
}
