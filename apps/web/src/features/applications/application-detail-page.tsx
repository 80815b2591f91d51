import type { Application } from "@promptmint/contracts";
import { Copy, Pencil, X } from "lucide-react";
import { useState } from "react";
import { useNavigate, useParams } from "react-router";
import { toast } from "sonner";
import { AppServingLine } from "../../components/releases/app-serving-line";
import { ApplicationHeader } from "../../components/ui/application-header";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { DownloadAppButton } from "../../components/ui/download-app-button";
import { ErrorBox } from "../../components/ui/error-box";
import { NotFoundState } from "../../components/ui/not-found-state";
import { PageContainer } from "../../components/ui/page-container";
import { LoadingState } from "../../components/ui/spinner";
import { StatusBadge } from "../../components/ui/status-badge";
import { getErrorMessage, isNotFoundError } from "../../lib/api-client";
import { useApplication } from "../../lib/applications-query";
import { useDownloadApp } from "../../lib/download-app";
import { useDuplicateApplication } from "./api/duplicate-application";
import { ApiEndpointCard } from "./api-endpoint-card";
import { ApplicationDangerZone } from "./application-danger-zone";
import { ApplicationEditForm } from "./application-edit-form";
import { ApplicationSidePanel } from "./application-side-panel";
import { ApplicationStatusCard } from "./application-status-card";
import { EmbedPanel } from "./embed-panel";

/** /applications/:slug */
export function ApplicationDetailPage() {
  const { slug = "" } = useParams();
  const application = useApplication(slug);

  return (
    <PageContainer>
      {application.isPending ? (
        <LoadingState label="Loading application..." />
      ) : application.isError && !isNotFoundError(application.error) ? (
        <ErrorBox message={getErrorMessage(application.error)} />
      ) : application.data ? (
        // Keyed by slug: after Duplicate the copy starts in view mode with its own state.
        <ApplicationDetail key={application.data.slug} application={application.data} />
      ) : (
        <NotFoundState
          title="Application not found"
          backTo="/applications"
          backLabel="Back to Applications"
        />
      )}
    </PageContainer>
  );
}

function ApplicationDetail({ application }: { application: Application }) {
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const { download, downloadingSlug } = useDownloadApp();
  const duplicate = useDuplicateApplication();

  const startDuplicate = () =>
    duplicate.mutate(application.slug, {
      onSuccess: (copy) => {
        toast.success(`Created ${copy.name}`);
        void navigate(`/applications/${copy.slug}`);
      },
      onError: (error) => toast.error(getErrorMessage(error)),
    });

  return (
    <>
      <ApplicationHeader
        application={application}
        className="mb-8"
        descriptionClassName="sm:text-base"
        badges={
          <>
            <Badge tone={application.type === "workflow" ? "blue" : "brand"} className="capitalize">
              {application.type}
            </Badge>
            <StatusBadge status={application.status} />
            <Badge className="capitalize">{application.visibility}</Badge>
          </>
        }
        actions={
          <>
            <Button variant="secondary" size="sm" onClick={() => setEditing((on) => !on)}>
              {editing ? (
                <X className="size-4" aria-hidden="true" />
              ) : (
                <Pencil className="size-4" aria-hidden="true" />
              )}
              {editing ? "Cancel" : "Edit"}
            </Button>
            <DownloadAppButton
              busy={downloadingSlug === application.slug}
              onClick={() => void download(application)}
            />
            <Button variant="secondary" size="sm" busy={duplicate.isPending} onClick={startDuplicate}>
              {!duplicate.isPending && <Copy className="size-4" aria-hidden="true" />}
              {duplicate.isPending ? "Duplicating..." : "Duplicate"}
            </Button>
          </>
        }
      />

      <div className="grid gap-6 lg:grid-cols-3">
        <div className="min-w-0 space-y-6 lg:col-span-2">
          {editing ? (
            <ApplicationEditForm application={application} onDone={() => setEditing(false)} />
          ) : (
            <>
              <AppServingLine application={application} />
              <ApiEndpointCard application={application} />
              {application.visibility === "embed" && <EmbedPanel application={application} />}
              <ApplicationStatusCard application={application} />
              <ApplicationDangerZone application={application} />
            </>
          )}
        </div>
        <ApplicationSidePanel application={application} />
      </div>
    </>
  );
}
