import type { Application, WorkflowConfig } from "@promptmint/contracts";
import { Workflow } from "lucide-react";
import { useState } from "react";
import { useParams } from "react-router";
import { toast } from "sonner";
import { AppTabs } from "../../components/releases/app-tabs";
import { ReleaseBanner } from "../../components/releases/release-banner";
import { SaveNoteDialog } from "../../components/releases/save-note-dialog";
import { Alert } from "../../components/ui/alert";
import { ApplicationEditorHeader } from "../../components/ui/application-header";
import { Badge } from "../../components/ui/badge";
import { ErrorBox } from "../../components/ui/error-box";
import { NotFoundState } from "../../components/ui/not-found-state";
import { PageContainer } from "../../components/ui/page-container";
import { LoadingState } from "../../components/ui/spinner";
import { SectionTabsList, Tabs, TabsContent } from "../../components/ui/tabs";
import { ApiClientError, getErrorMessage, isNotFoundError } from "../../lib/api-client";
import { useApplication } from "../../lib/applications-query";
import { useDownloadApp } from "../../lib/download-app";
import { useWorkflowConfig } from "../../lib/workflow-config-query";
import { useWorkflowProviders } from "./api/list-workflow-providers";
import { useTestWorkflowConfig } from "./api/test-workflow-config";
import { useUpdateWorkflowApplication } from "./api/update-workflow-application";
import { WorkflowBasicTab } from "./workflow-basic-tab";
import { WorkflowFallbackHeader } from "./workflow-editor-header";
import {
  applicationUpdateOf,
  BASIC_FIELDS,
  editorValuesOf,
  type ProviderSlug,
  providerFieldValuesOf,
  testRequestOf,
  validateWorkflowEditor,
  type WorkflowEditorErrors,
  type WorkflowEditorValues,
  workflowUpdateOf,
} from "./workflow-editor-values";
import { WorkflowProviderTab } from "./workflow-provider-tab";

/** /workflows/:slug */
export function WorkflowEditorPage() {
  const { slug = "" } = useParams();
  const application = useApplication(slug);
  const isWorkflow = application.data?.type === "workflow";
  const config = useWorkflowConfig(slug, { enabled: isWorkflow });

  if (application.data && isWorkflow && config.data) {
    return (
      <PageContainer>
        <WorkflowEditor key={slug} application={application.data} config={config.data} />
      </PageContainer>
    );
  }
  const failure = [application.error, config.error].find((error) => error && !isNotFoundError(error));
  const missing = application.isError || config.isError || (application.isSuccess && !isWorkflow);
  if (!failure && !missing) {
    return (
      <PageContainer>
        <LoadingState label="Loading workflow..." />
      </PageContainer>
    );
  }
  if (failure) {
    return (
      <PageContainer>
        <WorkflowFallbackHeader slug={slug} />
        <ErrorBox message={getErrorMessage(failure)} />
      </PageContainer>
    );
  }
  // The same not-found screen as every other page's (NotFoundState), with its way back.
  return (
    <PageContainer>
      <NotFoundState
        icon={Workflow}
        title="Workflow not found"
        description="It may have been deleted, or it is not a workflow application of yours."
        backTo="/workflows"
        backLabel="Back to List"
      />
    </PageContainer>
  );
}

