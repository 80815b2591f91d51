import type { EvalAssertion, EvalAssertionKind } from "@promptmint/contracts";
import { formatDuration, formatPrice } from "../../lib/format";

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
      return `costs at most ${formatPrice(assertion.max_cost_micros)}`;
    case "max_latency":
      return `answers within ${formatDuration(assertion.max_latency_ms)}`;
    case "rubric":
      return `rubric: ${assertion.rubric}`;
  }
}
