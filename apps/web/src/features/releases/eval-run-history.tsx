import type { EvalRun } from "@promptmint/contracts";
import { FlaskConical } from "lucide-react";
import { Badge, type BadgeTone } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { LoadingState } from "../../components/ui/spinner";
import { Table, tableHeaderCell } from "../../components/ui/table";
import { getErrorMessage } from "../../lib/api-client";
import { formatDateTime, formatPrice } from "../../lib/format";
import type { ReleaseAppId } from "../../lib/releases/app-ref";
import { useEvalRuns } from "./api/evals";

export const STATUS_TONES: Record<EvalRun["status"], BadgeTone> = {
  queued: "gray",
  running: "blue",
  passed: "green",
  failed: "red",
  error: "yellow",
};

export function RunStatus({ run }: { run: EvalRun }) {
  return <Badge tone={STATUS_TONES[run.status]}>{run.status}</Badge>;
}

export const micros = (value: number | null) => (value === null ? "—" : formatPrice(value));

export function RunHistory({
  app,
  selected,
  onSelect,
}: {
  app: ReleaseAppId;
  selected: string | null;
  onSelect: (id: string) => void;
}) {
  const runs = useEvalRuns(app);
  return (
    <Card>
      <CardHeader title="Runs" description="Newest first. Open one to see each case." />
      {runs.isPending ? (
        <CardBody>
          <LoadingState label="Loading runs..." />
        </CardBody>
      ) : runs.isError || !runs.data ? (
        <CardBody>
          <ErrorBox message={getErrorMessage(runs.error)} />
        </CardBody>
      ) : runs.data.runs.length === 0 ? (
        <EmptyState
          framed={false}
          icon={FlaskConical}
          title="No runs yet"
          description="Run the evals on a version to see how it does."
        />
      ) : (
        <div className="relative overflow-x-auto">
          <Table
            caption="Eval runs"
            headerCellClassName={tableHeaderCell.replace("px-4", "px-3 sm:px-4")}
            columns={[
              { label: "Version" },
              { label: "Result" },
              { label: "Cost / call", className: "text-right" },
              { label: "Margin / call", className: "hidden text-right sm:table-cell" },
              { label: "Started", className: "hidden md:table-cell" },
              { label: "Open", srOnly: true },
            ]}
          >
            {runs.data.runs.map((run) => (
              <tr key={run.id} className={run.id === selected ? "bg-brand-50/50" : undefined}>
                <td className="px-3 py-3 sm:px-4 text-sm font-medium text-slate-900">v{run.version}</td>
                <td className="px-3 py-3 sm:px-4 text-sm whitespace-nowrap">
                  <RunStatus run={run} />{" "}
                  <span className="text-slate-500 tabular-nums">
                    {run.passed}/{run.cases}
                  </span>
                </td>
                <td className="px-3 py-3 sm:px-4 text-right text-sm whitespace-nowrap tabular-nums">
                  {micros(run.cost_median_micros)}
                  <span className="block text-xs text-slate-500">p95 {micros(run.cost_p95_micros)}</span>
                </td>
                <td className="hidden px-3 py-3 sm:px-4 text-right text-sm tabular-nums sm:table-cell">
                  {micros(run.margin_median_micros)}
                </td>
                <td className="hidden px-3 py-3 sm:px-4 text-sm text-slate-500 md:table-cell">
                  {formatDateTime(run.started_at)}
                </td>
                <td className="px-3 py-3 sm:px-4 text-right">
                  <Button
                    size="sm"
                    variant="secondary"
                    onClick={() => onSelect(run.id)}
                    aria-label={`Open run of v${run.version} (${formatDateTime(run.started_at)})`}
                  >
                    Open
                  </Button>
                </td>
              </tr>
            ))}
          </Table>
        </div>
      )}
    </Card>
  );
}
