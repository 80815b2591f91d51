import type { RecentInvocations } from "@promptmint/contracts";
import { FigureCell, TableCard, tableCell } from "../../components/charts/analytics-card";
import { versionLabel } from "../../components/charts/version-figures-table";
import { Badge } from "../../components/ui/badge";
import { formatInvocationId } from "../../lib/analytics-format";
import { formatDateTime, formatDurationSeconds, formatNumber } from "../../lib/format";
import { SaveCallAsCaseButton } from "./save-call-as-case-button";

type Invocation = RecentInvocations["recent_invocations"][number];

function userOf(invocation: Invocation): string {
  return invocation.end_user?.trim() ? invocation.end_user : "Anonymous";
}

/**
 * The latest customer calls of one application, newest first, whatever the chosen window. With
 * `savesCasesOf` (a prompt app's slug), each call can be saved as an eval case (decision 078).
 */
export function RecentInvocationsTable({
  invocations,
  savesCasesOf,
}: {
  invocations: readonly Invocation[];
  savesCasesOf?: string;
}) {
  return (
    <TableCard
      title="Recent Invocations"
      description="The latest calls, newest first."
      label="Recent invocations table"
      empty={invocations.length === 0 ? "No invocations found" : null}
      columns={[
        { label: "ID" },
        { label: "User" },
        { label: "Status" },
        { label: "Version" },
        { label: "Response time", className: "text-right" },
        { label: "Tokens", className: "text-right" },
        { label: "Created At" },
        ...(savesCasesOf ? [{ label: "Eval case" }] : []),
      ]}
    >
      {invocations.map((invocation) => (
        <tr key={invocation.id}>
          <td className={`${tableCell} font-mono text-xs text-slate-700`} title={invocation.id}>
            {formatInvocationId(invocation.id)}
          </td>
          <td className={`${tableCell} max-w-48 truncate text-slate-700`} title={userOf(invocation)}>
            {userOf(invocation)}
          </td>
          <td className={tableCell}>
            <Badge tone={invocation.status === "success" ? "green" : "red"} className="capitalize">
              {invocation.status}
            </Badge>
          </td>
          <td className={`${tableCell} font-mono text-xs text-slate-700`}>
            {invocation.version === null ? (
              <span className="text-slate-400" title={versionLabel(null)}>
                —
              </span>
            ) : (
              versionLabel(invocation.version)
            )}
          </td>
          <FigureCell>{formatDurationSeconds(invocation.response_time)}</FigureCell>
          <FigureCell>{formatNumber(invocation.input_tokens + invocation.output_tokens)}</FigureCell>
          <td className={`${tableCell} text-slate-500`}>{formatDateTime(invocation.created_at)}</td>
          {savesCasesOf && (
            <td className={tableCell}>
              <SaveCallAsCaseButton
                slug={savesCasesOf}
                invocationId={invocation.id}
                contentKept={invocation.content_kept}
              />
            </td>
          )}
        </tr>
      ))}
    </TableCard>
  );
}
