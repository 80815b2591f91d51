import type { ArmComparison } from "@promptmint/contracts";
import { Badge, type BadgeTone } from "../../components/ui/badge";
import { Money } from "../../components/ui/money";
import { formatNumber, formatPoints, formatPValue } from "../../lib/format";

export const VERDICT: Record<ArmComparison["verdict"], { label: string; tone: BadgeTone }> = {
  better: { label: "Better than control", tone: "green" },
  worse: { label: "Worse than control", tone: "red" },
  no_difference_yet: { label: "No significant difference yet", tone: "gray" },
  not_enough_calls: { label: "Not enough calls yet", tone: "yellow" },
};

export function Significance({ comparisons, minCalls }: { comparisons: ArmComparison[]; minCalls: number }) {
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
                    {formatPValue(c.margin_per_call.p_value)}, 95% CI{" "}
                    <Money micros={Math.round(c.margin_per_call.ci95[0])} /> to{" "}
                    <Money micros={Math.round(c.margin_per_call.ci95[1])} />, Welch's t)
                  </p>
                )}
                {c.success_rate && (
                  <p>
                    Success rate {c.success_rate.difference >= 0 ? "+" : "−"}
                    {formatPoints(Math.abs(c.success_rate.difference))} (
                    {formatPValue(c.success_rate.p_value)}, 95% CI{" "}
                    {formatPoints(c.success_rate.ci95[0], false)} to {formatPoints(c.success_rate.ci95[1])},
                    z-test)
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
