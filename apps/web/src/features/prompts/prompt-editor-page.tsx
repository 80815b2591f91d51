import type { Application, PromptConfig } from "@promptmint/contracts";
import { FileText, GitCompare, Rocket } from "lucide-react";
import { type ReactNode, useState } from "react";
import { useParams } from "react-router";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { ApplicationEditorHeader } from "../../components/ui/application-header";
import { Badge } from "../../components/ui/badge";
import { Button, ButtonLink } from "../../components/ui/button";
import { ErrorBox } from "../../components/ui/error-box";
import { LinkedMessage } from "../../components/ui/linked-message";
import { NotFoundState } from "../../components/ui/not-found-state";
import { PageContainer } from "../../components/ui/page-container";
import { SandboxModelNotice } from "../../components/ui/sandbox-model-notice";
import { LoadingState } from "../../components/ui/spinner";
import { SectionTabsList, Tabs, TabsContent } from "../../components/ui/tabs";
import { ApiClientError, getErrorMessage, isNotFoundError } from "../../lib/api-client";
import { useApplication } from "../../lib/applications-query";
import { useDownloadApp } from "../../lib/download-app";
import { withoutErrorsFor } from "../../lib/form-errors";
import { PromoteDialog } from "../releases/promote-dialog";
import { usePromptConfig } from "./api/get-prompt-config";
import { useUpdatePromptApplication } from "./api/update-prompt-application";
import { PromptAppTabs } from "./prompt-app-tabs";
import { PromptEditorBasicTab } from "./prompt-editor-basic-tab";
import { PromptEditorConfigTab } from "./prompt-editor-config-tab";
import {
  editorApplicationUpdateOf,
  editorPromptUpdateOf,
  editorValuesOf,
  type PromptEditorErrors,
  type PromptEditorField,
  type PromptEditorValues,
  validatePromptEditor,
} from "./prompt-editor-values";

const CONFIG_FIELDS = new Set<PromptEditorField>([
  "model",
  "max_tokens",
  "temperature",
  "top_p",
  "frequency_penalty",
  "presence_penalty",
  "system_prompt",
  "prompt_template",
  "input_schema",
  "output_schema",
]);

/** /prompts/:slug */
export function PromptEditorPage() {
  const { slug = "" } = useParams();
  const application = useApplication(slug);
  const config = usePromptConfig(slug, { enabled: application.isSuccess });

  let body: ReactNode;
  if (application.isError && !isNotFoundError(application.error)) {
    body = <ErrorBox message={getErrorMessage(application.error)} />;
  } else if (config.isError && !isNotFoundError(config.error)) {
    body = <ErrorBox message={getErrorMessage(config.error)} />;
  } else if (application.isError || config.isError || application.data?.type === "workflow") {
    body = (
      <NotFoundState icon={FileText} title="Prompt not found" backTo="/prompts" backLabel="Back to List" />
    );
  } else if (application.data && config.data) {
    body = <PromptEditor key={slug} application={application.data} config={config.data} />;
  } else {
    body = <LoadingState label="Loading prompt..." />;
  }
  return <PageContainer>{body}</PageContainer>;
}

