import type { AppStatus } from "@promptmint/contracts";
import { Rocket, Save } from "lucide-react";
import { useMemo, useState } from "react";
import { Link, useNavigate } from "react-router";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Button, ButtonLink } from "../../components/ui/button";
import { Card, CardBody } from "../../components/ui/card";
import { LinkedMessage } from "../../components/ui/linked-message";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { SandboxModelNotice } from "../../components/ui/sandbox-model-notice";
import { StatusBadge } from "../../components/ui/status-badge";
import { SectionTabsList, Tabs, TabsContent } from "../../components/ui/tabs";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { withoutErrorsFor } from "../../lib/form-errors";
import { PromptSaveIncompleteError, useCreatePromptApplication } from "./api/create-prompt-application";
import { useUpdatePromptApplication } from "./api/update-prompt-application";
import { PromptBuilderBasicTab } from "./prompt-builder-basic-tab";
import { PromptBuilderModelTab } from "./prompt-builder-model-tab";
import { PromptBuilderPreviewTab } from "./prompt-builder-preview-tab";
import {
  applicationUpdateOf,
  createRequestOf,
  type PromptBuilderErrors,
  type PromptBuilderField,
  type PromptBuilderTab,
  type PromptBuilderValues,
  promptUpdateOf,
  tabOfField,
  validatePromptBuilder,
} from "./prompt-builder-values";
import { SchemaFieldBuilder } from "./schema-field-builder";
import { schemaOf } from "./schema-fields";

/** SPEC §8. */
export const SAVE_FAILED_MESSAGE = "An error occurred while saving the prompt";

/** Maps the API's field paths to the builder's fields. */
function builderFieldOf(path: string): PromptBuilderField | undefined {
  if (path === "price_cents") return "price";
  if (path.startsWith("input_schema") || path.startsWith("output_schema")) return "schema";
  const known: PromptBuilderField[] = [
    "name",
    "slug",
    "description",
    "status",
    "visibility",
    "system_prompt",
    "prompt_template",
    "model",
    "temperature",
    "max_tokens",
    "top_p",
    "frequency_penalty",
  ];
  return known.find((field) => field === path);
}

function serverErrorsOf(error: unknown): PromptBuilderErrors {
  const errors: PromptBuilderErrors = {};
  if (!(error instanceof ApiClientError) || !error.fields) return errors;
  for (const [path, message] of Object.entries(error.fields)) {
    const field = builderFieldOf(path);
    if (field && !errors[field]) errors[field] = message;
  }
  return errors;
}

