import type { EvalAssertion } from "@promptmint/contracts";
import { TextField } from "../../components/ui/text-field";
import { TextareaField } from "../../components/ui/textarea-field";
import { formatPrice } from "../../lib/format";

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
          hint={formatPrice(assertion.max_cost_micros)}
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
