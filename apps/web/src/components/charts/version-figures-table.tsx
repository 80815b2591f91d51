import type { VersionFigures } from "@promptmint/contracts";
import type { ReactNode } from "react";
import { formatDurationSeconds, formatNumber, formatPercent } from "../../lib/format";
import { Badge } from "../ui/badge";
import { Money } from "../ui/money";
import type { TableColumn } from "../ui/table";
import { FigureCell, TableCard, tableCell } from "./analytics-card";

/** How a version is named everywhere: `v12`; calls that name none (workflows, before versions): "No version". */
export const versionLabel = (version: number | null) => (version === null ? "No version" : `v${version}`);

/** True when the breakdown says more than the app's totals: at least one call named its version. */
export const hasVersions = (rows: readonly VersionFigures[]) => rows.some((row) => row.version !== null);

export const VERSION_COLUMNS: readonly TableColumn[] = [
  { label: "Version" },
  { label: "Calls", className: "text-right" },
  { label: "Success", className: "text-right" },
  { label: "Avg time (s)", className: "text-right" },
  { label: "Tokens", className: "text-right" },
  { label: "Revenue", className: "text-right" },
  { label: "Fee", className: "text-right" },
  { label: "Model cost", className: "text-right" },
  { label: "Margin", className: "text-right" },
];

/** A money cell: two decimals, the exact figure on hover (components/ui/money.tsx). */
function MoneyCell({ micros, strong = false }: { micros: number; strong?: boolean }) {
  return (
    <td
      className={`${tableCell} text-right tabular-nums ${strong ? "font-medium text-slate-900" : "text-slate-700"} ${micros < 0 ? "text-red-700" : ""}`}
    >
      <Money micros={micros} />
    </td>
  );
}

/** One version's row of figures; `first` is an optional leading cell (the app's name on the statement). */
export function VersionFiguresRow({ row, first }: { row: VersionFigures; first?: ReactNode }) {
  return (
    <tr>
      {first}
      <td className={tableCell}>
        <span className="flex items-center gap-2">
          <span className={row.version === null ? "text-slate-500" : "font-mono font-medium text-slate-900"}>
            {versionLabel(row.version)}
          </span>
          {row.production && <Badge tone="green">Production</Badge>}
        </span>
      </td>
      <FigureCell>{formatNumber(row.invocations)}</FigureCell>
      <FigureCell>{row.invocations > 0 ? formatPercent(row.success_rate) : "—"}</FigureCell>
      <FigureCell>{row.invocations > 0 ? formatDurationSeconds(row.avg_response_time) : "—"}</FigureCell>
      <FigureCell>{formatNumber(row.input_tokens + row.output_tokens)}</FigureCell>
      <MoneyCell micros={row.gross_micros} />
      <MoneyCell micros={row.fee_micros} />
      <MoneyCell micros={row.model_cost_micros} />
      <MoneyCell micros={row.net_micros} strong />
    </tr>
  );
}

/**
 * An app's window broken down by prompt version (issue 31): calls, success rate, response time,
 * tokens and the money figures of decision 029, newest version first, the production one marked.
 * The rows add up exactly to the app's figures above it.
 */
export function VersionFiguresTable({
  rows,
  period,
}: {
  rows: readonly VersionFigures[];
  /** "Last 30 days". */
  period: string;
}) {
  return (
    <TableCard
      title="By version"
      description={`${period}: what each prompt version earned and cost. Margin is revenue less the platform fee and model cost; the rows add up to the figures above.`}
      label="Figures by version"
      empty={rows.length === 0 ? "No calls in this window" : null}
      columns={VERSION_COLUMNS}
    >
      {rows.map((row) => (
        <VersionFiguresRow key={row.version ?? "none"} row={row} />
      ))}
    </TableCard>
  );
}
