import type { Application } from "@promptmint/contracts";
import { ArrowLeft, Save } from "lucide-react";
import { Badge } from "../../components/ui/badge";
import { Button, ButtonLink } from "../../components/ui/button";
import { DownloadAppButton } from "../../components/ui/download-app-button";
import { StatusBadge } from "../../components/ui/status-badge";

/** The prompt editor's header pattern (SPEC §2): who the app is, and what can be done with it. */
export function WorkflowEditorHeader({
  application,
  providerName,
  saving,
  onSave,
  downloading,
  onDownload,
}: {
  application: Application;
  providerName: string | undefined;
  saving: boolean;
  onSave: () => void;
  downloading: boolean;
  onDownload: () => void;
}) {
  return (
    <header className="mb-6 flex flex-col gap-4 lg:flex-row lg:items-start lg:justify-between">
      <div className="min-w-0">
        <h1 className="text-2xl font-semibold tracking-tight break-words text-slate-900 sm:text-3xl">
          {application.name}
        </h1>
        <p className="mt-1 font-mono text-sm break-all text-slate-500">/{application.slug}</p>
        {application.description && (
          <p className="mt-2 max-w-2xl text-sm text-slate-600">{application.description}</p>
        )}
        <div className="mt-3 flex flex-wrap gap-2">
          <Badge tone="blue">{providerName ?? "Workflow"}</Badge>
          <Badge className="capitalize">{application.visibility}</Badge>
          <StatusBadge status={application.status} />
        </div>
      </div>
      <div className="flex flex-wrap gap-2">
        <ButtonLink to="/workflows" variant="secondary" size="sm">
          <ArrowLeft className="size-4" aria-hidden="true" />
          Back to List
        </ButtonLink>
        <DownloadAppButton busy={downloading} onClick={onDownload} />
        <Button size="sm" busy={saving} onClick={onSave}>
          {!saving && <Save className="size-4" aria-hidden="true" />}
          {saving ? "Saving..." : "Save Changes"}
        </Button>
      </div>
    </header>
  );
}

/** While the app cannot be shown: its slug as the title, and the way back. */
export function WorkflowFallbackHeader({ slug }: { slug: string }) {
  return (
    <header className="mb-6 flex flex-col gap-4 sm:flex-row sm:items-start sm:justify-between">
      <div className="min-w-0">
        <p className="mb-2 text-sm font-medium text-brand-600">Workflow application</p>
        <h1 className="text-2xl font-semibold tracking-tight break-all text-slate-900 sm:text-3xl">{slug}</h1>
      </div>
      <ButtonLink to="/workflows" variant="secondary" size="sm">
        <ArrowLeft className="size-4" aria-hidden="true" />
        Back to List
      </ButtonLink>
    </header>
  );
}
