import { ArrowLeft, FileText } from "lucide-react";
import { useState } from "react";
import { Link } from "react-router";
import { AppTabs } from "../../components/releases/app-tabs";
import { ErrorBox } from "../../components/ui/error-box";
import { PageHeader } from "../../components/ui/page-header";
import { SandboxModelNotice } from "../../components/ui/sandbox-model-notice";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { type AppKind, appPagePath } from "../../lib/releases/app-ref";
import { useEvalCases } from "./api/evals";
import { CaseList } from "./eval-case-list";
import { Comparison } from "./eval-comparison";
import { ReleaseGate } from "./eval-release-gate";
import { RunDetail } from "./eval-run-detail";
import { RunHistory } from "./eval-run-history";
import { RunPanel } from "./eval-run-panel";
import { OnlineEvalsPanel } from "./online-evals-panel";
import { ReleaseAppPage, type ReleaseAppState } from "./release-app-page";

/** /prompts/:slug/evals and /workflows/:slug/evals — test cases, runs, comparisons, the release gate. */
export function EvalsPage({ kind = "prompt" }: { kind?: AppKind }) {
  return (
    <ReleaseAppPage kind={kind} loading="Loading evals..." icon={FileText}>
      {(state) => <Evals state={state} />}
    </ReleaseAppPage>
  );
}

/** /workflows/:slug/evals */
export function WorkflowEvalsPage() {
  return <EvalsPage kind="workflow" />;
}

function Evals({ state: { application, app, latest, inputSchema } }: { state: ReleaseAppState }) {
  const cases = useEvalCases(app);
  const [selectedRun, setSelectedRun] = useState<string | null>(null);
  return (
    <>
      <PageHeader
        eyebrow={
          <Link
            to={appPagePath(app.kind, app.slug, "editor")}
            className="inline-flex items-center gap-1 hover:underline"
          >
            <ArrowLeft className="size-4" aria-hidden="true" /> {application.name}
          </Link>
        }
        title="Evals"
        documentTitle={`Evals · ${application.name}`}
        description="Test cases with assertions, run against any version before it goes to production. Each run estimates the cost per call and your margin before a single paying call."
      />
      <AppTabs kind={app.kind} slug={app.slug} current="evals" />
      <div className="mb-6">
        <SandboxModelNotice />
      </div>
      {cases.isPending ? (
        <LoadingState label="Loading test cases..." />
      ) : cases.isError || !cases.data ? (
        <ErrorBox message={getErrorMessage(cases.error)} />
      ) : (
        <div className="space-y-6">
          <ReleaseGate app={app} required={cases.data.require_passing_eval} />
          <CaseList
            app={app}
            cases={cases.data.cases}
            maxCases={cases.data.max_cases}
            schema={inputSchema}
            chat={application.interaction_mode === "chat"}
          />
          <RunPanel
            app={app}
            latest={latest}
            caseCount={cases.data.cases.length}
            onRan={(run) => setSelectedRun(run.id)}
          />
          <RunHistory app={app} selected={selectedRun} onSelect={setSelectedRun} />
          {selectedRun && <RunDetail app={app} runId={selectedRun} />}
          <Comparison app={app} />
          <OnlineEvalsPanel subject={{ kind: `${app.kind}s`, id: app.id }} />
        </div>
      )}
    </>
  );
}
