import { GitBranch, Play } from "lucide-react";
import { useState } from "react";
import { Button, ButtonLink } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ModelSettingsFields } from "../../components/ui/model-settings-fields";
import { useModelCatalog } from "../../lib/models-query";
import { useTestPromptConfig } from "./api/test-prompt-config";
import { JsonEditor } from "./json-editor";
import { ModelCostPanel } from "./model-cost-panel";
import { ModelKeysField } from "./model-keys-field";
import { EDITOR_MODELS, modelOptionsOf } from "./model-options";
import { centsOfDollars } from "./prompt-builder-values";
import {
  EDITOR_MODEL_SETTINGS,
  editorTestRequestOf,
  type PromptEditorErrors,
  type PromptEditorValues,
  schemaFromText,
  schemaText,
} from "./prompt-editor-values";
import { TemplateEditor } from "./template-editor";
import { TestResultPanel } from "./test-result-panel";

const IGNORED_EDITS_HINT = "Edits are applied while the text is a valid schema; invalid JSON is ignored.";

export function PromptEditorConfigTab({
  slug,
  values,
  errors,
  onChange,
}: {
  slug: string;
  values: PromptEditorValues;
  errors: PromptEditorErrors;
  onChange: (changes: Partial<PromptEditorValues>) => void;
}) {
  const catalog = useModelCatalog();
  const test = useTestPromptConfig(slug);
  // The editors keep what is typed; the values only take text that is a valid schema.
  const [inputText, setInputText] = useState(() => schemaText(values.input_schema));
  const [outputText, setOutputText] = useState(() => schemaText(values.output_schema));

  return (
    <div className="space-y-6">
      <Card>
        <CardHeader
          title="Model & Template"
          description="Settings every call of this app uses."
          actions={
            <Button
              size="sm"
              variant="secondary"
              busy={test.isPending}
              onClick={() => test.mutate(editorTestRequestOf(values))}
            >
              {!test.isPending && <Play className="size-4" aria-hidden="true" />}
              {test.isPending ? "Testing..." : "Test Prompt"}
            </Button>
          }
        />
        <CardBody className="space-y-6">
          <TestResultPanel result={test.data} error={test.error ?? undefined} />
          <ModelSettingsFields
            modelOptions={modelOptionsOf(EDITOR_MODELS, catalog.data, values.model)}
            values={values}
            errors={errors}
            onChange={onChange}
            settings={EDITOR_MODEL_SETTINGS}
            beside={
              <ModelKeysField
                model={values.model}
                value={values.model_keys}
                error={errors.model_keys}
                onChange={(model_keys) => onChange({ model_keys })}
              />
            }
          />
          <ModelCostPanel settings={{ ...values, price_cents: centsOfDollars(values.price) }} />
          <TemplateEditor
            label="System Prompt"
            value={values.system_prompt}
            onChange={(system_prompt) => onChange({ system_prompt })}
            inputSchema={values.input_schema}
            error={errors.system_prompt}
            placeholder="You are a helpful assistant that..."
            hint="Sent before the template on every call; variables work here too."
          />
          <TemplateEditor
            label="Prompt Template"
            value={values.prompt_template}
            onChange={(prompt_template) => onChange({ prompt_template })}
            inputSchema={values.input_schema}
            error={errors.prompt_template}
            placeholder="Write a blog post about {{topic}}."
            hint="Type {{ to insert a variable from the input schema; hover a variable for its details."
            minHeight="10rem"
          />
          <div className="grid gap-5 lg:grid-cols-2">
            <JsonEditor
              label="Input Schema"
              value={inputText}
              hint={errors.input_schema ?? IGNORED_EDITS_HINT}
              onChange={(text) => {
                setInputText(text);
                const schema = schemaFromText(text, false);
                if (schema) onChange({ input_schema: schema });
              }}
            />
            <JsonEditor
              label="Output Schema"
              value={outputText}
              placeholder="Optional: a JSON schema the answer must match"
              hint={errors.output_schema ?? IGNORED_EDITS_HINT}
              onChange={(text) => {
                setOutputText(text);
                const schema = schemaFromText(text, true);
                if (schema !== undefined) onChange({ output_schema: schema });
              }}
            />
          </div>
        </CardBody>
      </Card>
      <Card>
        <CardHeader
          title="Version History"
          description="Every save is a version. Compare them, promote one to production or roll back on the Versions page."
          actions={
            <ButtonLink to={`/prompts/${encodeURIComponent(slug)}/versions`} variant="secondary" size="sm">
              <GitBranch className="size-4" aria-hidden="true" />
              Open Versions
            </ButtonLink>
          }
        />
      </Card>
    </div>
  );
}
