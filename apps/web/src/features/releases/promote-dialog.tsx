import type { PromptVersion } from "@promptmint/contracts";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { LinkedMessage } from "../../components/ui/linked-message";
import { TextareaField } from "../../components/ui/textarea-field";
import { getErrorMessage } from "../../lib/api-client";
import { useMoveLabel } from "./api/labels";
import { RollOutGradually } from "./rollout-dialog";

/** The model settings a version carries, in the order the editor shows them. */
export const VERSION_SETTINGS = [
  ["model", "Model"],
  ["max_tokens", "Max tokens"],
  ["temperature", "Temperature"],
  ["top_p", "Top P"],
  ["frequency_penalty", "Frequency penalty"],
  ["presence_penalty", "Presence penalty"],
] as const satisfies readonly (readonly [keyof PromptVersion, string])[];

/** The settings that differ between two versions, e.g. `Model gpt-4o → claude-3-haiku`. */
export function settingChanges(from: PromptVersion, to: PromptVersion): string[] {
  return VERSION_SETTINGS.filter(([key]) => from[key] !== to[key]).map(
    ([key, label]) => `${label} ${String(from[key])} → ${String(to[key])}`,
  );
}

/**
 * What moving `production` to `target` means for callers, said before it happens: who gets it,
 * from which version, what else changes with it, and who keeps what they pinned.
 */
export function PromotionSummary({
  target,
  production,
}: {
  target: PromptVersion;
  production: PromptVersion | undefined;
}) {
  const changes = production ? settingChanges(production, target) : [];
  return (
    <>
      Callers who do not pin a version get <strong>v{target.version}</strong> on their next call
      {production ? (
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
 * given (kept in the label history). The server's price guard may refuse it; its sentence is
 * shown here and nothing moves.
 */
export function PromoteDialog({
  promptId,
  target,
  production,
  rollback = false,
  open,
  onOpenChange,
}: {
  promptId: string;
  target: PromptVersion;
  production: PromptVersion | undefined;
  /** Moving production back to the version it had before: worded as a rollback. */
  rollback?: boolean;
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const move = useMoveLabel(promptId);
  const [reason, setReason] = useState("");
  const close = (next: boolean) => {
    if (!next) {
      move.reset();
      setReason("");
    }
    onOpenChange(next);
  };
  const label = rollback ? `Roll back to v${target.version}` : `Promote v${target.version}`;

  return (
    <ConfirmDialog
      open={open}
      onOpenChange={close}
      title={rollback ? `Roll back to v${target.version}?` : `Promote v${target.version} to production?`}
      description={<PromotionSummary target={target} production={production} />}
      confirmLabel={label}
      busyLabel={rollback ? "Rolling back..." : "Promoting..."}
      confirmVariant={rollback ? "danger" : "primary"}
      busy={move.isPending}
      onConfirm={() =>
        move.mutate(
          { name: "production", version: target.version, reason: reason || (rollback ? "Rollback" : "") },
          {
            onSuccess: () => {
              toast.success(
                rollback ? `Rolled back to v${target.version}` : `v${target.version} is in production`,
              );
              close(false);
            },
          },
        )
      }
    >
      <div className="mt-4 space-y-3">
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
        {!rollback && (
          <RollOutGradually
            subject={{ kind: "prompt", id: promptId, stale: [["prompts", promptId]] }}
            target={target.version}
            production={production?.version}
            onStarted={() => close(false)}
          />
        )}
      </div>
    </ConfirmDialog>
  );
}
