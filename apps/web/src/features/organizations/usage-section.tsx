import type { Organization, OrganizationUsage } from "@promptmint/contracts";
import { useState } from "react";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { QueryStates } from "../../components/ui/query-states";
import { StatCard } from "../../components/ui/stat-card";
import { Table } from "../../components/ui/table";
import { TextField } from "../../components/ui/text-field";
import { formatCents, formatNumber } from "../../lib/format";
import { useOrganizationUsage } from "./api/activity";

/** This UTC month as YYYY-MM. */
export function currentMonth(now: Date = new Date()): string {
  return now.toISOString().slice(0, 7);
}

const MONTH_PATTERN = /^(20\d\d)-(0[1-9]|1[0-2])$/;

interface UsageLine {
  /** The member's, key's or app's id (one line gathers those without one: former members, deleted keys). */
  id: string;
  name: string;
  calls: number;
  charged_cents: number;
}

/** A month's calls and charges: in total, by member, by API key and by app. */
export function UsageSection({ organization }: { organization: Organization }) {
  const [typed, setTyped] = useState(currentMonth);
  const month = MONTH_PATTERN.test(typed) ? typed : currentMonth();
  const usage = useOrganizationUsage(organization.id, month);

  return (
    <div className="space-y-6">
      <div className="max-w-48">
        <TextField
          label="Month (UTC)"
          type="month"
          value={typed}
          max={currentMonth()}
          onChange={(event) => setTyped(event.target.value)}
        />
      </div>
      <QueryStates query={usage} loading="Loading usage...">
        {(figures) => <UsageFigures usage={figures} />}
      </QueryStates>
    </div>
  );
}

function UsageFigures({ usage }: { usage: OrganizationUsage }) {
  return (
    <div className="space-y-6">
      <div className="grid gap-4 sm:grid-cols-2">
        <StatCard label="Calls" value={formatNumber(usage.total.calls)} />
        <StatCard label="Charged" value={formatCents(usage.total.charged_cents)} />
      </div>
      <UsageTable
        title="By member"
        nameLabel="Member"
        lines={usage.by_member.map((line) => ({ ...line, id: line.user_id ?? "" }))}
      />
      <UsageTable
        title="By API key"
        nameLabel="Key"
        lines={usage.by_key.map((line) => ({ ...line, id: line.key_id ?? "" }))}
      />
      <UsageTable
        title="By app"
        nameLabel="App"
        lines={usage.by_app.map((line) => ({ ...line, id: line.slug }))}
      />
    </div>
  );
}

function UsageTable({ title, nameLabel, lines }: { title: string; nameLabel: string; lines: UsageLine[] }) {
  return (
    <Card>
      <CardHeader title={title} />
      {lines.length === 0 ? (
        <CardBody>
          <p className="text-sm text-slate-500">No calls this month.</p>
        </CardBody>
      ) : (
        <div className="overflow-x-auto">
          <Table
            caption={title}
            columns={[
              { label: nameLabel },
              // Fixed widths: the three tables' figures line up under each other.
              { label: "Calls", className: "w-28 text-right" },
              { label: "Charged", className: "w-32 text-right" },
            ]}
          >
            {lines.map((line) => (
              <tr key={line.id}>
                <td className="px-4 py-3 text-sm text-slate-900">{line.name}</td>
                <td className="px-4 py-3 text-right text-sm tabular-nums text-slate-700">
                  {formatNumber(line.calls)}
                </td>
                <td className="px-4 py-3 text-right text-sm tabular-nums text-slate-700">
                  {formatCents(line.charged_cents)}
                </td>
              </tr>
            ))}
          </Table>
        </div>
      )}
    </Card>
  );
}
