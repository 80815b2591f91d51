import { ArrowLeft, GitBranch } from "lucide-react";
import { useState } from "react";
import { AppTabs } from "../../components/releases/app-tabs";
import { PromoteDialog } from "../../components/releases/promote-dialog";
import { ApplicationHeader } from "../../components/ui/application-header";
import { Badge } from "../../components/ui/badge";
import { ButtonLink } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { LoadingState } from "../../components/ui/spinner";
import { StatusBadge } from "../../components/ui/status-badge";
import { getErrorMessage } from "../../lib/api-client";
import { type AppKind, appPagePath, releaseQueryKey } from "../../lib/releases/app-ref";
import { useLabels } from "../../lib/releases/labels";
import { primaryAction } from "../../lib/releases/release-actions";
import { type AppVersion, useAppVersions } from "../../lib/releases/versions";
import { AddLabelDialog, RemoveLabelDialog } from "./label-dialogs";
import { LabelHistory } from "./label-history";
import { ReleaseAppPage, type ReleaseAppState } from "./release-app-page";
import { ReleaseSummary } from "./release-summary";
import { RollOutGradually } from "./rollout-dialog";
import { RolloutStatus } from "./rollout-status";
import { defaultComparison, VersionCompare } from "./version-compare";
import type { DiffLayout } from "./version-diff";
import { VersionRow } from "./version-timeline";

/** /prompts/:slug/versions and /workflows/:slug/versions */
export function VersionsPage({ kind = "prompt" }: { kind?: AppKind }) {
  return (
    <ReleaseAppPage kind={kind} loading="Loading versions..." icon={GitBranch}>
      {(state) => <Versions state={state} />}
    </ReleaseAppPage>
  );
}

/** /workflows/:slug/versions */
export function WorkflowVersionsPage() {
  return <VersionsPage kind="workflow" />;
}

type Dialog =
  | { kind: "promote"; version: AppVersion }
  | { kind: "rollback"; version: AppVersion }
  | { kind: "label"; version: AppVersion }
  | { kind: "unlabel"; name: string; version: number };

function Versions({ state: { application, app, production, engine } }: { state: ReleaseAppState }) {
  const versions = useAppVersions(app);
  const labels = useLabels(app);
  const [dialog, setDialog] = useState<Dialog | null>(null);
  const [comparison, setComparison] = useState<[number, number] | null>(null);
  const [layout, setLayout] = useState<DiffLayout>(() =>
    typeof window !== "undefined" && window.innerWidth < 768 ? "unified" : "split",
  );

  // A guarded rollout is the app's running experiment with a schedule (decision 077).
  const rolloutSubject = { kind: app.kind, id: app.id, stale: [releaseQueryKey(app)] };
  const list = versions.data ?? [];
  const byNumber = new Map(list.map((version) => [version.version, version]));
  const productionVersion = byNumber.get(production);
  const latestVersion = list[0];
  const action = primaryAction({
    production,
    latest: latestVersion?.version ?? production,
    moves: labels.data?.moves,
  });
  const pair = comparison ?? defaultComparison(list, production);

  const compareWith = (version: AppVersion) => {
    const other =
      version.version === production
        ? (list.find((v) => v.version < version.version)?.version ?? production)
        : production;
    setComparison([Math.min(other, version.version), Math.max(other, version.version)]);
    document.getElementById("compare-versions")?.scrollIntoView({ behavior: "smooth", block: "start" });
  };

  return (
    <>
      <ApplicationHeader
        application={application}
        badges={
          <>
            <Badge tone={app.kind === "prompt" ? "brand" : "blue"}>{engine}</Badge>
            <StatusBadge status={application.status} />
          </>
        }
        actions={
          <ButtonLink to={`/${app.kind}s`} variant="secondary" size="sm">
            <ArrowLeft className="size-4" aria-hidden="true" />
            Back to List
          </ButtonLink>
        }
      />
      <AppTabs kind={app.kind} slug={app.slug} current="versions" />

      {versions.isPending ? (
        <LoadingState label="Loading versions..." />
      ) : versions.isError ? (
        <ErrorBox message={getErrorMessage(versions.error)} />
      ) : list.length === 0 ? (
        <EmptyState
          icon={GitBranch}
          title="No versions yet"
          description={`Save the ${app.kind} in the editor: each save that changes it is a version.`}
          action={<ButtonLink to={appPagePath(app.kind, app.slug, "editor")}>Open the editor</ButtonLink>}
        />
      ) : (
        <div className="space-y-6">
          <ReleaseSummary
            app={app}
            application={application}
            production={production}
            productionVersion={productionVersion}
            latest={latestVersion}
            action={action}
            onAction={(next) => {
              const version = byNumber.get(next.version);
              if (version) setDialog({ kind: next.kind, version });
            }}
          />
          <RolloutStatus subject={rolloutSubject} />

          <div className="grid gap-6 xl:grid-cols-5">
            <Card className="xl:col-span-2">
              <CardHeader
                title="Timeline"
                description="Every saved version, newest first, with its note and author. Promote any of them; labels point at one each."
              />
              <ol className="divide-y divide-slate-100" aria-label="Versions">
                {list.map((version) => (
                  <VersionRow
                    key={version.id}
                    version={version}
                    production={production}
                    onPromote={() => setDialog({ kind: "promote", version })}
                    onCompare={() => compareWith(version)}
                    onAddLabel={() => setDialog({ kind: "label", version })}
                    onRemoveLabel={(name) => setDialog({ kind: "unlabel", name, version: version.version })}
                  />
                ))}
              </ol>
            </Card>

            <VersionCompare
              kind={app.kind}
              versions={list}
              pair={pair}
              onPairChange={setComparison}
              layout={layout}
              onLayoutChange={setLayout}
            />
          </div>

          <LabelHistory moves={labels.data?.moves} error={labels.error} loading={labels.isPending} />
        </div>
      )}

      {dialog?.kind === "promote" || dialog?.kind === "rollback" ? (
        <PromoteDialog
          key={`${dialog.kind}-${dialog.version.version}`}
          app={app}
          target={dialog.version}
          production={productionVersion}
          rollback={dialog.kind === "rollback"}
          open
          onOpenChange={(open) => !open && setDialog(null)}
          alternative={(close) => (
            <RollOutGradually
              subject={rolloutSubject}
              target={dialog.version.version}
              production={productionVersion?.version}
              onStarted={close}
            />
          )}
        />
      ) : null}
      {dialog?.kind === "label" && (
        <AddLabelDialog
          app={app}
          version={dialog.version}
          labels={labels.data?.labels ?? []}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog?.kind === "unlabel" && (
        <RemoveLabelDialog
          app={app}
          name={dialog.name}
          version={dialog.version}
          onClose={() => setDialog(null)}
        />
      )}
    </>
  );
}
