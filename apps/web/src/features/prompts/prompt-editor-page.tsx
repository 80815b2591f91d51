import type { Application, PromptConfig } from "@promptmint/contracts";
import { FileText } from "lucide-react";
import { type ReactNode, useState } from "react";
import { useParams } from "react-router";
import { toast } from "sonner";
import { AppTabs } from "../../components/releases/app-tabs";
import { ReleaseBanner } from "../../components/releases/release-banner";
import { SaveNoteDialog } from "../../components/releases/save-note-dialog";
import { Alert } from "../../components/ui/alert";
import { ApplicationEditorHeader } from "../../components/ui/application-header";
import { Badge } from "../../components/ui/badge";
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
import { usePromptConfig } from "../../lib/prompt-config-query";
import { useUpdatePromptApplication } from "./api/update-prompt-application";
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
  const [asking, setAsking] = useState(false);
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

  /** Save asks what changed first (the new version's note), once the fields are valid. */
  const askToSave = () => {
    save.reset();
    const problems = validatePromptEditor(values);
    if (Object.keys(problems).length > 0) return showErrors(problems);
    setErrors({});
    setAsking(true);
  };

  const saveChanges = (note: string) => {
    save.mutate(
      { application: editorApplicationUpdateOf(values), prompt: editorPromptUpdateOf(values, note) },
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
        onSave={askToSave}
        downloading={downloadingSlug === application.slug}
        onDownload={() => void download(application)}
      />

      <AppTabs kind="prompt" slug={application.slug} current="editor" />
      <SaveNoteDialog
        open={asking}
        onOpenChange={setAsking}
        live={application.status === "live"}
        onSave={saveChanges}
      />

      <div className="mb-6 space-y-3">
        <ReleaseBanner
          app={{ kind: "prompt", id: config.id, slug: application.slug }}
          status={application.status}
          production={config.production_version}
          latest={config.latest_version.version}
        />
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
