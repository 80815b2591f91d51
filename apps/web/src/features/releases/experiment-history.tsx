import type { Experiment } from "@promptmint/contracts";
import { FlaskConical } from "lucide-react";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { formatDateTime } from "../../lib/format";
import { OUTCOME } from "./experiment-view";

export function History({
  experiments,
  onView,
  viewing,
}: {
  experiments: Experiment[];
  onView: (id: string) => void;
  viewing: string | null;
}) {
  return (
    <Card>
      <CardHeader
        title="Past experiments"
        description="Every end is audited; a promotion or rollback moved production."
      />
      {experiments.length === 0 ? (
        <EmptyState
          icon={FlaskConical}
          framed={false}
          title="No past experiments"
          description="Ended experiments appear here with their outcome."
        />
      ) : (
        <ul className="divide-y divide-slate-100">
          {experiments.map((e) => (
            <li
              key={e.id}
              className="flex flex-col gap-2 px-5 py-4 sm:flex-row sm:items-center sm:justify-between"
            >
              <div className="min-w-0">
                <div className="flex flex-wrap items-center gap-2 text-sm font-medium text-slate-900">
                  {e.arms.map((arm) => `v${arm.version} ${arm.percent}%`).join(" / ")}
                  {e.outcome && <Badge tone={OUTCOME[e.outcome]?.tone}>{OUTCOME[e.outcome]?.label}</Badge>}
                  {e.winner_version !== null && <Badge tone="brand">winner v{e.winner_version}</Badge>}
                </div>
                <p className="mt-1 text-sm text-slate-500">
                  {formatDateTime(e.started_at)} – {formatDateTime(e.ended_at)}
                  {e.end_reason ? ` · ${e.end_reason}` : ""}
                </p>
              </div>
              <Button size="sm" variant="secondary" disabled={viewing === e.id} onClick={() => onView(e.id)}>
                View figures
              </Button>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
