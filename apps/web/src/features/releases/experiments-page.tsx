import { ArrowLeft, FlaskConical } from "lucide-react";
import { AppTabs } from "../../components/releases/app-tabs";
import { ButtonLink } from "../../components/ui/button";
import { ErrorBox } from "../../components/ui/error-box";
import { PageHeader } from "../../components/ui/page-header";
import { getErrorMessage } from "../../lib/api-client";
import { applicationQueryKey } from "../../lib/applications-query";
import { type AppKind, releaseQueryKey } from "../../lib/releases/app-ref";
import { isPromptVersion, useAppVersions, versionEngine } from "../../lib/releases/versions";
import type { ExperimentSubject } from "./api/experiments";
import { ExperimentsPanel } from "./experiments-panel";
import { ReleaseAppPage, type ReleaseAppState } from "./release-app-page";

/** /prompts/:slug/experiments and /workflows/:slug/experiments */
export function ExperimentsPage({ kind = "prompt" }: { kind?: AppKind }) {
  return (
    <ReleaseAppPage kind={kind} loading="Loading experiments..." icon={FlaskConical}>
      {(state) => <Experiments state={state} />}
    </ReleaseAppPage>
  );
}

/** /workflows/:slug/experiments */
export function WorkflowExperimentsPage() {
  return <ExperimentsPage kind="workflow" />;
}

function Experiments({ state: { app, production } }: { state: ReleaseAppState }) {
  const versions = useAppVersions(app);
  // Ending an experiment may move production: the app's labels, versions, serving state and config.
  const subject: ExperimentSubject = {
    kind: app.kind,
    id: app.id,
    stale: [releaseQueryKey(app), applicationQueryKey(app.slug)],
  };
  return (
    <>
      <PageHeader
        eyebrow={`/${app.slug}`}
        title="Experiments"
        description="Split production traffic between versions, sticky per caller, and judge each arm by what it earns. A difference is called only when it is more than noise."
        actions={
          <ButtonLink to={`/${app.kind}s`} variant="secondary" size="sm">
            <ArrowLeft className="size-4" aria-hidden="true" />
            Back to List
          </ButtonLink>
        }
      />
      <AppTabs kind={app.kind} slug={app.slug} current="experiments" />
      {versions.isError ? (
        <ErrorBox message={getErrorMessage(versions.error)} />
      ) : (
        <ExperimentsPanel
          subject={subject}
          production={production}
          versions={versions.data?.map((version) => ({
            version: version.version,
            labels: version.labels,
            // A workflow's arms are chosen by which provider each version calls.
            changelog: isPromptVersion(version)
              ? version.changelog
              : [versionEngine(version), version.changelog].filter(Boolean).join(" · "),
          }))}
        />
      )}
    </>
  );
}
