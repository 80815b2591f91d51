import type {
  ArmComparison,
  ArmSeriesPoint,
  ArmStats,
  Experiment,
  ExperimentDetail,
  StickyBy,
} from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { ArrowLeft, FlaskConical, Plus, Trash2 } from "lucide-react";
import { type FormEvent, type ReactNode, useState } from "react";
import { useParams } from "react-router";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Badge, type BadgeTone } from "../../components/ui/badge";
import { Button, ButtonLink } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { Money } from "../../components/ui/money";
import { NotFoundState } from "../../components/ui/not-found-state";
import { NumberField } from "../../components/ui/number-field";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { SelectField } from "../../components/ui/select-field";
import { LoadingState } from "../../components/ui/spinner";
import { ApiClientError, getErrorMessage, isNotFoundError } from "../../lib/api-client";
import { formatDateTime, formatNumber } from "../../lib/format";
import { chartColors } from "../analytics/chart-theme";
import { type ChartSeries, TimeSeriesChart } from "../analytics/time-series-chart";
import { usePromptConfig } from "../prompts/api/get-prompt-config";
import { usePromptVersions } from "../prompts/api/list-prompt-versions";
import { PromptAppTabs } from "../prompts/prompt-app-tabs";
import {
  type EndAction,
  type ExperimentSubject,
  experimentDetailOptions,
  useEndExperiment,
  useExperiments,
  useStartExperiment,
} from "./api/experiments";

/** One colour per arm, in arm order (at most five arms). */
const ARM_COLORS = [chartColors.primary, chartColors.secondary, "#f59e0b", chartColors.success, "#db2777"];
const REFRESH_MS = 15_000;

/** /prompts/:slug/experiments */
export function ExperimentsPage() {
  const { slug = "" } = useParams();
  const config = usePromptConfig(slug);
  let body: ReactNode;
  if (config.isError && !isNotFoundError(config.error))
    body = <ErrorBox message={getErrorMessage(config.error)} />;
  else if (config.isError)
    body = (
      <NotFoundState
        icon={FlaskConical}
        title="Prompt not found"
        backTo="/prompts"
        backLabel="Back to List"
      />
    );
  else if (config.data)
    body = (
      <PromptExperiments slug={slug} promptId={config.data.id} production={config.data.production_version} />
    );
  else body = <LoadingState label="Loading experiments..." />;
  return <PageContainer>{body}</PageContainer>;
}

function PromptExperiments({
  slug,
  promptId,
  production,
}: {
  slug: string;
  promptId: string;
  production: number;
}) {
  const versions = usePromptVersions(promptId);
  const subject: ExperimentSubject = { kind: "prompt", id: promptId, stale: [["prompts", promptId]] };
  return (
    <>
      <PageHeader
        eyebrow={`/${slug}`}
        title="Experiments"
        description="Split production traffic between versions, sticky per caller, and judge each arm by what it earns. A difference is called only when it is more than noise."
        actions={
          <ButtonLink to="/prompts" variant="secondary" size="sm">
            <ArrowLeft className="size-4" aria-hidden="true" />
            Back to List
          </ButtonLink>
        }
      />
      <PromptAppTabs slug={slug} current="experiments" />
      {versions.isError ? (
        <ErrorBox message={getErrorMessage(versions.error)} />
      ) : (
        <ExperimentsPanel subject={subject} production={production} versions={versions.data} />
      )}
    </>
  );
}

/** A version an arm may be: its number, labels and changelog (a prompt's or a workflow's). */
export interface ArmVersion {
  version: number;
  labels: string[];
  changelog: string;
}

/**
 * The experiments of one app: the running one with its figures (or the start form) and the past
 * ones. The same panel for a prompt app's page and a workflow app's Experiments tab; `versions`
 * undefined while they load.
 */
export function ExperimentsPanel({
  subject,
  production,
  versions,
}: {
  subject: ExperimentSubject;
  production: number;
  versions: ArmVersion[] | undefined;
}) {
  const list = useExperiments(subject);
  const [viewing, setViewing] = useState<string | null>(null);
  const running = list.data?.running ?? null;
  const past = (list.data?.experiments ?? []).filter((e) => e.status === "ended");
  const shown = viewing ? past.find((e) => e.id === viewing) : undefined;

  if (list.isError) return <ErrorBox message={getErrorMessage(list.error)} />;
  if (!list.data || !versions) return <LoadingState label="Loading experiments..." />;
  return (
    <div className="space-y-6">
      {running ? (
        <ExperimentView subject={subject} experiment={running} live />
      ) : (
        <StartForm subject={subject} versions={versions} production={production} />
      )}
      {shown && <ExperimentView subject={subject} experiment={shown} onClose={() => setViewing(null)} />}
      <History experiments={past} onView={setViewing} viewing={viewing} />
    </div>
  );
}

