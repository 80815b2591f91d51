import type {
  Application,
  EvalAssertion,
  EvalAssertionKind,
  EvalCase,
  EvalCaseInput,
  EvalChange,
  EvalResult,
  EvalRun,
  IoSchema,
  PromptConfig,
} from "@promptmint/contracts";
import { ArrowLeft, CheckCircle2, FileText, FlaskConical, Plus, Trash2, XCircle } from "lucide-react";
import { type ReactNode, useState } from "react";
import { Link, useParams } from "react-router";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Badge, type BadgeTone } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { Money } from "../../components/ui/money";
import { NotFoundState } from "../../components/ui/not-found-state";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { SandboxModelNotice } from "../../components/ui/sandbox-model-notice";
import { SelectField } from "../../components/ui/select-field";
import { LoadingState } from "../../components/ui/spinner";
import { SwitchField } from "../../components/ui/switch-field";
import { Table, tableHeaderCell } from "../../components/ui/table";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";
import { ApiClientError, getErrorMessage, isNotFoundError } from "../../lib/api-client";
import { useApplication } from "../../lib/applications-query";
import { formatDateTime, formatUsd4 } from "../../lib/format";
import { usePromptConfig } from "../prompts/api/get-prompt-config";
import { useModelCatalog } from "../prompts/api/list-models";
import { usePromptVersions } from "../prompts/api/list-prompt-versions";
import { PromptAppTabs } from "../prompts/prompt-app-tabs";
import { parseSampleInput, sampleInputText } from "../prompts/template-variables";
import {
  useDeleteEvalCase,
  useEvalCases,
  useEvalComparison,
  useEvalEstimate,
  useEvalRun,
  useEvalRuns,
  useEvalSettings,
  useSaveEvalCase,
  useStartEvalRun,
} from "./api/evals";
import { ConfirmEvalRunCost, EvalRunEstimate } from "./eval-run-estimate";
import { OnlineEvalsPanel } from "./online-evals-panel";

/** /prompts/:slug/evals — test cases, runs against a version, comparisons, the release gate. */
export function EvalsPage() {
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
    body = <Evals key={slug} application={application.data} config={config.data} />;
  } else {
    body = <LoadingState label="Loading evals..." />;
  }
  return <PageContainer>{body}</PageContainer>;
}

function Evals({ application, config }: { application: Application; config: PromptConfig }) {
  const cases = useEvalCases(config.id);
  const [selectedRun, setSelectedRun] = useState<string | null>(null);
  return (
    <>
      <PageHeader
        eyebrow={
          <Link
            to={`/prompts/${application.slug}`}
            className="inline-flex items-center gap-1 hover:underline"
          >
            <ArrowLeft className="size-4" aria-hidden="true" /> {application.name}
          </Link>
        }
        title="Evals"
        documentTitle={`Evals · ${application.name}`}
        description="Test cases with assertions, run against any version before it goes to production. Each run estimates the cost per call and your margin before a single paying call."
      />
      <PromptAppTabs slug={application.slug} current="evals" />
      <div className="mb-6">
        <SandboxModelNotice />
      </div>
      {cases.isPending ? (
        <LoadingState label="Loading test cases..." />
      ) : cases.isError || !cases.data ? (
        <ErrorBox message={getErrorMessage(cases.error)} />
      ) : (
        <div className="space-y-6">
          <ReleaseGate promptId={config.id} required={cases.data.require_passing_eval} />
          <CaseList
            promptId={config.id}
            cases={cases.data.cases}
            maxCases={cases.data.max_cases}
            schema={config.latest_version.input_schema}
            chat={application.interaction_mode === "chat"}
          />
          <RunPanel
            promptId={config.id}
            config={config}
            caseCount={cases.data.cases.length}
            onRan={(run) => setSelectedRun(run.id)}
          />
          <RunHistory promptId={config.id} selected={selectedRun} onSelect={setSelectedRun} />
          {selectedRun && <RunDetail promptId={config.id} runId={selectedRun} />}
          <Comparison promptId={config.id} />
          <OnlineEvalsPanel subject={{ kind: "prompts", id: config.id }} />
        </div>
      )}
    </>
  );
}

