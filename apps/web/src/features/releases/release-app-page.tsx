import type { Application, IoSchema } from "@promptmint/contracts";
import type { LucideIcon } from "lucide-react";
import type { ReactNode } from "react";
import { useParams } from "react-router";
import { ErrorBox } from "../../components/ui/error-box";
import { NotFoundState } from "../../components/ui/not-found-state";
import { PageContainer } from "../../components/ui/page-container";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage, isNotFoundError } from "../../lib/api-client";
import { useApplication } from "../../lib/applications-query";
import { usePromptConfig } from "../../lib/prompt-config-query";
import type { AppKind, ReleaseApp } from "../../lib/releases/app-ref";
import { useWorkflowConfig } from "../../lib/workflow-config-query";

/** One app as every releases page needs it, whichever its kind (docs/decisions/079). */
export interface ReleaseAppState {
  application: Application;
  app: ReleaseApp;
  /** What the `production` label points at (callers who pin nothing get it, unless an experiment runs). */
  production: number;
  /** The latest saved version. */
  latest: number;
  /** The latest prompt's input schema (a prompt app); null for a workflow app, whose inputs are free. */
  inputSchema: IoSchema | null;
  /** What the app is made of, for its badge: the prompt's mode, or the workflow's provider. */
  engine: string;
}

/** The app of a page's `:slug`, for a prompt or a workflow app; both configs load by slug. */
function useReleaseApp(kind: AppKind, slug: string) {
  const application = useApplication(slug);
  const isKind = application.data?.type === kind;
  const prompt = usePromptConfig(slug, { enabled: kind === "prompt" && isKind });
  const workflow = useWorkflowConfig(slug, { enabled: kind === "workflow" && isKind });
  const config = kind === "prompt" ? prompt : workflow;
  let state: ReleaseAppState | null = null;
  if (application.data && isKind) {
    if (kind === "prompt" && prompt.data) {
      state = {
        application: application.data,
        app: { kind, id: prompt.data.id, slug },
        production: prompt.data.production_version,
        latest: prompt.data.latest_version.version,
        inputSchema: prompt.data.latest_version.input_schema,
        engine: application.data.interaction_mode === "chat" ? "Chat" : "Completion",
      };
    } else if (kind === "workflow" && workflow.data) {
      state = {
        application: application.data,
        app: { kind, id: workflow.data.id, slug },
        production: workflow.data.production_version,
        latest: workflow.data.current_version,
        inputSchema: null,
        engine: workflow.data.provider?.name ?? "Workflow",
      };
    }
  }
  const failure = [application.error, config.error].find((error) => error && !isNotFoundError(error));
  const missing = application.isError || config.isError || (application.isSuccess && !isKind);
  return { state, failure, missing };
}

/**
 * The frame of the Versions, Experiments and Evals pages of either kind of app: loads the app of
 * `:slug` and its prompt or workflow, says so when it fails or is not this kind, and renders the
 * page once both are there.
 */
export function ReleaseAppPage({
  kind,
  loading,
  icon,
  children,
}: {
  kind: AppKind;
  loading: string;
  icon: LucideIcon;
  children: (state: ReleaseAppState) => ReactNode;
}) {
  const { slug = "" } = useParams();
  const { state, failure, missing } = useReleaseApp(kind, slug);
  let body: ReactNode;
  if (failure) body = <ErrorBox message={getErrorMessage(failure)} />;
  else if (missing)
    body = (
      <NotFoundState
        icon={icon}
        title={kind === "prompt" ? "Prompt not found" : "Workflow not found"}
        backTo={`/${kind}s`}
        backLabel="Back to List"
      />
    );
  else if (state) body = children(state);
  else body = <LoadingState label={loading} />;
  return <PageContainer key={slug}>{body}</PageContainer>;
}