interface ArmDraft {
  version: string;
  percent: string;
}

function StartForm({
  subject,
  versions,
  production,
}: {
  subject: ExperimentSubject;
  versions: ArmVersion[];
  production: number;
}) {
  const start = useStartExperiment(subject);
  const workflow = subject.kind === "workflow";
  const other = versions.find((v) => v.version !== production)?.version ?? production;
  const [arms, setArms] = useState<ArmDraft[]>([
    { version: String(production), percent: "50" },
    { version: String(other), percent: "50" },
  ]);
  const [stickyBy, setStickyBy] = useState<"" | StickyBy>("");
  const [minCalls, setMinCalls] = useState("100");
  const [maxErrorRate, setMaxErrorRate] = useState("");
  const [minMargin, setMinMargin] = useState("");
  const [promoteAfter, setPromoteAfter] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const total = arms.reduce((sum, arm) => sum + (Number(arm.percent) || 0), 0);
  const options = versions.map((v) => ({
    value: String(v.version),
    label: `v${v.version}${v.labels.length ? ` (${v.labels.join(", ")})` : ""}${v.changelog ? ` · ${v.changelog}` : ""}`,
  }));

  if (versions.length < 2)
    return (
      <EmptyState
        icon={FlaskConical}
        title="One version so far"
        description={
          workflow
            ? "Save another provider configuration (another Dify, n8n, Flowise or webhook app) to get a second version, then split traffic between them here."
            : "Save a change to the prompt to get a second version, then split traffic between them here."
        }
      />
    );

  const setArm = (index: number, change: Partial<ArmDraft>) =>
    setArms((current) => current.map((arm, i) => (i === index ? { ...arm, ...change } : arm)));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const problems: Record<string, string> = {};
    if (total !== 100) problems.arms = `Percents must sum to 100 (they sum to ${total})`;
    if (Object.keys(problems).length > 0) return setErrors(problems);
    setErrors({});
    start.mutate(
      {
        arms: arms.map((arm) => ({ version: Number(arm.version), percent: Number(arm.percent) })),
        sticky_by: stickyBy || null,
        rules: {
          min_calls: Number(minCalls) || 100,
          ...(maxErrorRate !== "" ? { max_error_rate: Number(maxErrorRate) / 100 } : {}),
          ...(minMargin !== "" ? { min_margin_micros: Math.round(Number(minMargin) * 1_000_000) } : {}),
          ...(promoteAfter !== "" ? { promote_winner_after_calls: Number(promoteAfter) } : {}),
        },
      },
      {
        onSuccess: () => toast.success("Experiment started"),
        onError: (error) =>
          setErrors(
            error instanceof ApiClientError && error.fields ? error.fields : { form: getErrorMessage(error) },
          ),
      },
    );
  };

  return (
    <Card>
      <CardHeader
        title="Start an experiment"
        description="Callers without a pinned version are split between the arms; each caller stays on one arm."
      />
      <CardBody>
        <form className="space-y-6" onSubmit={submit} noValidate>
          <fieldset className="space-y-3">
            <legend className="text-sm font-medium text-slate-900">Arms</legend>
            {arms.map((arm, index) => (
              <div
                // biome-ignore lint/suspicious/noArrayIndexKey: arms are edited in place, by position
                key={index}
                className="grid grid-cols-[1fr_auto] items-end gap-3 rounded-lg border border-slate-200 p-3 sm:grid-cols-[minmax(0,2fr)_minmax(0,3fr)_auto]"
              >
                <SelectField
                  label={`Arm ${index + 1} version`}
                  options={options}
                  value={arm.version}
                  error={errors[`arms.${index}.version`]}
                  onChange={(event) => setArm(index, { version: event.target.value })}
                />
                <div className="col-span-2 flex items-end gap-3 sm:col-span-1">
                  <input
                    type="range"
                    min={1}
                    max={99}
                    aria-label={`Arm ${index + 1} share slider`}
                    value={Number(arm.percent) || 1}
                    onChange={(event) => setArm(index, { percent: event.target.value })}
                    className="mb-3 w-full accent-brand-600"
                  />
                  <NumberField
                    label={`Arm ${index + 1} percent`}
                    min={1}
                    max={99}
                    step={1}
                    value={arm.percent}
                    onChange={(event) => setArm(index, { percent: event.target.value })}
                    className="w-24"
                  />
                </div>
                <Button
                  type="button"
                  variant="ghost"
                  size="sm"
                  aria-label={`Remove arm ${index + 1}`}
                  disabled={arms.length <= 2}
                  onClick={() => setArms((current) => current.filter((_, i) => i !== index))}
                  className="row-start-1 col-start-2 sm:row-auto sm:col-auto"
                >
                  <Trash2 className="size-4" aria-hidden="true" />
                </Button>
              </div>
            ))}
            <div className="flex flex-wrap items-center justify-between gap-3">
              <Button
                type="button"
                variant="secondary"
                size="sm"
                disabled={arms.length >= 5}
                onClick={() =>
                  setArms((current) => [
                    ...current,
                    { version: String(versions[0]?.version ?? 1), percent: "0" },
                  ])
                }
              >
                <Plus className="size-4" aria-hidden="true" />
                Add arm
              </Button>
              <p
                className={total === 100 ? "text-sm text-slate-500" : "text-sm font-medium text-red-600"}
                role="status"
              >
                Total {total}%{total === 100 ? "" : " (must be 100%)"}
              </p>
            </div>
            {errors.arms && <p className="text-sm text-red-600">{errors.arms}</p>}
          </fieldset>

          <div className="grid gap-4 sm:grid-cols-2">
            <SelectField
              label="Keep each caller on one arm by"
              options={[
                { value: "", label: "End user, else API key, else account" },
                { value: "end_user", label: "End user" },
                { value: "key", label: "API key" },
                { value: "account", label: "Account" },
              ]}
              value={stickyBy}
              onChange={(event) => setStickyBy(event.target.value as "" | StickyBy)}
            />
            <NumberField
              label="Calls per arm before judging"
              hint="No rule fires and no significance is shown before this."
              min={10}
              max={1_000_000}
              step={1}
              value={minCalls}
              error={errors["rules.min_calls"]}
              onChange={(event) => setMinCalls(event.target.value)}
            />
            <NumberField
              label="Roll back if an arm's error rate is above (%)"
              hint="Empty: no error rule."
              min={0}
              max={100}
              step={0.1}
              value={maxErrorRate}
              error={errors["rules.max_error_rate"]}
              onChange={(event) => setMaxErrorRate(event.target.value)}
            />
            <NumberField
              label="Roll back if an arm's margin per call is below ($)"
              hint={
                workflow
                  ? "Price less fee, per call (workflow calls have no model cost from us). Empty: no margin rule."
                  : "Price less fee and model cost, per call. Empty: no margin rule."
              }
              min={-100}
              max={100}
              step={0.0001}
              value={minMargin}
              error={errors["rules.min_margin_micros"]}
              onChange={(event) => setMinMargin(event.target.value)}
            />
            <NumberField
              label="Promote a significant winner after (calls per arm)"
              hint="Empty: never promote by itself."
              min={10}
              max={10_000_000}
              step={1}
              value={promoteAfter}
              error={errors["rules.promote_winner_after_calls"]}
              onChange={(event) => setPromoteAfter(event.target.value)}
            />
          </div>
          {errors.form && <Alert tone="error">{errors.form}</Alert>}
          <div className="flex justify-end">
            <Button type="submit" busy={start.isPending}>
              Start experiment
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}

