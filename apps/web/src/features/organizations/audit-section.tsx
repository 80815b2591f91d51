import type { AuditEvent, Organization } from "@promptmint/contracts";
import { ScrollText } from "lucide-react";
import { useState } from "react";
import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { QueryStates } from "../../components/ui/query-states";
import { formatDateTime } from "../../lib/format";
import { useAuditEvents } from "./api/activity";

/** Who did what to the organization, newest first, a page at a time. */
export function AuditSection({ organization }: { organization: Organization }) {
  const [page, setPage] = useState(1);
  const events = useAuditEvents(organization.id, page);

  return (
    <Card>
      <CardHeader
        title="Audit log"
        description="Changes to members, settings, keys and money, and who made them."
      />
      <QueryStates query={events} loading="Loading the audit log...">
        {(list) =>
          list.data.length === 0 ? (
            <EmptyState icon={ScrollText} framed={false} title="Nothing recorded yet" />
          ) : (
            <>
              <ol className="divide-y divide-slate-100" aria-label="Audit events">
                {list.data.map((event) => (
                  <AuditEntry key={event.id} event={event} />
                ))}
              </ol>
              <nav
                aria-label="Audit log pages"
                className="flex items-center justify-between gap-3 border-t border-slate-100 px-5 py-3"
              >
                <Button variant="secondary" size="sm" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                  Newer
                </Button>
                <span className="text-sm text-slate-500">
                  Page {list.page} of {Math.max(1, Math.ceil(list.total / list.page_size))}
                </span>
                <Button
                  variant="secondary"
                  size="sm"
                  disabled={!list.has_more}
                  onClick={() => setPage(page + 1)}
                >
                  Older
                </Button>
              </nav>
            </>
          )
        }
      </QueryStates>
    </Card>
  );
}

function AuditEntry({ event }: { event: AuditEvent }) {
  return (
    <li className="grid gap-1 px-5 py-3 text-sm sm:grid-cols-[12rem_minmax(0,1fr)] sm:gap-4">
      <time dateTime={event.at} className="text-slate-500">
        {formatDateTime(event.at)}
      </time>
      <p className="min-w-0 text-slate-700">
        <span className="font-medium text-slate-900">
          {event.actor ? event.actor.name : "A former member"}
        </span>
        {event.actor && <span className="text-slate-500"> ({event.actor.email})</span>}{" "}
        <code className="rounded bg-slate-100 px-1 py-0.5 text-xs text-slate-700">{event.action}</code>
        {event.target && <span className="break-words"> {event.target}</span>}
      </p>
    </li>
  );
}
