import type { LabelMove } from "@promptmint/contracts";
import { History } from "lucide-react";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { ErrorBox } from "../../components/ui/error-box";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { formatDateTime, formatRelativeTime } from "../../lib/format";
import { LabelChip } from "./label-chip";

export function moveText(move: LabelMove): string {
  if (move.from_version === null) return `set on v${move.to_version}`;
  if (move.to_version === null) return `removed from v${move.from_version}`;
  return `v${move.from_version} → v${move.to_version}`;
}

/** Every move of a label (releases, rollbacks, the creator's own labels): who, from → to, why, when. */
export function LabelHistory({
  moves,
  error,
  loading,
}: {
  moves: LabelMove[] | undefined;
  error: Error | null;
  loading: boolean;
}) {
  return (
    <Card>
      <CardHeader title="Label history" description="Releases, rollbacks and label changes, newest first." />
      {loading ? (
        <LoadingState label="Loading label history..." className="py-8" />
      ) : error ? (
        <CardBody>
          <ErrorBox message={getErrorMessage(error)} />
        </CardBody>
      ) : !moves || moves.length === 0 ? (
        <EmptyState
          framed={false}
          icon={History}
          title="No label moves yet"
          description="Promoting a version, rolling back or labelling one is recorded here."
        />
      ) : (
        <ol className="divide-y divide-slate-100" aria-label="Label moves">
          {moves.map((move) => (
            <li key={move.id} className="grid gap-1 px-5 py-3 text-sm sm:grid-cols-[12rem_1fr_auto] sm:gap-4">
              <p className="flex flex-wrap items-center gap-2">
                <LabelChip name={move.name} />
                <span className="font-mono text-xs text-slate-700">{moveText(move)}</span>
              </p>
              <p className="min-w-0 break-words text-slate-700">
                {move.reason || <span className="text-slate-400">No reason given</span>}
              </p>
              <p className="text-xs text-slate-500 sm:text-right">
                {move.actor_name ?? "Promptmint"} ·{" "}
                <time dateTime={move.created_at} title={formatDateTime(move.created_at)}>
                  {formatRelativeTime(move.created_at)}
                </time>
              </p>
            </li>
          ))}
        </ol>
      )}
    </Card>
  );
}
