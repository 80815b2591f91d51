import type { Application } from "@promptmint/contracts";
import { CreditCard, FlaskConical, Settings2 } from "lucide-react";
import { ApiReferenceLink } from "../../components/ui/api-reference-link";
import { ButtonLink } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { CopyButton } from "../../components/ui/copy-button";
import { UrlPath } from "../../components/ui/url-path";

/** SPEC §2: prompt apps are called through completion-messages, every other app through chat-messages. */
export function endpointPathOf(application: Pick<Application, "type" | "slug">): string {
  const kind = application.type === "prompt" ? "completion-messages" : "chat-messages";
  return `/api/app/${application.slug}/${kind}`;
}

export function ApiEndpointCard({ application }: { application: Application }) {
  const path = endpointPathOf(application);
  const configureTo =
    application.type === "prompt"
      ? `/applications/${application.slug}/edit`
      : `/workflows/${application.slug}`;

  return (
    <Card>
      <CardHeader
        title="API Endpoint"
        description="Call this endpoint with an API key; each call is charged at the price below to the key's owner. Your own calls are free: a paid call is one made with another account's key."
      />
      <CardBody className="space-y-4">
        <div className="flex flex-col gap-2 rounded-lg bg-slate-900 px-4 py-3 sm:flex-row sm:items-center sm:justify-between">
          <code className="min-w-0 font-mono text-sm text-slate-100">
            <span className="mr-2 font-semibold text-green-400">POST</span>
            <UrlPath path={path} />
          </code>
          {/* The whole URL: pasted into a client or curl, a bare path means nothing. */}
          <CopyButton text={`${window.location.origin}${path}`} label="Copy endpoint" className="shrink-0" />
        </div>
        <div className="flex flex-wrap gap-2">
          <ButtonLink to={`/api-test?app=${encodeURIComponent(application.slug)}`} size="sm">
            <FlaskConical className="size-4" aria-hidden="true" />
            Test API
          </ButtonLink>
          <ButtonLink to={configureTo} variant="secondary" size="sm">
            <Settings2 className="size-4" aria-hidden="true" />
            {application.type === "prompt" ? "Open Prompt Builder" : "Open Workflow Editor"}
          </ButtonLink>
          <ButtonLink
            to={`/applications/${encodeURIComponent(application.slug)}/billing`}
            variant="secondary"
            size="sm"
          >
            <CreditCard className="size-4" aria-hidden="true" />
            Plans &amp; Billing
          </ButtonLink>
          <ApiReferenceLink />
        </div>
      </CardBody>
    </Card>
  );
}
