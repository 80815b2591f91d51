import type { EvalChange, EvalResult } from "@promptmint/contracts";
import { useState } from "react";
import { Badge, type BadgeTone } from "../../components/ui/badge";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ErrorBox } from "../../components/ui/error-box";
import { SelectField } from "../../components/ui/select-field";
import { LoadingState } from "../../components/ui/spinner";
import { Table } from "../../components/ui/table";
import { getErrorMessage } from "../../lib/api-client";
import { formatDateTime, formatDuration, formatPrice } from "../../lib/format";
import type { ReleaseAppId } from "../../lib/releases/app-ref";
import { useEvalComparison, useEvalRuns } from "./api/evals";

export const CHANGES: Record<EvalChange, { label: string; tone: BadgeTone }> = {
  fixed: { label: "fixed", tone: "green" },
  broke: { label: "broke", tone: "red" },
  still_passing: { label: "still passing", tone: "gray" },
  still_failing: { label: "still failing", tone: "yellow" },
  only_a: { label: "only in A", tone: "blue" },
  only_b: { label: "only in B", tone: "blue" },
};

export function Side({ result }: { result: EvalResult | null }) {
  if (!result) return <span className="text-slate-400">—</span>;
  return (
    <span className="flex flex-col gap-0.5">
      <span className={result.passed ? "text-green-700" : "text-red-700"}>
        {result.passed ? "pass" : "fail"}
      </span>
      <span className="text-xs whitespace-nowrap text-slate-500 tabular-nums">
        {formatPrice(result.cost_micros)} · {formatDuration(result.latency_ms)}
      </span>
    </span>
  );
}

export function Comparison({ app }: { app: ReleaseAppId }) {
  const runs = useEvalRuns(app);
  const [a, setA] = useState("");
  const [b, setB] = useState("");
  const compared = useEvalComparison(app, a, b);
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
