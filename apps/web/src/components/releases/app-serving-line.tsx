import type { Application } from "@promptmint/contracts";
import { GitBranch } from "lucide-react";
import { usePromptConfig } from "../../lib/prompt-config-query";
import { appPagePath } from "../../lib/releases/app-ref";
import { useWorkflowConfig } from "../../lib/workflow-config-query";
import { ButtonLink } from "../ui/button";
import { ServingStatus } from "./serving-status";

/**
 * The app's page says what its callers get, like its Versions page: production, or the running
 * experiment's split and a rollout's step (from the serving state). Nothing until the app's
 * prompt or workflow has loaded; nothing for other kinds of app.
 */
export function AppServingLine({ application }: { application: Application }) {
  const kind = application.type === "workflow" ? "workflow" : "prompt";
  const prompt = usePromptConfig(application.slug, { enabled: application.type === "prompt" });
  const workflow = useWorkflowConfig(application.slug, { enabled: application.type === "workflow" });
  const config = kind === "prompt" ? prompt.data : workflow.data;
  if (!config || (application.type !== "prompt" && application.type !== "workflow")) return null;
  return (
    <section
      aria-label="What callers get"
      className="flex flex-col gap-3 rounded-xl border border-slate-200 bg-white p-4 shadow-sm shadow-slate-900/5 sm:flex-row sm:items-center sm:justify-between"
    >
      <ServingStatus
        app={{ kind, id: config.id, slug: application.slug }}
        fallback={config.production_version}
      />
      <ButtonLink to={appPagePath(kind, application.slug, "versions")} variant="secondary" size="sm">
        <GitBranch className="size-4" aria-hidden="true" />
        Versions
      </ButtonLink>
    </section>
  );
}
