import type { GlobalDashboard } from "@promptmint/contracts";
import { Link } from "react-router";
import { FigureCell, TableCard, tableCell } from "../../components/charts/analytics-card";
import { Badge } from "../../components/ui/badge";
import { formatDate, formatDurationSeconds, formatNumber, formatPercent } from "../../lib/format";

type ApplicationFigures = GlobalDashboard["applications"][number];

/** A rate or a time of an app never called: there is none, rather than a misleading 0.0% or 0 s. */
function NoCalls() {
  return (
    <span title="No calls yet">
      <span aria-hidden="true">—</span>
      <span className="sr-only">No calls yet</span>
    </span>
  );
}

/** Each application's share of the window: calls, success rate, speed and last use. */
export function ApplicationPerformanceTable({
  applications,
}: {
  applications: readonly ApplicationFigures[];
}) {
  return (
    <TableCard
      title="Application Performance"
      label="Application performance table"
      empty={applications.length === 0 ? "No applications found" : null}
      columns={[
        { label: "Application" },
        { label: "Type" },
        { label: "Invocations", className: "text-right" },
        { label: "Success Rate", className: "text-right" },
        { label: "Avg Response Time", className: "text-right" },
        { label: "Last Used" },
      ]}
    >
      {applications.map((app) => (
        <tr key={app.application_slug}>
          <th scope="row" className={`${tableCell} text-left font-medium text-slate-900`}>
            <Link
              to={`/applications/${app.application_slug}/analytics`}
              className="hover:text-brand-700 hover:underline"
            >
              {app.application_name}
            </Link>
            {app.invocations === 0 && (
              <span className="block text-xs font-normal text-slate-500">No calls yet</span>
            )}
          </th>
          <td className={tableCell}>
            <Badge tone={app.application_type === "workflow" ? "blue" : "green"} className="capitalize">
              {app.application_type}
            </Badge>
          </td>
          <FigureCell>{formatNumber(app.invocations)}</FigureCell>
          <FigureCell>{app.invocations === 0 ? <NoCalls /> : formatPercent(app.success_rate)}</FigureCell>
          <FigureCell>
            {app.invocations === 0 ? <NoCalls /> : formatDurationSeconds(app.avg_response_time)}
          </FigureCell>
          <td className={`${tableCell} text-slate-500`}>{formatDate(app.last_used, "Never")}</td>
        </tr>
      ))}
    </TableCard>
  );
}
