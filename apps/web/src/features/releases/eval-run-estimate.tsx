import type { EvalEstimate } from "@promptmint/contracts";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { formatPrice } from "../../lib/format";

/**
 * What a run may cost before it starts (docs/decisions/062): every case and judge call at its
 * worst case, paid from the wallet as they run. Above $1 or above the wallet the run starts only
 * once the owner confirms the figure (the API refuses it otherwise, naming `confirm_cost_micros`).
 */
export function EvalRunEstimate({ estimate }: { estimate: EvalEstimate }) {
  const judges =
    estimate.judge_calls > 0
      ? ` and ${estimate.judge_calls} judge call${estimate.judge_calls === 1 ? "" : "s"}`
      : "";
  return (
    <p className="text-sm text-slate-600">
      Estimate: up to <strong>{formatPrice(estimate.estimate_micros)}</strong> in model costs for{" "}
      {estimate.calls} call
      {estimate.calls === 1 ? "" : "s"}
      {judges}, paid from your wallet ({formatPrice(estimate.balance_micros)} available) as each call runs.
    </p>
  );
}

/** The question asked before a run whose estimate needs confirming. */
export function ConfirmEvalRunCost({
  estimate,
  onConfirm,
  onCancel,
}: {
  estimate: EvalEstimate;
  onConfirm: (confirmCostMicros: number) => void;
  onCancel: () => void;
}) {
  const aboveWallet = estimate.estimate_micros > estimate.balance_micros;
  return (
    <Alert tone="warning">
      <div className="space-y-2">
        <p>
          This run may cost up to {formatPrice(estimate.estimate_micros)} in model costs
          {aboveWallet
            ? `, more than your wallet's ${formatPrice(estimate.balance_micros)}: cases stop with an error when it runs dry`
            : ""}
          . Start it?
        </p>
        <div className="flex gap-2">
          <Button onClick={() => onConfirm(estimate.estimate_micros)}>Start the run</Button>
          <Button variant="secondary" onClick={onCancel}>
            Cancel
          </Button>
        </div>
      </div>
    </Alert>
  );
}
