import type { Application } from "@promptmint/contracts";
import { ArrowLeft } from "lucide-react";
import type { ReactNode } from "react";
import { cn } from "../../lib/cn";
import { useDocumentTitle } from "../../lib/document-title";
import { Badge } from "./badge";
import { ButtonLink, SaveChangesButton } from "./button";
import { DownloadAppButton } from "./download-app-button";
import { StatusBadge } from "./status-badge";

/** An application page's header (SPEC §2): who the app is, its badges, and what can be done. */
export function ApplicationHeader({
  application,
  badges,
  actions,
  className = "mb-6",
  descriptionClassName,
}: {
  application: Application;
  badges: ReactNode;
  actions: ReactNode;
  className?: string;
  descriptionClassName?: string;
}) {
  useDocumentTitle(application.name);
  return (
    <header className={cn("flex flex-col gap-4 lg:flex-row lg:items-start lg:justify-between", className)}>
      <div className="min-w-0">
        <h1 className="text-2xl font-semibold tracking-tight break-words text-slate-900 sm:text-3xl">
          {application.name}
        </h1>
        <p className="mt-1 font-mono text-sm break-all text-slate-500">/{application.slug}</p>
        {application.description && (
          <p className={cn("mt-2 max-w-2xl text-sm text-slate-600", descriptionClassName)}>
            {application.description}
          </p>
        )}
        <div className="mt-3 flex flex-wrap gap-2">{badges}</div>
      </div>
      <div className="flex flex-wrap gap-2">{actions}</div>
    </header>
  );
}

/** The prompt and workflow editors' header: the app, back to its list, download, save. */
export function ApplicationEditorHeader({
  application,
  kindBadge,
  backTo,
  saving,
  onSave,
  downloading,
  onDownload,
  links,
}: {
  application: Application;
  /** What the app is made of: the prompt's mode, or the workflow's provider. */
  kindBadge: ReactNode;
  /** The app's other screens (a prompt's evals), before Download. */
  links?: ReactNode;
  backTo: string;
  saving: boolean;
  onSave: () => void;
  downloading: boolean;
  onDownload: () => void;
}) {
  return (
    <ApplicationHeader
      application={application}
      badges={
        <>
          {kindBadge}
          <Badge className="capitalize">{application.visibility}</Badge>
          <StatusBadge status={application.status} />
        </>
      }
      actions={
        <>
          <ButtonLink to={backTo} variant="secondary" size="sm">
            <ArrowLeft className="size-4" aria-hidden="true" />
            Back to List
          </ButtonLink>
          {links}
          <DownloadAppButton busy={downloading} onClick={onDownload} />
          <SaveChangesButton size="sm" saving={saving} onClick={onSave} />
        </>
      }
    />
  );
}
