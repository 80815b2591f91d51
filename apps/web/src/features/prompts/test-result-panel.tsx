import type { TestConfigResponse, TestRun } from "@promptmint/contracts";
import { CheckCircle2, XCircle } from "lucide-react";
import { Link } from "react-router";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { formatDuration, formatMicrosExact, formatNumber } from "../../lib/format";

/**
 * SPEC §2: 'Template Valid' / 'Template Error' with the message, the rendered template and the
 * detected variables; a failed request reads 'Test failed: {message}' (SPEC §8). A saved app's
 * test also ran the model: its answer (or why there is none) with tokens, latency and cost.
 */
export function TestResultPanel({ result, error }: { result?: TestConfigResponse; error?: unknown }) {
  if (error) {
    // Not enough in the wallet for the test's model cost (decision 062): the way to fix it is a link.
    const unpaid = error instanceof ApiClientError && error.status === 402;
    const message = getErrorMessage(error);
    return (
      <Alert tone="error">
        {`Test failed: ${unpaid ? message.replace(/\s*Top up at \S+$/, "") : message}`}
        {unpaid && (
          <>
            {" "}
            <Link to="/wallet" className="font-medium underline underline-offset-2">
              Top up your wallet
            </Link>
          </>
        )}
      </Alert>
    );
  }
  if (!result) return null;
  const Icon = result.success ? CheckCircle2 : XCircle;

  return (
    <section
      aria-label="Test result"
      role="status"
      className={
        "space-y-4 rounded-lg border p-4 " +
        (result.success ? "border-green-200 bg-green-50/60" : "border-red-200 bg-red-50/60")
      }
    >
      <div className="flex items-start gap-2">
        <Icon
          className={`mt-0.5 size-5 shrink-0 ${result.success ? "text-green-600" : "text-red-600"}`}
          aria-hidden="true"
        />
        <div className="min-w-0">
          <h3 className={`font-semibold ${result.success ? "text-green-800" : "text-red-800"}`}>
            {result.success ? "Template Valid" : "Template Error"}
          </h3>
          {result.message && <p className="mt-1 text-sm text-slate-700">{result.message}</p>}
          {result.error && <p className="mt-1 text-sm break-words text-red-700">{result.error}</p>}
        </div>
      </div>
      {result.run && <ModelRun run={result.run} />}
      {result.rendered_template !== null && (
        <div>
          <h4 className="mb-1.5 text-sm font-medium text-slate-700">Rendered Template</h4>
          <pre className="max-h-64 overflow-auto rounded-md border border-slate-200 bg-white p-3 font-mono text-xs whitespace-pre-wrap text-slate-800">
            {result.rendered_template}
          </pre>
        </div>
      )}
      <div>
        <h4 className="mb-1.5 text-sm font-medium text-slate-700">Detected Variables</h4>
        {result.detected_variables.length === 0 ? (
          <p className="text-sm text-slate-500">None</p>
        ) : (
          <ul className="flex flex-wrap gap-1.5">
            {result.detected_variables.map((name) => (
              <li key={name}>
                <Badge tone="brand" className="font-mono">
                  {name}
                </Badge>
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}

/** The model's answer to the test, and what it took: tokens, latency, and its model cost to the owner. */
function ModelRun({ run }: { run: TestRun }) {
  const figures = [
    { term: "Input tokens", value: formatNumber(run.input_tokens) },
    { term: "Output tokens", value: formatNumber(run.output_tokens) },
    { term: "Latency", value: formatDuration(run.latency_ms) },
    { term: "Model cost", value: formatMicrosExact(run.model_cost_micros) },
  ];
  return (
    <section aria-label="Model answer" className="space-y-2">
      <div className="flex flex-wrap items-center gap-2">
        <h4 className="text-sm font-medium text-slate-700">Model Answer</h4>
        {run.model && (
          <Badge tone="gray" className="font-mono">
            {run.model}
          </Badge>
        )}
        {run.sandbox && <Badge tone="yellow">sandbox</Badge>}
      </div>
      {run.answer !== null ? (
        <pre className="max-h-72 overflow-auto rounded-md border border-slate-200 bg-white p-3 font-sans text-sm whitespace-pre-wrap break-words text-slate-900">
          {run.answer}
        </pre>
      ) : (
        <Alert tone="error">{`The model did not answer: ${run.error ?? "unknown error"}`}</Alert>
      )}
      <dl className="grid grid-cols-2 gap-x-4 gap-y-1 text-sm sm:grid-cols-4">
        {figures.map(({ term, value }) => (
          <div key={term}>
            <dt className="text-xs text-slate-500">{term}</dt>
            <dd className="font-medium text-slate-900 tabular-nums">{value}</dd>
          </div>
        ))}
      </dl>
      <p className="text-xs text-slate-500">
        {run.sandbox
          ? "Answered by the sandbox model (no key for this model on this server): no model cost."
          : "Your own call: no price; its model cost was paid from your wallet."}
      </p>
    </section>
  );
}
