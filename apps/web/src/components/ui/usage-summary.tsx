import type { Usage } from "@promptmint/contracts";
import { formatNumber, formatSeconds } from "../../lib/format";

/** Token usage of one call: input, output and total tokens, and latency. */
export function UsageSummary({ usage }: { usage: Usage }) {
  const figures = [
    ["Input Tokens", formatNumber(usage.input_tokens)],
    ["Output Tokens", formatNumber(usage.output_tokens)],
    ["Total Tokens", formatNumber(usage.total_tokens)],
    ["Latency", formatSeconds(usage.latency, 2)],
  ] as const;
  return (
    <dl aria-label="Token usage" className="grid grid-cols-2 gap-2 sm:grid-cols-4">
      {figures.map(([term, value]) => (
        <div key={term} className="rounded-lg bg-slate-50 px-3 py-2">
          <dt className="text-xs text-slate-500">{term}</dt>
          <dd className="text-sm font-semibold text-slate-900 tabular-nums">{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function AnswerText({ answer }: { answer: string }) {
  return (
    <pre className="max-h-80 overflow-auto rounded-lg border border-slate-200 bg-white p-3 font-sans text-sm whitespace-pre-wrap text-slate-800">
      {answer}
    </pre>
  );
}
