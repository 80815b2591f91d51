import type { EvalResult } from "@promptmint/contracts";
import { CheckCircle2, XCircle } from "lucide-react";
import type { ReactNode } from "react";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ErrorBox } from "../../components/ui/error-box";
import { Money } from "../../components/ui/money";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { formatDateTime, formatDuration, formatPrice } from "../../lib/format";
import type { ReleaseAppId } from "../../lib/releases/app-ref";
import { useEvalRun } from "./api/evals";
import { micros, RunStatus } from "./eval-run-history";

export function Figure({ label, value, hint }: { label: string; value: ReactNode; hint?: ReactNode }) {
  return (
    <div className="rounded-lg border border-slate-200 px-4 py-3">
      <dt className="text-xs font-medium text-slate-500">{label}</dt>
      <dd className="mt-0.5 text-lg font-semibold text-slate-900 tabular-nums">{value}</dd>
      {hint && <dd className="mt-0.5 text-xs text-slate-500">{hint}</dd>}
    </div>
  );
}

export function RunDetail({ app, runId }: { app: ReleaseAppId; runId: string }) {
  const run = useEvalRun(app, runId);
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
            value={formatDuration(r.latency_p50_ms)}
            hint={`p50; p95 ${formatDuration(r.latency_p95_ms)}`}
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
                : `price ${formatPrice(r.price_micros)} − fee ${micros(r.fee_micros)} − cost; at p95 ${micros(r.margin_p95_micros)}`
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

export function ResultCard({ result }: { result: EvalResult }) {
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
          {formatPrice(result.cost_micros)} · {formatDuration(result.latency_ms)} · {result.input_tokens}+
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
