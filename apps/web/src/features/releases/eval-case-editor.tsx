import type {
  EvalAssertion,
  EvalAssertionKind,
  EvalCase,
  EvalCaseInput,
  IoSchema,
} from "@promptmint/contracts";
import { Plus, Trash2 } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { SelectField } from "../../components/ui/select-field";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import type { ReleaseAppId } from "../../lib/releases/app-ref";
import { parseSampleInput, sampleInputText } from "../../lib/template-variables";
import { useSaveEvalCase } from "./api/evals";
import { AssertionFields } from "./eval-assertion-fields";
import { ASSERTION_KINDS, newAssertion } from "./eval-assertions";

export function CaseEditor({
  app,
  existing,
  schema,
  chat,
  onDone,
}: {
  app: ReleaseAppId;
  existing: EvalCase | null;
  /** The latest prompt's input schema; null for a workflow app, whose inputs are a JSON object. */
  schema: IoSchema | null;
  chat: boolean;
  onDone: () => void;
}) {
  const save = useSaveEvalCase(app);
  const properties = schema?.properties ?? {};
  const [inputsJson, setInputsJson] = useState(() =>
    schema ? "" : JSON.stringify(existing?.inputs ?? {}, null, 2),
  );
  const [jsonProblem, setJsonProblem] = useState<string>();
  const [name, setName] = useState(existing?.name ?? "");
  const [texts, setTexts] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      Object.keys(properties).map((field) => [
        field,
        existing?.inputs[field] === undefined ? "" : sampleInputText(existing.inputs[field]),
      ]),
    ),
  );
  const [query, setQuery] = useState(existing?.query ?? "");
  const [assertions, setAssertions] = useState<EvalAssertion[]>(
    existing?.assertions ?? [newAssertion("contains")],
  );
  const fields = save.error instanceof ApiClientError ? (save.error.fields ?? {}) : {};
  // A refusal is said once: a field's problem under that field, the banner only for the rest.
  const shownAtField = (key: string) =>
    key === "name" ||
    (chat && key === "query") ||
    (key.startsWith("inputs.") && key.slice("inputs.".length) in properties) ||
    Number(/^assertions\.(\d+)/.exec(key)?.[1] ?? Number.NaN) < assertions.length;
  const elsewhere = Object.entries(fields).filter(([key]) => !shownAtField(key));
  const banner = !save.isError
    ? null
    : Object.keys(fields).length === 0
      ? getErrorMessage(save.error)
      : elsewhere.map(([key, problem]) => `${key} ${problem}`).join("; ") || null;

  /** The inputs typed in: per field of the schema, or (a workflow app) one JSON object. */
  const readInputs = (): Record<string, unknown> | null => {
    if (schema) {
      return Object.fromEntries(
        Object.entries(texts)
          .filter(([, text]) => text !== "")
          .map(([field, text]) => [field, parseSampleInput(text, properties[field])]),
      );
    }
    try {
      const parsed: unknown = JSON.parse(inputsJson.trim() || "{}");
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
        return parsed as Record<string, unknown>;
    } catch {
      // Said below.
    }
    setJsonProblem('Write the inputs as a JSON object, e.g. {"question": "What is 2 + 2?"}');
    return null;
  };

  const submit = () => {
    const inputs = readInputs();
    if (!inputs) return;
    const body: EvalCaseInput = {
      name: name.trim(),
      inputs,
      query: chat && query ? query : null,
      assertions,
    };
    save.mutate(
      { id: existing?.id ?? null, body },
      {
        onSuccess: () => {
          toast.success(existing ? "Case saved" : "Case added");
          onDone();
        },
      },
    );
  };
  const change = (index: number, next: EvalAssertion) =>
    setAssertions((all) => all.map((a, i) => (i === index ? next : a)));

  return (
    <form
      className="space-y-5"
      aria-label={existing ? `Edit ${existing.name}` : "New test case"}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <TextField
        label="Case name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={fields.name}
        required
      />
      <fieldset className="space-y-3">
        <legend className="text-sm font-medium text-slate-700">Inputs</legend>
        {!schema ? (
          <TextareaField
            label="Inputs (JSON)"
            rows={4}
            value={inputsJson}
            hint="The workflow's inputs, as a JSON object."
            error={jsonProblem ?? fields.inputs}
            onChange={(e) => {
              setInputsJson(e.target.value);
              setJsonProblem(undefined);
            }}
          />
        ) : Object.keys(properties).length === 0 ? (
          <p className="text-sm text-slate-500">The latest version's input schema has no fields.</p>
        ) : (
          <div className="grid gap-3 sm:grid-cols-2">
            {Object.entries(properties).map(([field, property]) => (
              <TextField
                key={field}
                label={field}
                hint={`${property.type}${schema.required.includes(field) ? ", required" : ""}${property.description ? ` — ${property.description}` : ""}`}
                value={texts[field] ?? ""}
                error={fields[`inputs.${field}`]}
                onChange={(e) => setTexts((all) => ({ ...all, [field]: e.target.value }))}
              />
            ))}
          </div>
        )}
        {chat && (
          <TextareaField
            label="Query"
            value={query}
            rows={2}
            error={fields.query}
            onChange={(e) => setQuery(e.target.value)}
          />
        )}
      </fieldset>

      <fieldset className="space-y-3">
        <legend className="text-sm font-medium text-slate-700">Assertions</legend>
        {assertions.length === 0 && (
          <p className="text-sm text-slate-500">No assertions: the case passes whenever the model answers.</p>
        )}
        <ol className="space-y-3">
          {assertions.map((assertion, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: assertions have no id of their own
            <li key={index} className="rounded-lg border border-slate-200 bg-white p-3">
              <div className="flex flex-col gap-3 sm:flex-row sm:items-end">
                <SelectField
                  label={`Assertion ${index + 1}`}
                  className="sm:w-64"
                  options={ASSERTION_KINDS}
                  value={assertion.kind}
                  onChange={(e) => change(index, newAssertion(e.target.value as EvalAssertionKind))}
                />
                <div className="min-w-0 flex-1">
                  <AssertionFields
                    assertion={assertion}
                    error={Object.entries(fields).find(([key]) => key.startsWith(`assertions.${index}`))?.[1]}
                    onChange={(next) => change(index, next)}
                  />
                </div>
                <Button
                  variant="ghost"
                  size="sm"
                  aria-label={`Remove assertion ${index + 1}`}
                  onClick={() => setAssertions((all) => all.filter((_, i) => i !== index))}
                >
                  <Trash2 className="size-4" aria-hidden="true" />
                </Button>
              </div>
            </li>
          ))}
        </ol>
        <Button
          variant="secondary"
          size="sm"
          onClick={() => setAssertions((all) => [...all, newAssertion("contains")])}
          disabled={assertions.length >= 20}
        >
          <Plus className="size-4" aria-hidden="true" /> Add assertion
        </Button>
      </fieldset>

      {banner && <Alert tone="error">{banner}</Alert>}
      <div className="flex flex-wrap justify-end gap-2">
        <Button variant="secondary" onClick={onDone}>
          Cancel
        </Button>
        <Button type="submit" busy={save.isPending}>
          {existing ? "Save case" : "Add case"}
        </Button>
      </div>
    </form>
  );
}