export function PromptBuilderForm({
  slug,
  savedStatus,
  initialValues,
}: {
  /** Set when editing a saved prompt app. */
  slug?: string;
  savedStatus?: AppStatus;
  initialValues: PromptBuilderValues;
}) {
  const creating = slug === undefined;
  const navigate = useNavigate();
  const [values, setValues] = useState(initialValues);
  const [errors, setErrors] = useState<PromptBuilderErrors>({});
  const [tab, setTab] = useState<PromptBuilderTab>("basic");
  const [publishing, setPublishing] = useState(false);
  const create = useCreatePromptApplication();
  const update = useUpdatePromptApplication(slug ?? "");
  const saving = create.isPending || update.isPending;
  const saveError = creating ? create.error : update.error;
  // A live app's save is a new version its callers do not get until it is published (decision 057).
  const releasing = !creating && savedStatus === "live";

  const inputSchema = useMemo(() => schemaOf(values.input_fields), [values.input_fields]);
  const change = (changes: Partial<PromptBuilderValues>) => {
    setValues((current) => ({ ...current, ...changes }));
    // Either schema's fields carry the one "schema" error.
    const changed = Object.keys(changes).map((key) => (key.endsWith("_fields") ? "schema" : key));
    setErrors((current) => withoutErrorsFor(current, changed));
  };

  const showErrors = (next: PromptBuilderErrors) => {
    setErrors(next);
    const first = Object.keys(next)[0] as PromptBuilderField | undefined;
    if (first) setTab(tabOfField(first));
  };

  const save = (publish: boolean) => {
    create.reset();
    update.reset();
    const next: PromptBuilderValues = publish ? { ...values, status: "live" } : values;
    const problems = validatePromptBuilder(next, creating);
    if (Object.keys(problems).length > 0) return showErrors(problems);
    setErrors({});
    setPublishing(publish);

    if (creating) {
      create.mutate(
        { application: createRequestOf(next), status: next.status, prompt: promptUpdateOf(next) },
        {
          onSuccess: (application) => {
            toast.success(publish ? "Prompt published" : "Prompt saved");
            void navigate(`/applications/${application.slug}/edit`, { replace: true });
          },
          onError: (error) => {
            if (error instanceof PromptSaveIncompleteError) {
              toast.error(`${SAVE_FAILED_MESSAGE}: ${error.message}`);
              void navigate(`/applications/${error.slug}/edit`, { replace: true });
              return;
            }
            showErrors(serverErrorsOf(error));
          },
        },
      );
      return;
    }
    update.mutate(
      { application: applicationUpdateOf(next), prompt: promptUpdateOf(next, publish && releasing) },
      {
        // The form says Live only once the app is: a refused save leaves it as it was (decision 036).
        onSuccess: () => {
          setValues(next);
          toast.success(
            publish
              ? "Prompt published"
              : releasing
                ? "Prompt updated: callers keep the published version until you publish this one"
                : "Prompt updated",
          );
        },
        onError: (error) => showErrors(serverErrorsOf(error)),
      },
    );
  };

  return (
    <PageContainer>
      <PageHeader
        title="Prompt Builder"
        description={
          creating ? (
            "Design a prompt, its schema and model settings, then publish it as an API."
          ) : (
            <span className="flex flex-wrap items-center gap-2">
              <span className="font-mono">/{slug}</span>
              {savedStatus && <StatusBadge status={savedStatus} />}
            </span>
          )
        }
        actions={
          <>
            <ButtonLink to="/applications" variant="secondary">
              Cancel
            </ButtonLink>
            {(values.status === "draft" || releasing) && (
              <Button
                variant="secondary"
                busy={saving && publishing}
                disabled={saving}
                onClick={() => save(true)}
                title={
                  releasing
                    ? "Save a new version and publish it: callers get it on their next call"
                    : "Save and set the app live"
                }
              >
                {!(saving && publishing) && <Rocket className="size-4" aria-hidden="true" />}
                {saving && publishing ? "Saving..." : "Save & Publish"}
              </Button>
            )}
            <Button busy={saving && !publishing} disabled={saving} onClick={() => save(false)}>
              {!(saving && !publishing) && <Save className="size-4" aria-hidden="true" />}
              {saving && !publishing ? "Saving..." : creating ? "Save Draft" : "Update Prompt"}
            </Button>
          </>
        }
      />

      <div className="mb-6 space-y-3">
        {releasing && (
          <Alert tone="info">
            This app is live. <strong>Update Prompt</strong> saves a new version that callers do not get yet;{" "}
            <strong>Save &amp; Publish</strong> saves it and publishes it to every caller. Compare and roll
            back on the{" "}
            <Link to={`/prompts/${slug}/versions`} className="font-medium underline">
              Versions page
            </Link>
            .
          </Alert>
        )}
        <SandboxModelNotice />
        {saveError && !(saveError instanceof PromptSaveIncompleteError) && (
          <Alert tone="error" title={SAVE_FAILED_MESSAGE}>
            <LinkedMessage text={getErrorMessage(saveError)} />
          </Alert>
        )}
        {Object.keys(errors).length > 0 && !saveError && (
          <Alert tone="error" title="Please fix the following:">
            <ul className="list-disc pl-4">
              {Object.entries(errors).map(([field, message]) => (
                <li key={field}>{message}</li>
              ))}
            </ul>
          </Alert>
        )}
      </div>

      <Tabs value={tab} onValueChange={(next) => setTab(next as PromptBuilderTab)}>
        <SectionTabsList
          label="Prompt builder sections"
          sections={{
            basic: "Basic Info",
            schema: "Input/Output Schema",
            model: "Model Settings",
            preview: "Preview & Test",
          }}
        />
        <Card>
          <CardBody>
            <TabsContent value="basic">
              <PromptBuilderBasicTab
                values={values}
                errors={errors}
                creating={creating}
                inputSchema={inputSchema}
                onChange={change}
              />
            </TabsContent>
            <TabsContent value="schema" className="space-y-10">
              {errors.schema && <Alert tone="error">{errors.schema}</Alert>}
              <SchemaFieldBuilder
                title="Input Schema"
                description="The inputs callers send; use them in the templates as {{name}}."
                fields={values.input_fields}
                onChange={(input_fields) => change({ input_fields })}
              />
              <SchemaFieldBuilder
                title="Output Schema"
                description="Optional: the JSON object the model must answer with. Leave it empty for free text."
                fields={values.output_fields}
                onChange={(output_fields) => change({ output_fields })}
              />
            </TabsContent>
            <TabsContent value="model">
              <PromptBuilderModelTab values={values} errors={errors} onChange={change} />
            </TabsContent>
            <TabsContent value="preview">
              <PromptBuilderPreviewTab slug={slug} values={values} inputSchema={inputSchema} />
            </TabsContent>
          </CardBody>
        </Card>
      </Tabs>
    </PageContainer>
  );
}
