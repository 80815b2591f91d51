import type { Experiment, Rollout } from "@promptmint/contracts";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { LinkedMessage } from "../../components/ui/linked-message";
import { getErrorMessage } from "../../lib/api-client";
import { formatDateTime, formatDuration, formatMicros, formatNumber } from "../../lib/format";
import { type ExperimentSubject, useExperiments } from "./api/experiments";
import { useAdvanceRollout, useStopRollout } from "./api/rollouts";

const ACTION_WORDS: Record<Rollout["history"][number]["action"], string> = {
  start: "Started",
  advance: "Advanced",
  hold: "Held",
  rollback: "Rolled back",
  complete: "Completed",
  stop: "Stopped",
};

/** The bounds a rollout is judged by, in words ("error rate ≤ 5%, p95 ≤ 2,000 ms, …"). */
export function boundsText(bounds: Rollout["bounds"]): string {
  const parts: string[] = [];
  if (bounds.max_error_rate !== undefined)
    parts.push(`error rate ≤ ${+(bounds.max_error_rate * 100).toFixed(2)}%`);
  if (bounds.max_latency_p95_ms !== undefined)
    parts.push(`p95 latency ≤ ${formatDuration(bounds.max_latency_p95_ms)}`);
  if (bounds.min_margin_micros !== undefined)
    parts.push(`margin per call ≥ ${formatMicros(bounds.min_margin_micros)}`);
  if (bounds.min_online_score !== undefined) parts.push(`online eval score ≥ ${bounds.min_online_score}`);
  parts.push(`judged after ${formatNumber(bounds.min_calls)} calls per step`);
  return parts.join(", ");
}

/**
 * A running rollout's card (docs/decisions/077): the candidate's share now, the steps, when the
 * next may come, what it is judged by, its history, and Stop. Nothing when none runs.
 */
export function RolloutStatus({ subject }: { subject: ExperimentSubject }) {
  const experiments = useExperiments(subject);
  const running = experiments.data?.running;
  if (!running?.rollout) return null;
  return <RolloutCard subject={subject} experiment={running} rollout={running.rollout} />;
}

export function RolloutCard({
  subject,
  experiment,
  rollout,
}: {
  subject: ExperimentSubject;
  experiment: Experiment;
  rollout: Rollout;
}) {
  const stop = useStopRollout(subject);
  const advance = useAdvanceRollout(subject);
  const [confirming, setConfirming] = useState(false);
  const running = rollout.status === "running";
  const headingId = `rollout-${experiment.id}`;
  return (
    <Card role="region" aria-labelledby={headingId}>
      <CardHeader
        title={<span id={headingId}>Rolling out v{rollout.to_version}</span>}
        description={`v${rollout.to_version} gets ${rollout.percent}% of callers who pin no version; v${rollout.from_version} the other ${100 - rollout.percent}%.`}
        actions={
          running ? (
            <div className="flex flex-wrap gap-2">
              <Button
                variant="secondary"
                size="sm"
                disabled={advance.isPending}
                onClick={() =>
                  advance.mutate(
                    {},
                    {
                      onSuccess: (experiment) => {
                        const now = experiment.rollout;
                        if (now?.status === "running")
                          toast.success(`Advanced: v${now.to_version} gets ${now.percent}%`);
                        else if (now?.status === "completed")
                          toast.success(`v${now.to_version} is in production`);
                        else toast.error(experiment.end_reason || "The rollout was rolled back");
                      },
                    },
                  )
                }
              >
                {advance.isPending ? "Advancing..." : "Advance now"}
              </Button>
              <Button variant="danger" size="sm" onClick={() => setConfirming(true)}>
                Stop rollout
              </Button>
            </div>
          ) : (
            <Badge tone="gray">{rollout.status.replace("_", " ")}</Badge>
          )
        }
      />
      <CardBody className="space-y-4 text-sm text-slate-700">
        {advance.isError && <Alert tone="warning">{getErrorMessage(advance.error)}</Alert>}
        <div>
          <div
            role="progressbar"
            aria-label={`v${rollout.to_version}'s share of callers`}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={rollout.percent}
            className="h-2 w-full overflow-hidden rounded-full bg-slate-200"
          >
            <div className="h-full bg-brand-600" style={{ width: `${rollout.percent}%` }} />
          </div>
          <ol className="mt-2 flex flex-wrap gap-2" aria-label="Steps">
            {rollout.steps.map((step, i) => (
              <li key={step}>
                <Badge tone={i < rollout.step_index ? "green" : i === rollout.step_index ? "brand" : "gray"}>
                  {step}%{i === rollout.step_index ? " (now)" : ""}
                </Badge>
              </li>
            ))}
          </ol>
        </div>
        <dl className="grid grid-cols-1 gap-2 sm:grid-cols-2">
          <div>
            <dt className="text-slate-500">Next step</dt>
            <dd>
              {rollout.next_step_at
                ? `${formatDateTime(rollout.next_step_at)} at the earliest (${rollout.step_minutes} min per step)`
                : "None"}
            </dd>
          </div>
          <div>
            <dt className="text-slate-500">Rolls back by itself unless</dt>
            <dd>{boundsText(rollout.bounds)}</dd>
          </div>
        </dl>
        <section aria-label="Rollout history">
          <h3 className="font-medium text-slate-900">History</h3>
          <ol className="mt-1 space-y-1">
            {[...rollout.history].reverse().map((entry) => (
              <li key={`${entry.at}-${entry.action}`} className="break-words">
                <span className="font-medium">{ACTION_WORDS[entry.action]}</span> at {entry.percent}% ·{" "}
                <time dateTime={entry.at}>{formatDateTime(entry.at)}</time>: {entry.reason}
              </li>
            ))}
          </ol>
        </section>
      </CardBody>
      <ConfirmDialog
        open={confirming}
        onOpenChange={(open) => {
          if (!open) stop.reset();
          setConfirming(open);
        }}
        title="Stop this rollout?"
        description={
          <>
            Every caller who pins no version goes back to <strong>v{rollout.from_version}</strong> on their
            next call, and production stays v{rollout.from_version}.
          </>
        }
        confirmLabel="Stop rollout"
        busyLabel="Stopping..."
        busy={stop.isPending}
        onConfirm={() =>
          stop.mutate(
            {},
            {
              onSuccess: () => {
                toast.success(`Rollout stopped: callers are back on v${rollout.from_version}`);
                setConfirming(false);
              },
            },
          )
        }
      >
        {stop.isError && (
          <Alert tone="error" className="mt-4">
            <LinkedMessage text={getErrorMessage(stop.error)} />
          </Alert>
        )}
      </ConfirmDialog>
    </Card>
  );
}
