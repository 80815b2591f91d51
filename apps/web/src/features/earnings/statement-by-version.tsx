import type { OwnerVersionFigures } from "@promptmint/contracts";
import { Link } from "react-router";
import { TableCard, tableCell } from "../../components/charts/analytics-card";
import { VERSION_COLUMNS, VersionFiguresRow } from "../../components/charts/version-figures-table";
import { Money } from "../../components/ui/money";
import { LoadingState } from "../../components/ui/spinner";
import { formatNumber } from "../../lib/format";
import { useOwnerVersionFigures } from "../../lib/owner-version-figures-query";

/**
 * The earnings statement's period by app and prompt version (issue 31): each app's calls, revenue,
 * fee, model cost and margin per version, the production one marked; the total row is exactly
 * the "From paid calls" figures above it.
 */
export function StatementByVersion({ days }: { days: number }) {
  const figures = useOwnerVersionFigures(days);
  if (figures.isPending) return <LoadingState label="Loading figures by version..." />;
  // As the "From paid calls" figures above it: a breakdown that fails to load is left out, and
  // the rest of the page (payouts, Withdraw) stays usable.
  if (figures.isError) return null;
  return <StatementByVersionTable data={figures.data} />;
}

export function StatementByVersionTable({ data }: { data: OwnerVersionFigures }) {
  const calls = data.applications.reduce(
    (sum, app) => sum + app.versions.reduce((n, row) => n + row.invocations, 0),
    0,
  );
  return (
    <TableCard
      title="By app and version"
      description={`${data.figures.period}: what each version of your apps earned and cost. Margin is revenue less the platform fee and model cost. Refunds are of payments, not of calls, so they are not split by version.`}
      label="Earnings by app and version"
      empty={data.applications.length === 0 ? "No calls to your apps in this period" : null}
      columns={[{ label: "App" }, ...VERSION_COLUMNS]}
    >
      {data.applications.flatMap((app) =>
        app.versions.map((row, index) => (
          <VersionFiguresRow
            key={`${app.application_slug}:${row.version ?? "none"}`}
            row={row}
            first={
              <td className={`${tableCell} max-w-48 truncate`} title={app.application_name}>
                {index === 0 ? (
                  <Link
                    to={`/applications/${app.application_slug}/analytics`}
                    className="font-medium text-slate-900 hover:text-brand-700"
                  >
                    {app.application_name}
                  </Link>
                ) : (
                  <span className="sr-only">{app.application_name}</span>
                )}
              </td>
            }
          />
        )),
      )}
      <tr className="bg-slate-50 font-semibold text-slate-900">
        <td className={tableCell} colSpan={2}>
          Total
        </td>
        <td className={`${tableCell} text-right tabular-nums`}>{formatNumber(calls)}</td>
        <td className={tableCell} colSpan={3} />
        <td className={`${tableCell} text-right tabular-nums`}>
          <Money micros={data.figures.gross_micros} />
        </td>
        <td className={`${tableCell} text-right tabular-nums`}>
          <Money micros={data.figures.fee_micros} />
        </td>
        <td className={`${tableCell} text-right tabular-nums`}>
          <Money micros={data.figures.model_cost_micros} />
        </td>
        <td className={`${tableCell} text-right tabular-nums`}>
          <Money micros={data.figures.net_micros} />
        </td>
      </tr>
    </TableCard>
  );
}
