import type { Experiment } from "@promptmint/contracts";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import { Badge, type BadgeTone } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { Card, CardBody, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { ErrorBox } from "../../components/ui/error-box";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { formatDateTime } from "../../lib/format";
import {
  type EndAction,
  type ExperimentSubject,
  experimentDetailOptions,
  useEndExperiment,
} from "./api/experiments";
import { Figures } from "./experiment-figures";

export const REFRESH_MS = 15_000;

export const OUTCOME: Record<string, { label: string; tone: BadgeTone }> = {
  promoted: { label: "Promoted", tone: "green" },
  rolled_back: { label: "Rolled back", tone: "red" },
  stopped: { label: "Stopped", tone: "gray" },
};

export function ExperimentView({
  subject,
  experiment,
  live = false,
  onClose,
}: {
  subject: ExperimentSubject;
  experiment: Experiment;
  live?: boolean;
  onClose?: () => void;
}) {
  const detail = useQuery({
    ...experimentDetailOptions(subject, experiment.id),
    refetchInterval: live ? REFRESH_MS : false,
  });
  const end = useEndExperiment(subject);
  const [confirming, setConfirming] = useState<EndAction | null>(null);
  const split = experiment.arms.map((arm) => `v${arm.version} ${arm.percent}%`).join(" / ");
  // mutateAsync, not mutate's callbacks: an ended experiment's card unmounts as the list refreshes,
  // and the confirmation must still be said.
  const run = (action: EndAction) =>
    end.mutateAsync({ experimentId: experiment.id, action }).then(
      () => {
        setConfirming(null);
        toast.success(
          action.kind === "promote"
            ? `v${action.version} is now production`
            : action.kind === "rollback"
              ? `Production is back on v${experiment.control_version}`
              : "Experiment stopped",
        );
      },
      (error: unknown) => {
        setConfirming(null);
        toast.error(getErrorMessage(error));
      },
    );

  return (
    <Card>
      <CardHeader
        title={
          <span className="flex flex-wrap items-center gap-2">
            {live ? "Running experiment" : "Past experiment"}
            {live ? (
              <Badge tone="blue">Running</Badge>
            ) : experiment.outcome ? (
              <Badge tone={OUTCOME[experiment.outcome]?.tone}>{OUTCOME[experiment.outcome]?.label}</Badge>
            ) : null}
          </span>
        }
        description={`${split} · control v${experiment.control_version} · started ${formatDateTime(experiment.started_at)}${experiment.started_by_name ? ` by ${experiment.started_by_name}` : ""}`}
        actions={
          live ? (
            <>
              <Button variant="secondary" size="sm" onClick={() => setConfirming({ kind: "stop" })}>
                Stop
              </Button>
              <Button variant="danger" size="sm" onClick={() => setConfirming({ kind: "rollback" })}>
                Roll back
              </Button>
            </>
          ) : onClose ? (
            <Button variant="ghost" size="sm" onClick={onClose}>
              Close
            </Button>
          ) : null
        }
      />
      <CardBody className="space-y-6">
        {!live && experiment.end_reason && <p className="text-sm text-slate-600">{experiment.end_reason}</p>}
        {detail.isError ? (
          <ErrorBox message={getErrorMessage(detail.error)} />
        ) : !detail.data ? (
          <LoadingState label="Loading figures..." />
        ) : (
          <Figures
            detail={detail.data}
            live={live}
            onPromote={(version) => setConfirming({ kind: "promote", version })}
          />
        )}
      </CardBody>
      <ConfirmDialog
        open={confirming !== null}
        onOpenChange={(open) => !open && setConfirming(null)}
        title={
          confirming?.kind === "promote"
            ? `Promote v${confirming.version}?`
            : confirming?.kind === "rollback"
              ? "Roll back this experiment?"
              : "Stop this experiment?"
        }
        description={
          confirming?.kind === "promote"
            ? `The experiment ends and every caller gets v${confirming.version} (production moves, audited).`
            : confirming?.kind === "rollback"
              ? `The experiment ends and production returns to v${experiment.control_version}, where it pointed when the experiment started.`
              : "The experiment ends; production stays where it points."
        }
        confirmLabel={
          confirming?.kind === "promote" ? "Promote" : confirming?.kind === "rollback" ? "Roll back" : "Stop"
        }
        busy={end.isPending}
        onConfirm={() => confirming && run(confirming)}
      />
    </Card>
  );
}