function ReleaseGate({ promptId, required }: { promptId: string; required: boolean }) {
  const settings = useEvalSettings(promptId);
  return (
    <Card>
      <CardBody className="space-y-3">
        <SwitchField
          label="Require a passing eval run before production"
          description="When on, a version moves to production (a release, a save with promote, a rollback to another version) only after a run of it passed every case."
          checked={settings.isPending ? !required : required}
          disabled={settings.isPending}
          onChange={(checked) =>
            settings.mutate(checked, {
              onSuccess: () =>
                toast.success(checked ? "Production now needs a passing run" : "Release gate off"),
            })
          }
        />
        {settings.isError && <Alert tone="error">{getErrorMessage(settings.error)}</Alert>}
      </CardBody>
    </Card>
  );
}

// ---------------------------------------------------------------------------------------------
// Cases

export const ASSERTION_KINDS: { value: EvalAssertionKind; label: string }[] = [
  { value: "contains", label: "Contains" },
  { value: "not_contains", label: "Does not contain" },
  { value: "regex", label: "Matches regex" },
  { value: "output_schema", label: "Valid against the output schema" },
  { value: "max_cost", label: "Cost at most (µ$)" },
  { value: "max_latency", label: "Latency at most (ms)" },
  { value: "rubric", label: "Rubric (judged by a model)" },
];

export function newAssertion(kind: EvalAssertionKind): EvalAssertion {
  switch (kind) {
    case "contains":
    case "not_contains":
      return { kind, value: "" };
    case "regex":
      return { kind, pattern: "" };
    case "output_schema":
      return { kind };
    case "max_cost":
      return { kind, max_cost_micros: 10_000 };
    case "max_latency":
      return { kind, max_latency_ms: 10_000 };
    case "rubric":
      return { kind, rubric: "" };
  }
}

/** One line that says what an assertion checks. */
export function describeAssertion(assertion: EvalAssertion): string {
  switch (assertion.kind) {
    case "contains":
      return `contains "${assertion.value}"${assertion.case_insensitive ? " (any case)" : ""}`;
    case "not_contains":
      return `does not contain "${assertion.value}"${assertion.case_insensitive ? " (any case)" : ""}`;
    case "regex":
      return `matches /${assertion.pattern}/`;
    case "output_schema":
      return "valid against the output schema";
    case "max_cost":
      return `costs at most ${formatUsd4(assertion.max_cost_micros)}`;
    case "max_latency":
      return `answers within ${assertion.max_latency_ms} ms`;
    case "rubric":
      return `rubric: ${assertion.rubric}`;
  }
}