const OUTCOME: Record<string, { label: string; tone: BadgeTone }> = {
  promoted: { label: "Promoted", tone: "green" },
  rolled_back: { label: "Rolled back", tone: "red" },
  stopped: { label: "Stopped", tone: "gray" },
};

function ExperimentView({
  subject,
  experiment,
  live = false,
  onClose,
}: {
  subject: ExperimentSubject;
  experiment: Experiment;
  live?: boolean;
  onClose?: () => void;
}) {
  const detail = useQuery({
    ...experimentDetailOptions(subject, experiment.id),
    refetchInterval: live ? REFRESH_MS : false,
  });
  const end = useEndExperiment(subject);
  const [confirming, setConfirming] = useState<EndAction | null>(null);
  const split = experiment.arms.map((arm) => `v${arm.version} ${arm.percent}%`).join(" / ");
  // mutateAsync, not mutate's callbacks: an ended experiment's card unmounts as the list refreshes,
  // and the confirmation must still be said.
  const run = (action: EndAction) =>
    end.mutateAsync({ experimentId: experiment.id, action }).then(
      () => {
        setConfirming(null);
        toast.success(
          action.kind === "promote"
            ? `v${action.version} is now production`
            : action.kind === "rollback"
              ? `Production is back on v${experiment.control_version}`
              : "Experiment stopped",
        );
      },
      (error: unknown) => {
        setConfirming(null);
        toast.error(getErrorMessage(error));
      },
    );

  return (
    <Card>
      <CardHeader
        title={
          <span className="flex flex-wrap items-center gap-2">
            {live ? "Running experiment" : "Past experiment"}
            {live ? (
              <Badge tone="blue">Running</Badge>
            ) : experiment.outcome ? (
              <Badge tone={OUTCOME[experiment.outcome]?.tone}>{OUTCOME[experiment.outcome]?.label}</Badge>
            ) : null}
          </span>
        }
        description={`${split} · control v${experiment.control_version} · started ${formatDateTime(experiment.started_at)}${experiment.started_by_name ? ` by ${experiment.started_by_name}` : ""}`}
        actions={
          live ? (
            <>
              <Button variant="secondary" size="sm" onClick={() => setConfirming({ kind: "stop" })}>
                Stop
              </Button>
              <Button variant="danger" size="sm" onClick={() => setConfirming({ kind: "rollback" })}>
                Roll back
              </Button>
            </>
          ) : onClose ? (
            <Button variant="ghost" size="sm" onClick={onClose}>
              Close
            </Button>
          ) : null
        }
      />
      <CardBody className="space-y-6">
        {!live && experiment.end_reason && <p className="text-sm text-slate-600">{experiment.end_reason}</p>}
        {detail.isError ? (
          <ErrorBox message={getErrorMessage(detail.error)} />
        ) : !detail.data ? (
          <LoadingState label="Loading figures..." />
        ) : (
          <Figures
            detail={detail.data}
            live={live}
            onPromote={(version) => setConfirming({ kind: "promote", version })}
          />
        )}
      </CardBody>
      <ConfirmDialog
        open={confirming !== null}
        onOpenChange={(open) => !open && setConfirming(null)}
        title={
          confirming?.kind === "promote"
            ? `Promote v${confirming.version}?`
            : confirming?.kind === "rollback"
              ? "Roll back this experiment?"
              : "Stop this experiment?"
        }
        description={
          confirming?.kind === "promote"
            ? `The experiment ends and every caller gets v${confirming.version} (production moves, audited).`
            : confirming?.kind === "rollback"
              ? `The experiment ends and production returns to v${experiment.control_version}, where it pointed when the experiment started.`
              : "The experiment ends; production stays where it points."
        }
        confirmLabel={
          confirming?.kind === "promote" ? "Promote" : confirming?.kind === "rollback" ? "Roll back" : "Stop"
        }
        busy={end.isPending}
        onConfirm={() => confirming && run(confirming)}
      />
    </Card>
  );
}