function PromptEditor({ application, config }: { application: Application; config: PromptConfig }) {
  const [values, setValues] = useState<PromptEditorValues>(() => editorValuesOf(application, config));
  const [errors, setErrors] = useState<PromptEditorErrors>({});
  const [tab, setTab] = useState("basic");
  const save = useUpdatePromptApplication(application.slug);
  const { download, downloadingSlug } = useDownloadApp();
  const change = (changes: Partial<PromptEditorValues>) => {
    setValues((current) => ({ ...current, ...changes }));
    setErrors((current) => withoutErrorsFor(current, Object.keys(changes)));
  };

  const showErrors = (next: PromptEditorErrors) => {
    setErrors(next);
    const first = Object.keys(next)[0] as PromptEditorField | undefined;
    if (first) setTab(CONFIG_FIELDS.has(first) ? "config" : "basic");
  };

  const saveChanges = () => {
    save.reset();
    const problems = validatePromptEditor(values);
    if (Object.keys(problems).length > 0) return showErrors(problems);
    setErrors({});
    save.mutate(
      { application: editorApplicationUpdateOf(values), prompt: editorPromptUpdateOf(values) },
      {
        onSuccess: ({ application: saved, prompt }) =>
          toast.success(
            saved.status === "live" && prompt.latest_version.version !== prompt.production_version
              ? `Saved as v${prompt.latest_version.version}. Callers still get v${prompt.production_version} until you promote it.`
              : "Changes saved",
          ),
        onError: (error) => {
          if (!(error instanceof ApiClientError) || !error.fields) return;
          const fields: PromptEditorErrors = {};
          for (const [path, message] of Object.entries(error.fields)) {
            const field = (Object.keys(values) as PromptEditorField[]).find((name) => path.startsWith(name));
            if (field) fields[field] = message;
          }
          showErrors(fields);
        },
      },
    );
  };

  return (
    <>
      <ApplicationEditorHeader
        application={application}
        kindBadge={
          <Badge tone="brand">{application.interaction_mode === "chat" ? "Chat" : "Completion"}</Badge>
        }
        backTo="/prompts"
        saving={save.isPending}
        onSave={saveChanges}
        downloading={downloadingSlug === application.slug}
        onDownload={() => void download(application)}
      />

      <PromptAppTabs slug={application.slug} current="editor" />

      <div className="mb-6 space-y-3">
        {application.status === "live" && config.latest_version.version !== config.production_version && (
          <ReleaseBanner config={config} />
        )}
        <SandboxModelNotice />
        {save.isError && (
          <Alert tone="error">
            <LinkedMessage text={getErrorMessage(save.error)} />
          </Alert>
        )}
        {!save.isError && Object.keys(errors).length > 0 && (
          <Alert tone="error">Some settings are out of range; see the highlighted fields.</Alert>
        )}
      </div>

      <Tabs value={tab} onValueChange={setTab}>
        <SectionTabsList
          label="Prompt editor sections"
          sections={{ basic: "Basic Settings", config: "Prompt Config" }}
        />
        <TabsContent value="basic">
          <PromptEditorBasicTab application={application} values={values} errors={errors} onChange={change} />
        </TabsContent>
        <TabsContent value="config">
          <PromptEditorConfigTab slug={application.slug} values={values} errors={errors} onChange={change} />
        </TabsContent>
      </Tabs>
    </>
  );
}

/**
 * A live app whose latest save is not what its callers get: says which version each side has and
 * releases the latest in one click (after a confirmation of what callers will get).
 */
function ReleaseBanner({ config }: { config: PromptConfig }) {
  const [promoting, setPromoting] = useState(false);
  const latest = config.latest_version;
  const production = config.production_version;
  return (
    <section
      aria-label="Release"
      className="flex flex-col gap-3 rounded-lg border border-amber-200 bg-amber-50 px-4 py-3 text-sm text-amber-900 sm:flex-row sm:items-center sm:justify-between"
    >
      <div className="min-w-0">
        <p className="font-semibold">
          Callers get v{production} (production). You are editing v{latest.version}.
        </p>
        <p className="mt-0.5 text-amber-800">
          Saving keeps your changes in new versions; callers get them only once you promote one.
        </p>
      </div>
      <div className="flex shrink-0 flex-wrap gap-2">
        <ButtonLink
          to={`/prompts/${encodeURIComponent(config.application_slug)}/versions`}
          variant="secondary"
          size="sm"
        >
          <GitCompare className="size-4" aria-hidden="true" />
          Compare
        </ButtonLink>
        <Button size="sm" onClick={() => setPromoting(true)}>
          <Rocket className="size-4" aria-hidden="true" />
          Promote v{latest.version}
        </Button>
      </div>
      {promoting && (
        <PromoteDialog
          promptId={config.id}
          target={latest}
          production={config.active_version}
          open
          onOpenChange={setPromoting}
        />
      )}
    </section>
  );
}
