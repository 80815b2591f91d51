import type { IoSchema, TestConfigRequest } from "@promptmint/contracts";
import { Play } from "lucide-react";
import { Button } from "../../components/ui/button";
import { useTestPromptConfig } from "./api/test-prompt-config";
import { ApiUsageExample } from "./api-usage-example";
import type { PromptBuilderValues } from "./prompt-builder-values";
import { SampleInputs, useSampleInputs } from "./sample-inputs";
import { TestResultPanel } from "./test-result-panel";

function finiteOrUndefined(text: string): number | undefined {
  const value = Number(text);
  return text.trim() !== "" && Number.isFinite(value) ? value : undefined;
}

/** The test-config body of the builder's current, unsaved values. */
export function testRequestOf(
  values: PromptBuilderValues,
  inputSchema: IoSchema,
  testInputs: TestConfigRequest["test_inputs"],
): TestConfigRequest {
  return {
    prompt_template: values.prompt_template,
    system_prompt: values.system_prompt,
    model: values.model,
    temperature: finiteOrUndefined(values.temperature),
    max_tokens: finiteOrUndefined(values.max_tokens),
    top_p: finiteOrUndefined(values.top_p),
    frequency_penalty: finiteOrUndefined(values.frequency_penalty),
    presence_penalty: finiteOrUndefined(values.presence_penalty),
    input_schema: inputSchema,
    test_inputs: testInputs,
  };
}

function PromptText({ title, text }: { title: string; text: string }) {
  return (
    <div>
      <h3 className="mb-1.5 text-sm font-medium text-slate-700">{title}</h3>
      <pre className="max-h-60 overflow-auto rounded-lg border border-slate-200 bg-slate-50 p-3 font-mono text-xs whitespace-pre-wrap text-slate-800">
        {text || <span className="text-slate-400">(empty)</span>}
      </pre>
    </div>
  );
}

export function PromptBuilderPreviewTab({
  slug,
  values,
  inputSchema,
}: {
  slug: string | undefined;
  values: PromptBuilderValues;
  inputSchema: IoSchema;
}) {
  const sample = useSampleInputs(inputSchema);
  const test = useTestPromptConfig(slug);

  return (
    <div className="space-y-8">
      <div className="grid gap-4 lg:grid-cols-2">
        <PromptText title="System Prompt" text={values.system_prompt} />
        <PromptText title="User Prompt Template" text={values.prompt_template} />
      </div>

      <div className="space-y-4 rounded-lg border border-slate-200 p-4">
        <SampleInputs sample={sample} />
        <Button
          busy={test.isPending}
          onClick={() => test.mutate(testRequestOf(values, inputSchema, sample.testInputs))}
        >
          {!test.isPending && <Play className="size-4" aria-hidden="true" />}
          {test.isPending ? "Testing..." : "Test Prompt"}
        </Button>
        <TestResultPanel result={test.data} error={test.error ?? undefined} />
      </div>

      <ApiUsageExample slug={values.slug} schema={inputSchema} />
    </div>
  );
}
