import type { Application, AppUsage } from "@promptmint/contracts";
import { BarChart3, Pencil, Settings2 } from "lucide-react";
import { Link } from "react-router";
import { Badge } from "../../components/ui/badge";
import { ButtonLink } from "../../components/ui/button";
import { Card } from "../../components/ui/card";
import { DownloadAppButton } from "../../components/ui/download-app-button";
import { Money } from "../../components/ui/money";
import { StatusBadge } from "../../components/ui/status-badge";
import { Table } from "../../components/ui/table";
import { useDownloadApp } from "../../lib/download-app";
import { formatNumber } from "../../lib/format";

/** SPEC §2: prompt apps are managed in the prompt editor, workflows in theirs, others on detail. */
export function manageLinkOf(app: Pick<Application, "type" | "slug">): { label: string; to: string } {
  if (app.type === "prompt") return { label: "Manage", to: `/prompts/${app.slug}` };
  if (app.type === "workflow") return { label: "Manage", to: `/workflows/${app.slug}` };
  return { label: "Edit", to: `/applications/${app.slug}` };
}

const cell = "px-4 py-3 text-sm whitespace-nowrap";

function RowActions({
  app,
  downloading,
  onDownload,
  className,
}: {
  app: Application;
  downloading: boolean;
  onDownload: () => void;
  className?: string;
}) {
  const manage = manageLinkOf(app);
  const ManageIcon = manage.label === "Edit" ? Pencil : Settings2;
  return (
    <div className={className ?? "flex justify-end gap-2"}>
      <ButtonLink to={manage.to} variant="secondary" size="sm" aria-label={`${manage.label} ${app.name}`}>
        <ManageIcon className="size-4" aria-hidden="true" />
        {manage.label}
      </ButtonLink>
      <DownloadAppButton label="Download" busy={downloading} onClick={onDownload} />
      <ButtonLink
        to={`/applications/${app.slug}/analytics`}
        variant="ghost"
        size="sm"
        aria-label={`Analytics of ${app.name}`}
      >
        <BarChart3 className="size-4" aria-hidden="true" />
        Analytics
      </ButtonLink>
    </div>
  );
}

function TypeBadge({ type }: { type: Application["type"] }) {
  return (
    <Badge tone={type === "workflow" ? "blue" : "brand"} className="capitalize">
      {type}
    </Badge>
  );
}

export function ApplicationsTable({
  applications,
  usage,
}: {
  applications: readonly Application[];
  usage: Map<string, AppUsage>;
}) {
  const { download, downloadingSlug } = useDownloadApp();

  return (
    <>
      {/* Phones: one card per application, so no column scrolls off-screen. */}
      <ul aria-label="Applications" className="space-y-4 md:hidden">
        {applications.map((app) => {
          const figures = usage.get(app.slug);
          const nameId = `app-card-${app.id}`;
          return (
            <li key={app.id} aria-labelledby={nameId}>
              <Card className="p-4">
                <div className="flex items-start justify-between gap-3">
                  <div className="min-w-0">
                    <h3 id={nameId} className="truncate font-medium text-slate-900">
                      <Link to={`/applications/${app.slug}`} className="hover:text-brand-700 hover:underline">
                        {app.name}
                      </Link>
                    </h3>
                    <p className="truncate font-mono text-xs text-slate-500">{app.slug}</p>
                  </div>
                  <div className="flex shrink-0 gap-1.5">
                    <TypeBadge type={app.type} />
                    <StatusBadge status={app.status} />
                    <SuspendedBadge app={app} />
                  </div>
                </div>
                <dl className="mt-4 grid grid-cols-2 gap-3 rounded-lg bg-slate-50 px-3 py-2.5">
                  <div>
                    <dt className="text-xs text-slate-500">Invocations</dt>
                    <dd className="text-sm font-semibold text-slate-900 tabular-nums">
                      {formatNumber(figures?.total_invocations ?? 0)}
                    </dd>
                  </div>
                  <div>
                    <dt className="text-xs text-slate-500">Net, last 30 days</dt>
                    <dd className="text-sm font-semibold text-slate-900 tabular-nums">
                      <Money micros={figures?.figures.net_micros ?? 0} />
                    </dd>
                  </div>
                </dl>
                <RowActions
                  app={app}
                  className="mt-4 flex flex-wrap gap-2"
                  downloading={downloadingSlug === app.slug}
                  onDownload={() => void download(app)}
                />
              </Card>
            </li>
          );
        })}
      </ul>

      <Card className="hidden overflow-hidden md:block">
        <div className="overflow-x-auto">
          <Table
            caption="Your applications"
            columns={[
              { label: "Name" },
              { label: "Slug" },
              { label: "Type" },
              { label: "Status" },
              { label: "Invocations, last 30 days", className: "text-right" },
              { label: "Net, last 30 days", className: "text-right" },
              { label: "Actions", className: "text-right" },
            ]}
          >
            {applications.map((app) => {
              const figures = usage.get(app.slug);
              return (
                <tr key={app.id} className="hover:bg-slate-50/70">
                  <th scope="row" className={`${cell} text-left font-medium text-slate-900`}>
                    <Link to={`/applications/${app.slug}`} className="hover:text-brand-700 hover:underline">
                      {app.name}
                    </Link>
                  </th>
                  <td className={`${cell} font-mono text-xs text-slate-500`}>{app.slug}</td>
                  <td className={cell}>
                    <TypeBadge type={app.type} />
                  </td>
                  <td className={cell}>
                    <StatusBadge status={app.status} />
                    <SuspendedBadge app={app} />
                  </td>
                  <td className={`${cell} text-right tabular-nums`}>
                    {formatNumber(figures?.total_invocations ?? 0)}
                  </td>
                  <td className={`${cell} text-right tabular-nums`}>
                    <Money micros={figures?.figures.net_micros ?? 0} />
                  </td>
                  <td className={`${cell} text-right`}>
                    <RowActions
                      app={app}
                      downloading={downloadingSlug === app.slug}
                      onDownload={() => void download(app)}
                    />
                  </td>
                </tr>
              );
            })}
          </Table>
        </div>
      </Card>
    </>
  );
}

/** The operator suspended the app (or its owner): callers get 404 until it is lifted. */
function SuspendedBadge({ app }: { app: Application }) {
  if (!app.suspension) return null;
  return (
    <span title={`Suspended by the operator: ${app.suspension.reason}`}>
      <Badge tone="red">Suspended</Badge>
    </span>
  );
}