function WorkflowEditor({ application, config }: { application: Application; config: WorkflowConfig }) {
  const providers = useWorkflowProviders();
  const [saved, setSaved] = useState(config);
  const [values, setValues] = useState<WorkflowEditorValues>(() => editorValuesOf(application, config));
  const [errors, setErrors] = useState<WorkflowEditorErrors>({});
  const [tab, setTab] = useState("basic");
  const save = useUpdateWorkflowApplication(application.slug);
  const [asking, setAsking] = useState(false);
  const test = useTestWorkflowConfig(application.slug);
  const { download, downloadingSlug } = useDownloadApp();

  // The saved provider stays selectable even if the list failed to load.
  const choices = [...(providers.data ?? [])];
  if (saved.provider && !choices.some((provider) => provider.slug === saved.provider?.slug)) {
    choices.push(saved.provider);
  }
  const selected = choices.find((provider) => provider.slug === values.provider);
  const schema = selected?.config_schema;

  const change = (changes: Partial<WorkflowEditorValues>) =>
    setValues((current) => ({ ...current, ...changes }));

  const changeProvider = (slug: ProviderSlug | "") => {
    const provider = choices.find((candidate) => candidate.slug === slug);
    // Back to the saved provider: its saved settings; a new one: its defaults.
    const stored = slug === saved.provider?.slug ? saved.provider_config : undefined;
    change({ provider: slug, provider_config: providerFieldValuesOf(provider, stored) });
    setErrors((current) =>
      Object.fromEntries(Object.entries(current).filter(([field]) => !field.startsWith("provider"))),
    );
    test.reset();
  };

  const showErrors = (next: WorkflowEditorErrors) => {
    setErrors(next);
    const first = Object.keys(next)[0];
    if (first) setTab(BASIC_FIELDS.has(first) ? "basic" : "provider");
  };

  /** Save asks what changed first (the new version's note), once the fields are valid. */
  const askToSave = () => {
    save.reset();
    const problems = validateWorkflowEditor(values, schema);
    if (Object.keys(problems).length > 0) return showErrors(problems);
    setErrors({});
    setAsking(true);
  };

  const saveChanges = (note: string) => {
    save.mutate(
      {
        application: applicationUpdateOf(values),
        // The app is saved first: a save that publishes a draft would otherwise be judged live and
        // leave callers on the draft's old production (docs/decisions/060). Judged as it was before.
        workflow: {
          ...workflowUpdateOf(values, schema, note),
          ...(application.status === "live" ? {} : { promote: true }),
        },
      },
      {
        onSuccess: (result) => {
          // Secrets typed in come back masked: the form shows what the server now holds.
          setSaved(result.workflow);
          setValues(editorValuesOf(result.application, result.workflow));
          const { current_version: latest, production_version: production } = result.workflow;
          toast.success(
            latest === production
              ? "Changes saved"
              : `Changes saved as v${latest}; callers get v${production} until you promote it`,
          );
        },
        onError: (error) => {
          if (error instanceof ApiClientError && error.fields) showErrors(error.fields);
        },
      },
    );
  };

  return (
    <>
      <ApplicationEditorHeader
        application={application}
        kindBadge={<Badge tone="blue">{saved.provider?.name ?? "Workflow"}</Badge>}
        backTo="/workflows"
        saving={save.isPending}
        onSave={askToSave}
        downloading={downloadingSlug === application.slug}
        onDownload={() => void download(application)}
      />

      {(save.isError || Object.keys(errors).length > 0) && (
        <div className="mb-6">
          {save.isError ? (
            <Alert tone="error" title="Changes not saved">
              {getErrorMessage(save.error)}
            </Alert>
          ) : (
            <Alert tone="error">Some settings need attention; see the highlighted fields.</Alert>
          )}
        </div>
      )}

      <AppTabs kind="workflow" slug={application.slug} current="editor" />
      <SaveNoteDialog
        open={asking}
        onOpenChange={setAsking}
        live={application.status === "live"}
        onSave={saveChanges}
      />

      <div className="mb-6">
        <ReleaseBanner
          app={{ kind: "workflow", id: config.id, slug: application.slug }}
          status={application.status}
          production={config.production_version}
          latest={config.current_version}
        />
      </div>

      <Tabs value={tab} onValueChange={setTab}>
        <SectionTabsList
          label="Workflow editor sections"
          sections={{
            basic: "Basic Settings",
            provider: "Provider Config",
          }}
        />
        <TabsContent value="basic">
          <WorkflowBasicTab application={application} values={values} errors={errors} onChange={change} />
        </TabsContent>
        <TabsContent value="provider">
          <WorkflowProviderTab
            values={values}
            errors={errors}
            providers={providers}
            choices={choices}
            selected={selected}
            onChange={change}
            onProviderChange={changeProvider}
            test={{
              pending: test.isPending,
              result: test.data,
              error: test.error ?? undefined,
              run: () => test.mutate(testRequestOf(values, schema)),
            }}
          />
        </TabsContent>
      </Tabs>
    </>
  );
}