function CaseList({
  promptId,
  cases,
  maxCases,
  schema,
  chat,
}: {
  promptId: string;
  cases: EvalCase[];
  maxCases: number;
  schema: IoSchema;
  chat: boolean;
}) {
  const [editing, setEditing] = useState<EvalCase | "new" | null>(null);
  const remove = useDeleteEvalCase(promptId);
  const full = cases.length >= maxCases;
  return (
    <Card>
      <CardHeader
        title="Test cases"
        description={`Inputs and what the answer must meet. A run runs every case (at most ${maxCases}).`}
        actions={
          editing === null && (
            <Button size="sm" onClick={() => setEditing("new")} disabled={full}>
              <Plus className="size-4" aria-hidden="true" /> Add case
            </Button>
          )
        }
      />
      {editing !== null && (
        <CardBody className="border-b border-slate-100 bg-slate-50/60">
          <CaseEditor
            key={editing === "new" ? "new" : editing.id}
            promptId={promptId}
            existing={editing === "new" ? null : editing}
            schema={schema}
            chat={chat}
            onDone={() => setEditing(null)}
          />
        </CardBody>
      )}
      {cases.length === 0 && editing === null ? (
        <EmptyState
          framed={false}
          icon={FlaskConical}
          title="No test cases yet"
          description="Add a case: the inputs of a call and what its answer must contain, match, cost at most, or meet by a rubric."
          action={
            <Button onClick={() => setEditing("new")}>
              <Plus className="size-4" aria-hidden="true" /> Add the first case
            </Button>
          }
        />
      ) : (
        <ul className="divide-y divide-slate-100" aria-label="Test cases">
          {cases.map((c) => (
            <li
              key={c.id}
              className="flex flex-col gap-2 px-5 py-4 sm:flex-row sm:items-start sm:justify-between"
            >
              <div className="min-w-0">
                <h3 className="text-sm font-semibold text-slate-900">{c.name}</h3>
                <p className="mt-0.5 truncate font-mono text-xs text-slate-500">{JSON.stringify(c.inputs)}</p>
                <ul className="mt-2 flex flex-wrap gap-1.5">
                  {c.assertions.map((a, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: assertions have no id of their own
                    <li key={i}>
                      <Badge tone="gray" className="max-w-xs truncate">
                        {describeAssertion(a)}
                      </Badge>
                    </li>
                  ))}
                  {c.assertions.length === 0 && (
                    <li className="text-xs text-slate-500">
                      No assertions: passes whenever the model answers.
                    </li>
                  )}
                </ul>
              </div>
              <div className="flex shrink-0 gap-2">
                <Button size="sm" variant="secondary" onClick={() => setEditing(c)}>
                  Edit
                </Button>
                <Button
                  size="sm"
                  variant="ghost"
                  aria-label={`Delete ${c.name}`}
                  busy={remove.isPending && remove.variables === c.id}
                  onClick={() => remove.mutate(c.id, { onSuccess: () => toast.success("Case deleted") })}
                >
                  <Trash2 className="size-4" aria-hidden="true" />
                </Button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {remove.isError && (
        <CardBody>
          <Alert tone="error">{getErrorMessage(remove.error)}</Alert>
        </CardBody>
      )}
    </Card>
  );
}

function CaseEditor({
  promptId,
  existing,
  schema,
  chat,
  onDone,
}: {
  promptId: string;
  existing: EvalCase | null;
  schema: IoSchema;
  chat: boolean;
  onDone: () => void;
}) {
  const save = useSaveEvalCase(promptId);
  const [name, setName] = useState(existing?.name ?? "");
  const [texts, setTexts] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      Object.keys(schema.properties).map((field) => [
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
    (key.startsWith("inputs.") && key.slice("inputs.".length) in schema.properties) ||
    Number(/^assertions\.(\d+)/.exec(key)?.[1] ?? Number.NaN) < assertions.length;
  const elsewhere = Object.entries(fields).filter(([key]) => !shownAtField(key));
  const banner = !save.isError
    ? null
    : Object.keys(fields).length === 0
      ? getErrorMessage(save.error)
      : elsewhere.map(([key, problem]) => `${key} ${problem}`).join("; ") || null;

  const submit = () => {
    const inputs = Object.fromEntries(
      Object.entries(texts)
        .filter(([, text]) => text !== "")
        .map(([field, text]) => [field, parseSampleInput(text, schema.properties[field])]),
    );
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
        {Object.keys(schema.properties).length === 0 ? (
          <p className="text-sm text-slate-500">The latest version's input schema has no fields.</p>
        ) : (
          <div className="grid gap-3 sm:grid-cols-2">
            {Object.entries(schema.properties).map(([field, property]) => (
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

export function AssertionFields({
  assertion,
  error,
  onChange,
}: {
  assertion: EvalAssertion;
  error?: string;
  onChange: (next: EvalAssertion) => void;
}) {
  switch (assertion.kind) {
    case "contains":
    case "not_contains":
      return (
        <div className="flex flex-col gap-2 sm:flex-row sm:items-end">
          <TextField
            className="flex-1"
            label="Text"
            value={assertion.value}
            error={error}
            onChange={(e) => onChange({ ...assertion, value: e.target.value })}
          />
          <label className="flex items-center gap-2 pb-2 text-sm text-slate-700">
            <input
              type="checkbox"
              className="size-4 rounded border-slate-300"
              checked={assertion.case_insensitive ?? false}
              onChange={(e) => onChange({ ...assertion, case_insensitive: e.target.checked })}
            />
            Ignore case
          </label>
        </div>
      );
    case "regex":
      return (
        <TextField
          label="Pattern (RE2)"
          className="font-mono"
          value={assertion.pattern}
          error={error}
          onChange={(e) => onChange({ ...assertion, pattern: e.target.value })}
        />
      );
    case "output_schema":
      return (
        <p className="pb-2 text-sm text-slate-500">
          The answer must be JSON valid against the version's output schema.
        </p>
      );
    case "max_cost":
      return (
        <TextField
          label="Most model cost (micro-dollars)"
          inputMode="numeric"
          value={String(assertion.max_cost_micros)}
          error={error}
          hint={formatUsd4(assertion.max_cost_micros)}
          onChange={(e) =>
            onChange({ ...assertion, max_cost_micros: Number(e.target.value.replace(/\D/g, "")) || 0 })
          }
        />
      );
    case "max_latency":
      return (
        <TextField
          label="Most latency (ms)"
          inputMode="numeric"
          value={String(assertion.max_latency_ms)}
          error={error}
          onChange={(e) =>
            onChange({ ...assertion, max_latency_ms: Number(e.target.value.replace(/\D/g, "")) || 1 })
          }
        />
      );
    case "rubric":
      return (
        <TextareaField
          label="Rubric"
          rows={2}
          value={assertion.rubric}
          error={error}
          hint="The judge model reads it with the inputs and the answer, and answers pass or fail with a reason."
          onChange={(e) => onChange({ ...assertion, rubric: e.target.value })}
        />
      );
  }
}

// ---------------------------------------------------------------------------------------------
// Runs

function RunPanel({
  promptId,
  config,
  caseCount,
  onRan,
}: {
  promptId: string;
  config: PromptConfig;
  caseCount: number;
  onRan: (run: EvalRun) => void;
}) {
  const versions = usePromptVersions(promptId);
  const models = useModelCatalog();
  const start = useStartEvalRun(promptId);
  const [version, setVersion] = useState(String(config.current_version));
  const [judge, setJudge] = useState("");
  const [confirming, setConfirming] = useState(false);
  const estimate = useEvalEstimate(promptId, Number(version), judge, caseCount > 0);
  const run = (confirmCostMicros?: number) => {
    setConfirming(false);
    start.mutate(
      {
        version: Number(version),
        ...(judge ? { judge_model: judge } : {}),
        ...(confirmCostMicros !== undefined ? { confirm_cost_micros: confirmCostMicros } : {}),
      },
      { onSuccess: (ran) => onRan(ran) },
    );
  };
  const versionOptions = (versions.data ?? [config.latest_version]).map((v) => ({
    value: String(v.version),
    label: `v${v.version}${v.labels.length ? ` (${v.labels.join(", ")})` : ""}`,
  }));
  const judgeOptions = [
    { value: "", label: "The version's own model" },
    ...(models.data?.models ?? []).map((m) => ({ value: m.id, label: m.label })),
  ];
  return (
    <Card>
      <CardHeader
        title="Run the evals"
        description="Every case runs on the version's model, two at a time. Each call is your own call of your app: no price, its model cost paid from your wallet. At most two runs at a time."
      />
      <CardBody className="space-y-4">
        <div className="grid gap-3 sm:grid-cols-[1fr_1fr_auto] sm:items-end">
          <SelectField
            label="Version"
            options={versionOptions}
            value={version}
            onChange={(e) => setVersion(e.target.value)}
          />
          <SelectField
            label="Judge model (for rubrics)"
            options={judgeOptions}
            value={judge}
            onChange={(e) => setJudge(e.target.value)}
          />
          <Button
            busy={start.isPending}
            disabled={caseCount === 0}
            onClick={() => (estimate.data?.needs_confirmation ? setConfirming(true) : run())}
          >
            <FlaskConical className="size-4" aria-hidden="true" /> Run on v{version}
          </Button>
        </div>
        {start.isPending && (
          <LoadingState label={`Running ${caseCount} case${caseCount === 1 ? "" : "s"} on v${version}...`} />
        )}
        {estimate.data && <EvalRunEstimate estimate={estimate.data} />}
        {confirming && estimate.data && (
          <ConfirmEvalRunCost
            estimate={estimate.data}
            onConfirm={run}
            onCancel={() => setConfirming(false)}
          />
        )}
        {caseCount === 0 && <p className="text-sm text-slate-500">Add a test case to run the evals.</p>}
        {start.isError && <Alert tone="error">{getErrorMessage(start.error)}</Alert>}
      </CardBody>
    </Card>
  );
}

const STATUS_TONES: Record<EvalRun["status"], BadgeTone> = {
  queued: "gray",
  running: "blue",
  passed: "green",
  failed: "red",
  error: "yellow",
};

function RunStatus({ run }: { run: EvalRun }) {
  return <Badge tone={STATUS_TONES[run.status]}>{run.status}</Badge>;
}

const micros = (value: number | null) => (value === null ? "—" : formatUsd4(value));

function RunHistory({
  promptId,
  selected,
  onSelect,
}: {
  promptId: string;
  selected: string | null;
  onSelect: (id: string) => void;
}) {
  const runs = useEvalRuns(promptId);
  return (
    <Card>
      <CardHeader title="Runs" description="Newest first. Open one to see each case." />
      {runs.isPending ? (
        <CardBody>
          <LoadingState label="Loading runs..." />
        </CardBody>
      ) : runs.isError || !runs.data ? (
        <CardBody>
          <ErrorBox message={getErrorMessage(runs.error)} />
        </CardBody>
      ) : runs.data.runs.length === 0 ? (
        <EmptyState
          framed={false}
          icon={FlaskConical}
          title="No runs yet"
          description="Run the evals on a version to see how it does."
        />
      ) : (
        <div className="relative overflow-x-auto">
          <Table
            caption="Eval runs"
            headerCellClassName={tableHeaderCell.replace("px-4", "px-3 sm:px-4")}
            columns={[
              { label: "Version" },
              { label: "Result" },
              { label: "Cost / call", className: "text-right" },
              { label: "Margin / call", className: "hidden text-right sm:table-cell" },
              { label: "Started", className: "hidden md:table-cell" },
              { label: "Open", srOnly: true },
            ]}
          >
            {runs.data.runs.map((run) => (
              <tr key={run.id} className={run.id === selected ? "bg-brand-50/50" : undefined}>
                <td className="px-3 py-3 sm:px-4 text-sm font-medium text-slate-900">v{run.version}</td>
                <td className="px-3 py-3 sm:px-4 text-sm whitespace-nowrap">
                  <RunStatus run={run} />{" "}
                  <span className="text-slate-500 tabular-nums">
                    {run.passed}/{run.cases}
                  </span>
                </td>
                <td className="px-3 py-3 sm:px-4 text-right text-sm whitespace-nowrap tabular-nums">
                  {micros(run.cost_median_micros)}
                  <span className="block text-xs text-slate-500">p95 {micros(run.cost_p95_micros)}</span>
                </td>
                <td className="hidden px-3 py-3 sm:px-4 text-right text-sm tabular-nums sm:table-cell">
                  {micros(run.margin_median_micros)}
                </td>
                <td className="hidden px-3 py-3 sm:px-4 text-sm text-slate-500 md:table-cell">
                  {formatDateTime(run.started_at)}
                </td>
                <td className="px-3 py-3 sm:px-4 text-right">
                  <Button
                    size="sm"
                    variant="secondary"
                    onClick={() => onSelect(run.id)}
                    aria-label={`Open run of v${run.version} (${formatDateTime(run.started_at)})`}
                  >
                    Open
                  </Button>
                </td>
              </tr>
            ))}
          </Table>
        </div>
      )}
    </Card>
  );
}

function Figure({ label, value, hint }: { label: string; value: ReactNode; hint?: ReactNode }) {
  return (
    <div className="rounded-lg border border-slate-200 px-4 py-3">
      <dt className="text-xs font-medium text-slate-500">{label}</dt>
      <dd className="mt-0.5 text-lg font-semibold text-slate-900 tabular-nums">{value}</dd>
      {hint && <dd className="mt-0.5 text-xs text-slate-500">{hint}</dd>}
    </div>
  );
}

function RunDetail({ promptId, runId }: { promptId: string; runId: string }) {
  const run = useEvalRun(promptId, runId);
  if (run.isPending) return <LoadingState label="Loading the run..." />;
  if (run.isError || !run.data) return <ErrorBox message={getErrorMessage(run.error)} />;
  const r = run.data;
  return (
    <Card>
      <CardHeader
        title={
          <span className="flex items-center gap-2">
            Run on v{r.version} <RunStatus run={r} />
          </span>
        }
        description={`${formatDateTime(r.started_at)}${r.started_by_name ? ` by ${r.started_by_name}` : ""}${r.judge_model ? ` · judge: ${r.judge_model}` : ""}`}
      />
      <CardBody className="space-y-5">
        {r.error && <Alert tone="error">{r.error}</Alert>}
        <dl className="grid gap-3 sm:grid-cols-2 lg:grid-cols-4">
          <Figure label="Cases passed" value={`${r.passed} / ${r.cases}`} />
          <Figure
            label="Cost per call"
            value={micros(r.cost_median_micros)}
            hint={`median; p95 ${micros(r.cost_p95_micros)}`}
          />
          <Figure
            label="Latency"
            value={r.latency_p50_ms === null ? "—" : `${r.latency_p50_ms} ms`}
            hint={`p50; p95 ${r.latency_p95_ms === null ? "—" : `${r.latency_p95_ms} ms`}`}
          />
          <Figure
            label="Margin per call"
            value={
              <span
                className={
                  r.margin_median_micros !== null && r.margin_median_micros < 0 ? "text-red-700" : undefined
                }
              >
                {micros(r.margin_median_micros)}
              </span>
            }
            hint={
              r.price_micros === null
                ? undefined
                : `price ${formatUsd4(r.price_micros)} − fee ${micros(r.fee_micros)} − cost; at p95 ${micros(r.margin_p95_micros)}`
            }
          />
        </dl>
        {r.judge_cost_micros > 0 && (
          <p className="text-xs text-slate-500">
            The judge's model cost for this run, <Money micros={r.judge_cost_micros} />, is not part of the
            cost per call.
          </p>
        )}
        <ol className="space-y-3" aria-label="Case results">
          {(r.results ?? []).map((result, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a run's results are in a fixed order
            <li key={index}>
              <ResultCard result={result} />
            </li>
          ))}
        </ol>
      </CardBody>
    </Card>
  );
}

function ResultCard({ result }: { result: EvalResult }) {
  const Icon = result.passed ? CheckCircle2 : XCircle;
  return (
    <div className="rounded-lg border border-slate-200 p-4">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h3 className="flex items-center gap-2 text-sm font-semibold text-slate-900">
          <Icon
            className={result.passed ? "size-4 text-green-600" : "size-4 text-red-600"}
            aria-hidden="true"
          />
          {result.case_name}
          <span className="sr-only">{result.passed ? "passed" : "failed"}</span>
        </h3>
        <p className="text-xs text-slate-500 tabular-nums">
          {formatUsd4(result.cost_micros)} · {result.latency_ms} ms · {result.input_tokens}+
          {result.output_tokens} tokens
        </p>
      </div>
      {result.error && <p className="mt-2 text-sm text-red-700">{result.error}</p>}
      <ul className="mt-3 space-y-1">
        {result.assertion_results.map((a, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: in the case's order
          <li key={i} className="flex items-start gap-2 text-sm">
            <Badge tone={a.passed ? "green" : "red"}>{a.passed ? "pass" : "fail"}</Badge>
            <span className="min-w-0 break-words text-slate-700">
              <span className="font-medium">{a.kind}</span>: {a.detail}
            </span>
          </li>
        ))}
      </ul>
      {result.output !== null && (
        <details className="mt-3">
          <summary className="cursor-pointer text-xs font-medium text-slate-600">Output</summary>
          <pre className="mt-2 max-h-64 overflow-auto rounded-md bg-slate-50 p-3 text-xs whitespace-pre-wrap text-slate-800">
            {result.output}
          </pre>
        </details>
      )}
    </div>
  );
}

const CHANGES: Record<EvalChange, { label: string; tone: BadgeTone }> = {
  fixed: { label: "fixed", tone: "green" },
  broke: { label: "broke", tone: "red" },
  still_passing: { label: "still passing", tone: "gray" },
  still_failing: { label: "still failing", tone: "yellow" },
  only_a: { label: "only in A", tone: "blue" },
  only_b: { label: "only in B", tone: "blue" },
};

function Side({ result }: { result: EvalResult | null }) {
  if (!result) return <span className="text-slate-400">—</span>;
  return (
    <span className="flex flex-col gap-0.5">
      <span className={result.passed ? "text-green-700" : "text-red-700"}>
        {result.passed ? "pass" : "fail"}
      </span>
      <span className="text-xs whitespace-nowrap text-slate-500 tabular-nums">
        {formatUsd4(result.cost_micros)} · {result.latency_ms} ms
      </span>
    </span>
  );
}

function Comparison({ promptId }: { promptId: string }) {
  const runs = useEvalRuns(promptId);
  const [a, setA] = useState("");
  const [b, setB] = useState("");
  const compared = useEvalComparison(promptId, a, b);
  const list = runs.data?.runs ?? [];
  if (list.length < 2) return null;
  const options = [
    { value: "", label: "Choose a run" },
    ...list.map((run) => ({
      value: run.id,
      label: `v${run.version} · ${run.status} ${run.passed}/${run.cases} · ${formatDateTime(run.started_at)}`,
    })),
  ];
  return (
    <Card>
      <CardHeader
        title="Compare two runs"
        description="Case by case: what a change fixed, and what it broke."
      />
      <CardBody className="space-y-4">
        <div className="grid gap-3 sm:grid-cols-2">
          <SelectField label="Run A" options={options} value={a} onChange={(e) => setA(e.target.value)} />
          <SelectField label="Run B" options={options} value={b} onChange={(e) => setB(e.target.value)} />
        </div>
        {a !== "" && a === b && <p className="text-sm text-slate-500">Choose two different runs.</p>}
        {compared.isFetching && !compared.data && <LoadingState label="Comparing..." />}
        {compared.isError && <ErrorBox message={getErrorMessage(compared.error)} />}
        {compared.data && (
          <div className="relative overflow-x-auto">
            <Table
              caption="Comparison by case"
              columns={[
                { label: "Case" },
                { label: `A (v${compared.data.a.version})` },
                { label: `B (v${compared.data.b.version})` },
                { label: "Change" },
              ]}
            >
              {compared.data.cases.map((row) => (
                <tr key={row.case_id ?? row.case_name}>
                  <td className="px-4 py-3 text-sm font-medium text-slate-900">{row.case_name}</td>
                  <td className="px-4 py-3 text-sm">
                    <Side result={row.a} />
                  </td>
                  <td className="px-4 py-3 text-sm">
                    <Side result={row.b} />
                  </td>
                  <td className="px-4 py-3 text-sm">
                    <Badge tone={CHANGES[row.change].tone} className="whitespace-nowrap">
                      {CHANGES[row.change].label}
                    </Badge>
                  </td>
                </tr>
              ))}
            </Table>
          </div>
        )}
      </CardBody>
    </Card>
  );
}