const percentOf = (rate: number | null) => (rate === null ? "–" : `${(rate * 100).toFixed(1)}%`);
const msOf = (ms: number | null) => (ms === null ? "–" : `${Math.round(ms)} ms`);

function Figures({
  detail,
  live,
  onPromote,
}: {
  detail: ExperimentDetail;
  live: boolean;
  onPromote: (version: number) => void;
}) {
  // A workflow's calls have no model cost from us (the note says so): no row for it. Their tokens
  // are what the provider reported, when it does.
  const metered = detail.model_cost_note === null;
  const rows: [string, (arm: ArmStats) => ReactNode][] = [
    ["Share", (arm) => `${arm.percent}%`],
    ["Calls", (arm) => formatNumber(arm.calls)],
    ["Success rate", (arm) => percentOf(arm.success_rate)],
    ["Latency p50 / p95", (arm) => `${msOf(arm.latency_p50_ms)} / ${msOf(arm.latency_p95_ms)}`],
    ["Tokens in / out", (arm) => `${formatNumber(arm.input_tokens)} / ${formatNumber(arm.output_tokens)}`],
    ...(metered
      ? ([["Model cost", (arm) => <Money micros={arm.model_cost_micros} />]] satisfies [
          string,
          (arm: ArmStats) => ReactNode,
        ][])
      : []),
    ["Revenue", (arm) => <Money micros={arm.revenue_micros} />],
    ["Platform fee", (arm) => <Money micros={arm.fee_micros} />],
    ["Margin", (arm) => <Money micros={arm.margin_micros} />],
    [
      "Margin per call",
      (arm) =>
        arm.margin_per_call_micros === null ? "–" : <Money micros={Math.round(arm.margin_per_call_micros)} />,
    ],
    ["Refunded (failed) calls", (arm) => formatNumber(arm.refunded_calls)],
  ];
  const { experiment } = detail;
  return (
    <>
      {detail.model_cost_note && <Alert tone="info">{detail.model_cost_note}</Alert>}
      <div className="overflow-x-auto">
        <table className="w-full min-w-[28rem] text-sm">
          <caption className="sr-only">Each arm's figures</caption>
          <thead>
            <tr className="border-b border-slate-200 text-left">
              <th scope="col" className="py-2 pr-4 font-medium text-slate-500">
                Metric
              </th>
              {detail.arms.map((arm, i) => (
                <th key={arm.version} scope="col" className="py-2 pr-4 font-semibold text-slate-900">
                  <span className="flex items-center gap-2">
                    <span
                      className="size-2.5 rounded-full"
                      style={{ background: ARM_COLORS[i] }}
                      aria-hidden="true"
                    />
                    v{arm.version}
                    {arm.version === experiment.control_version && <Badge>control</Badge>}
                  </span>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map(([label, cell]) => (
              <tr key={label} className="border-b border-slate-100">
                <th scope="row" className="py-2 pr-4 text-left font-normal text-slate-500">
                  {label}
                </th>
                {detail.arms.map((arm) => (
                  <td key={arm.version} className="py-2 pr-4 tabular-nums text-slate-900">
                    {cell(arm)}
                  </td>
                ))}
              </tr>
            ))}
            {live && (
              <tr>
                <td />
                {detail.arms.map((arm) => (
                  <td key={arm.version} className="py-3 pr-4">
                    <Button size="sm" variant="secondary" onClick={() => onPromote(arm.version)}>
                      Promote v{arm.version}
                    </Button>
                  </td>
                ))}
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <Significance comparisons={detail.comparisons} minCalls={experiment.rules.min_calls} />
      <Charts detail={detail} />
    </>
  );
}

const VERDICT: Record<ArmComparison["verdict"], { label: string; tone: BadgeTone }> = {
  better: { label: "Better than control", tone: "green" },
  worse: { label: "Worse than control", tone: "red" },
  no_difference_yet: { label: "No significant difference yet", tone: "gray" },
  not_enough_calls: { label: "Not enough calls yet", tone: "yellow" },
};

const pOf = (p: number) => (p < 0.001 ? "p < 0.001" : `p = ${p.toFixed(3)}`);

function Significance({ comparisons, minCalls }: { comparisons: ArmComparison[]; minCalls: number }) {
  return (
    <section aria-labelledby="significance-heading" className="space-y-2">
      <h3 id="significance-heading" className="text-sm font-semibold text-slate-900">
        Is it more than noise?
      </h3>
      <ul className="space-y-2">
        {comparisons.map((c) => (
          <li key={c.version} className="rounded-lg border border-slate-200 p-3 text-sm">
            <div className="flex flex-wrap items-center gap-2">
              <span className="font-medium text-slate-900">
                v{c.version} vs v{c.control_version}
              </span>
              <Badge tone={VERDICT[c.verdict].tone}>{VERDICT[c.verdict].label}</Badge>
            </div>
            {c.enough_calls ? (
              <div className="mt-2 grid gap-1 text-slate-600 sm:grid-cols-2">
                {c.margin_per_call && (
                  <p>
                    Margin per call {c.margin_per_call.difference >= 0 ? "+" : "−"}
                    <Money micros={Math.round(Math.abs(c.margin_per_call.difference))} /> (
                    {pOf(c.margin_per_call.p_value)}, 95% CI{" "}
                    <Money micros={Math.round(c.margin_per_call.ci95[0])} /> to{" "}
                    <Money micros={Math.round(c.margin_per_call.ci95[1])} />, Welch's t)
                  </p>
                )}
                {c.success_rate && (
                  <p>
                    Success rate {c.success_rate.difference >= 0 ? "+" : "−"}
                    {(Math.abs(c.success_rate.difference) * 100).toFixed(1)} pts (
                    {pOf(c.success_rate.p_value)}, 95% CI {(c.success_rate.ci95[0] * 100).toFixed(1)} to{" "}
                    {(c.success_rate.ci95[1] * 100).toFixed(1)} pts, z-test)
                  </p>
                )}
              </div>
            ) : (
              <p className="mt-2 text-slate-500">
                Each arm needs {formatNumber(minCalls)} calls before a difference can be judged.
              </p>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

type SeriesRow = { date: string } & Record<`v${number}`, number>;

const METRICS: {
  title: string;
  unit: "count" | "dollars" | "seconds";
  value: (p: ArmSeriesPoint) => number | null;
}[] = [
  { title: "Calls", unit: "count", value: (p) => p.calls },
  {
    title: "Success rate (%)",
    unit: "count",
    value: (p) => (p.success_rate === null ? null : p.success_rate * 100),
  },
  { title: "Revenue", unit: "dollars", value: (p) => p.revenue_micros / 1_000_000 },
  { title: "Margin", unit: "dollars", value: (p) => p.margin_micros / 1_000_000 },
  { title: "Model cost", unit: "dollars", value: (p) => p.model_cost_micros / 1_000_000 },
  {
    title: "Latency p50",
    unit: "seconds",
    value: (p) => (p.latency_p50_ms === null ? null : p.latency_p50_ms / 1000),
  },
];

const bucketLabel = new Intl.DateTimeFormat("en-US", {
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  hour12: false,
});

/** The series pivoted to one row per time bucket, one column per arm (`v2`, `v3`). */
export function pivotSeries(
  points: ArmSeriesPoint[],
  value: (p: ArmSeriesPoint) => number | null,
): SeriesRow[] {
  const rows = new Map<string, SeriesRow>();
  for (const point of points) {
    const date = bucketLabel.format(new Date(point.at));
    const row = rows.get(point.at) ?? ({ date } as SeriesRow);
    const v = value(point);
    if (v !== null) row[`v${point.version}`] = v;
    rows.set(point.at, row);
  }
  return [...rows.values()];
}

function Charts({ detail }: { detail: ExperimentDetail }) {
  const metrics = METRICS.filter(
    (metric) => detail.model_cost_note === null || metric.title !== "Model cost",
  );
  if (detail.series.length === 0)
    return <p className="text-sm text-slate-500">No calls yet: the charts fill in as callers arrive.</p>;
  const series = detail.arms.map(
    (arm, i): ChartSeries<SeriesRow> => ({
      dataKey: `v${arm.version}`,
      name: `v${arm.version}`,
      color: ARM_COLORS[i] ?? chartColors.primary,
    }),
  );
  return (
    <section aria-label="Charts per arm over time" className="grid gap-4 lg:grid-cols-2">
      {metrics.map((metric) => (
        <div key={metric.title} className="rounded-lg border border-slate-200 p-3">
          <h3 className="mb-2 text-sm font-semibold text-slate-900">{metric.title}</h3>
          <TimeSeriesChart
            kind="line"
            data={pivotSeries(detail.series, metric.value)}
            series={series}
            unit={metric.unit}
          />
        </div>
      ))}
    </section>
  );
}

function History({
  experiments,
  onView,
  viewing,
}: {
  experiments: Experiment[];
  onView: (id: string) => void;
  viewing: string | null;
}) {
  return (
    <Card>
      <CardHeader
        title="Past experiments"
        description="Every end is audited; a promotion or rollback moved production."
      />
      {experiments.length === 0 ? (
        <EmptyState
          icon={FlaskConical}
          framed={false}
          title="No past experiments"
          description="Ended experiments appear here with their outcome."
        />
      ) : (
        <ul className="divide-y divide-slate-100">
          {experiments.map((e) => (
            <li
              key={e.id}
              className="flex flex-col gap-2 px-5 py-4 sm:flex-row sm:items-center sm:justify-between"
            >
              <div className="min-w-0">
                <div className="flex flex-wrap items-center gap-2 text-sm font-medium text-slate-900">
                  {e.arms.map((arm) => `v${arm.version} ${arm.percent}%`).join(" / ")}
                  {e.outcome && <Badge tone={OUTCOME[e.outcome]?.tone}>{OUTCOME[e.outcome]?.label}</Badge>}
                  {e.winner_version !== null && <Badge tone="brand">winner v{e.winner_version}</Badge>}
                </div>
                <p className="mt-1 text-sm text-slate-500">
                  {formatDateTime(e.started_at)} – {formatDateTime(e.ended_at)}
                  {e.end_reason ? ` · ${e.end_reason}` : ""}
                </p>
              </div>
              <Button size="sm" variant="secondary" disabled={viewing === e.id} onClick={() => onView(e.id)}>
                View figures
              </Button>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
