import { useQueryClient } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { useRef, useState } from "react";
import { toast } from "sonner";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import type { ReleaseApp } from "../../lib/releases/app-ref";
import { useMoveLabel } from "../../lib/releases/labels";
import {
  experimentRunningText,
  type ServingExperiment,
  servingQueryKey,
  splitText,
} from "../../lib/releases/serving";
import { settingChanges } from "../../lib/releases/version-changes";
import type { AppVersion } from "../../lib/releases/versions";
import { Alert } from "../ui/alert";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { LinkedMessage } from "../ui/linked-message";
import { TextareaField } from "../ui/textarea-field";
import { useServingTruth } from "./serving-status";

/** The server's refusal to move production while an experiment runs (docs/decisions/075). */
export function isExperimentRunningError(error: unknown): error is ApiClientError {
  return error instanceof ApiClientError && error.status === 409 && error.code === "experiment_running";
}

/**
 * What moving `production` to `target` means for callers, said before it happens: who gets it,
 * from which version, what else changes with it, and who keeps what they pinned.
 */
export function PromotionSummary({
  target,
  production,
  experiment,
}: {
  target: AppVersion;
  production: AppVersion | undefined;
  experiment?: ServingExperiment | null;
}) {
  const changes = production ? settingChanges(production, target) : [];
  return (
    <>
      {experiment ? "Every caller who does not pin a version" : "Callers who do not pin a version"} get{" "}
      <strong>v{target.version}</strong> on their next call
      {experiment ? (
        <> instead of the experiment's split ({splitText(experiment, " / ")})</>
      ) : production ? (
        <>
          {" "}
          instead of <strong>v{production.version}</strong>
        </>
      ) : null}
      . Callers pinning a version or label (the <code className="font-mono text-xs">Promptmint-Version</code>{" "}
      header) keep theirs; the price per call does not change.
      {changes.length > 0 && <span className="mt-2 block">Also changes: {changes.join("; ")}.</span>}
    </>
  );
}

/**
 * The confirmation of a release or a rollback: `production` moves to `target` with the reason
 * given (kept in the label history). While an experiment runs (read from the serving state, or
 * learnt from the server's 409 `experiment_running`), it says so and asks whether to end it: the
 * confirm then ends it and moves production in one step (`end_experiment: true`). The server's
 * price guard may refuse a move; its sentence is shown here and nothing moves.
 */
export function PromoteDialog({
  app,
  target,
  production,
  rollback = false,
  open,
  onOpenChange,
  alternative,
}: {
  app: ReleaseApp;
  target: AppVersion;
  production: AppVersion | undefined;
  /** Moving production back to the version it had before: worded as a rollback. */
  rollback?: boolean;
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /**
   * Another way to release the target, offered under the promotion while no experiment runs (the
   * Versions page's guarded rollout, decision 077); given the dialog's close.
   */
  alternative?: (close: () => void) => ReactNode;
}) {
  const queryClient = useQueryClient();
  const move = useMoveLabel(app);
  const truth = useServingTruth(app, production?.version ?? null);
  const [reason, setReason] = useState("");
  const refused = isExperimentRunningError(move.error);
  const experiment = truth.experiment;
  // The server knows best: a 409 means an experiment runs even if the page had not seen it yet.
  const running = experiment !== null || refused;
  // Offered while no experiment runs; once offered it stays for the dialog's life: starting a
  // rollout makes one run, and unmounting the rollout form then would drop its own success step.
  const offered = useRef(false);
  if (!running) offered.current = true;
  const offersAlternative = offered.current;
  const close = (next: boolean) => {
    if (!next) {
      move.reset();
      setReason("");
    }
    onOpenChange(next);
  };
  const verb = rollback ? `Roll back to v${target.version}` : `Promote v${target.version}`;
  const label = running ? `End experiment and ${rollback ? "roll back" : "promote"}` : verb;

  const confirm = () =>
    move.mutate(
      {
        name: "production",
        version: target.version,
        reason: reason || (rollback ? "Rollback" : ""),
        ...(running ? { end_experiment: true } : {}),
      },
      {
        onSuccess: () => {
          toast.success(
            `${running ? "Experiment ended. " : ""}${rollback ? `Rolled back to v${target.version}` : `v${target.version} is in production`}`,
          );
          close(false);
        },
        onError: (error) => {
          if (isExperimentRunningError(error)) {
            void queryClient.invalidateQueries({ queryKey: servingQueryKey(app) });
          }
        },
      },
    );

  return (
    <ConfirmDialog
      open={open}
      onOpenChange={close}
      title={rollback ? `Roll back to v${target.version}?` : `Promote v${target.version} to production?`}
      description={<PromotionSummary target={target} production={production} experiment={experiment} />}
      confirmLabel={label}
      busyLabel={rollback ? "Rolling back..." : "Promoting..."}
      confirmVariant={rollback || running ? "danger" : "primary"}
      busy={move.isPending}
      onConfirm={confirm}
    >
      <div className="mt-4 space-y-3">
        {running && (
          <Alert tone="warning" title="End the running experiment?" role="note">
            <p data-testid="end-experiment-question">
              {experiment
                ? `${experimentRunningText(experiment)}. `
                : "An experiment is running: callers are split. "}
              {experiment?.rollout
                ? `Its rollout of v${experiment.rollout.to_version} (now ${experiment.rollout.percent}%) stops. `
                : ""}
              Moving production ends it (recorded as stopped, with this move as the reason) and every caller
              who pins nothing gets v{target.version}. To keep it running, cancel.
            </p>
          </Alert>
        )}
        <TextareaField
          label="Reason (optional)"
          rows={2}
          maxLength={500}
          placeholder={
            rollback ? "Why roll back? e.g. more refusals since v3" : "What changes, e.g. shorter answers"
          }
          hint="Kept in the label history with your name."
          value={reason}
          onChange={(event) => setReason(event.target.value)}
        />
        {move.isError && (
          <Alert tone="error">
            <LinkedMessage text={getErrorMessage(move.error)} />
          </Alert>
        )}
        {!rollback && offersAlternative && alternative?.(() => close(false))}
      </div>
    </ConfirmDialog>
  );
}
