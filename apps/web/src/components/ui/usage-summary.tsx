import type { Usage } from "@promptmint/contracts";
import { formatCents, formatDurationSeconds, formatNumber } from "../../lib/format";

/** Why a call cost nothing, when it did (docs/decisions/029), on its own line under the figure. */
const FREE_BECAUSE: Partial<Record<NonNullable<Usage["paid_by"]>, string>> = {
  plan: "Covered by your plan",
  owner: "Free: your own app",
  trial: "Free trial: paid by the app's creator",
  promotion: "Promotional credit: paid by the app's creator",
};

/** Token usage of one call: input, output and total tokens, latency, and what it was charged. */
export function UsageSummary({ usage }: { usage: Usage }) {
  const figures: (readonly [string, string, string?])[] = [
    ["Input Tokens", formatNumber(usage.input_tokens)],
    ["Output Tokens", formatNumber(usage.output_tokens)],
    ["Total Tokens", formatNumber(usage.total_tokens)],
    ["Latency", formatDurationSeconds(usage.latency)],
  ];
  if (usage.charged_cents !== undefined)
    figures.push(["Charged", formatCents(usage.charged_cents), usage.paid_by && FREE_BECAUSE[usage.paid_by]]);
  // As many figures a row as fit at 7.5rem each: a half-width panel never squeezes a figure onto three lines.
  return (
    <dl aria-label="Token usage" className="grid grid-cols-[repeat(auto-fit,minmax(7.5rem,1fr))] gap-2">
      {figures.map(([term, value, note]) => (
        <div key={term} className="rounded-lg bg-slate-50 px-3 py-2">
          <dt className="text-xs text-slate-500">{term}</dt>
          <dd className="text-sm font-semibold whitespace-nowrap text-slate-900 tabular-nums">{value}</dd>
          {note && <dd className="text-xs text-slate-500">{note}</dd>}
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
