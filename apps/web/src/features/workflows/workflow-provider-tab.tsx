import type { WorkflowProvider, WorkflowTestResponse } from "@promptmint/contracts";
import type { UseQueryResult } from "@tanstack/react-query";
import { PlugZap, Workflow } from "lucide-react";
import { useId } from "react";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { CheckboxField } from "../../components/ui/checkbox-field";
import { NumberField } from "../../components/ui/number-field";
import { SelectField, type SelectOption } from "../../components/ui/select-field";
import { getErrorMessage } from "../../lib/api-client";
import { ProviderConfigFields } from "./provider-config-fields";
import {
  type ProviderSlug,
  WORKFLOW_LIMITS,
  type WorkflowEditorErrors,
  type WorkflowEditorValues,
} from "./workflow-editor-values";
import { WorkflowTestResult } from "./workflow-test-result";

export interface WorkflowTestState {
  pending: boolean;
  result?: WorkflowTestResponse;
  error?: unknown;
  run: () => void;
}

function providerOptionsOf(
  providers: UseQueryResult<WorkflowProvider[]>,
  choices: readonly WorkflowProvider[],
): SelectOption[] {
  if (choices.length === 0) {
    return [{ value: "", label: providers.isPending ? "Loading providers..." : "No providers available" }];
  }
  return [
    { value: "", label: "Select a provider..." },
    ...choices.map((provider) => ({ value: provider.slug, label: provider.name })),
  ];
}

/** The limits every run of the workflow keeps, with the range each accepts. */
const RUN_LIMIT_FIELDS = [
  { name: "timeout_seconds", label: "Timeout (seconds)", hint: "1 to 900; default 300." },
  { name: "max_iterations", label: "Max Iterations", hint: "1 to 100; default 10." },
] as const;

export function WorkflowProviderTab({
  values,
  errors,
  providers,
  choices,
  selected,
  onChange,
  onProviderChange,
  test,
}: {
  values: WorkflowEditorValues;
  errors: WorkflowEditorErrors;
  providers: UseQueryResult<WorkflowProvider[]>;
  /** The providers to choose from: the list, or at least the saved one when the list failed. */
  choices: readonly WorkflowProvider[];
  selected: WorkflowProvider | undefined;
  onChange: (changes: Partial<WorkflowEditorValues>) => void;
  onProviderChange: (slug: ProviderSlug | "") => void;
  test: WorkflowTestState;
}) {
  const settingsHeadingId = useId();
  return (
    <div className="space-y-6">
      <Card>
        <CardHeader
          title="Workflow Provider"
          description="The external workflow every call of this app is sent to."
          actions={
            <Button
              size="sm"
              variant="secondary"
              busy={test.pending}
              disabled={values.provider === ""}
              onClick={test.run}
            >
              {!test.pending && <PlugZap className="size-4" aria-hidden="true" />}
              {test.pending ? "Testing..." : "Test Config"}
            </Button>
          }
        />
        <CardBody className="space-y-6">
          <WorkflowTestResult result={test.result} error={test.error} />
          {providers.isError && (
            <Alert tone="warning" role="alert">
              {`Providers could not be loaded: ${getErrorMessage(providers.error)}`}
            </Alert>
          )}
          <SelectField
            label="Provider"
            options={providerOptionsOf(providers, choices)}
            value={values.provider}
            disabled={choices.length === 0}
            hint={values.provider === "" ? "Choose a provider to configure and test it." : undefined}
            error={errors.provider}
            onChange={(event) => onProviderChange(event.target.value as ProviderSlug | "")}
          />
          {selected && (
            <>
              <ProviderInfo provider={selected} />
              <section aria-labelledby={settingsHeadingId} className="space-y-4">
                <h3 id={settingsHeadingId} className="text-sm font-semibold text-slate-900">
                  {selected.name} Settings
                </h3>
                <ProviderConfigFields
                  schema={selected.config_schema}
                  values={values.provider_config}
                  errors={errors}
                  onChange={(key, value) =>
                    onChange({ provider_config: { ...values.provider_config, [key]: value } })
                  }
                />
              </section>
            </>
          )}
        </CardBody>
      </Card>

      <Card>
        <CardHeader title="Advanced Settings" description="Limits applied to every run of the workflow." />
        <CardBody className="space-y-5">
          <div className="grid gap-5 sm:grid-cols-2">
            {RUN_LIMIT_FIELDS.map(({ name, label, hint }) => (
              <NumberField
                key={name}
                label={label}
                {...WORKFLOW_LIMITS[name]}
                value={values[name]}
                error={errors[name]}
                hint={hint}
                onChange={(event) => onChange({ [name]: event.target.value })}
              />
            ))}
          </div>
          <CheckboxField
            label="Enable Logging"
            checked={values.enable_logging}
            onChange={(event) => onChange({ enable_logging: event.target.checked })}
          />
        </CardBody>
      </Card>
    </div>
  );
}

function ProviderInfo({ provider }: { provider: WorkflowProvider }) {
  return (
    <div className="flex gap-3 rounded-lg border border-brand-100 bg-brand-50/50 p-4">
      <div className="flex size-9 shrink-0 items-center justify-center rounded-lg bg-white text-brand-600 shadow-sm">
        <Workflow className="size-5" aria-hidden="true" />
      </div>
      <div className="min-w-0 space-y-1">
        <div className="flex flex-wrap items-center gap-2">
          <p className="font-semibold text-slate-900">{provider.name}</p>
          <Badge tone="blue" className="font-mono">
            {provider.slug}
          </Badge>
          {provider.supports_streaming && <Badge tone="green">Streaming</Badge>}
        </div>
        {provider.description && <p className="text-sm text-slate-600">{provider.description}</p>}
      </div>
    </div>
  );
}
