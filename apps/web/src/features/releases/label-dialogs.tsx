import { NewLabelNameSchema } from "@promptmint/contracts";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { TextField } from "../../components/ui/text-field";
import { getErrorMessage } from "../../lib/api-client";
import type { ReleaseAppId } from "../../lib/releases/app-ref";
import { useMoveLabel, useRemoveLabel } from "../../lib/releases/labels";
import type { AppVersion } from "../../lib/releases/versions";
import { BUILT_IN_LABELS } from "./label-chip";

export function AddLabelDialog({
  app,
  version,
  labels,
  onClose,
}: {
  app: ReleaseAppId;
  version: AppVersion;
  labels: { name: string; version: number }[];
  onClose: () => void;
}) {
  const move = useMoveLabel(app);
  const [name, setName] = useState(version.labels.includes("staging") ? "" : "staging");
  const [problem, setProblem] = useState<string>();
  const existing = labels.find((label) => label.name === name);
  const hint =
    existing && existing.version !== version.version
      ? `Moves ${name} from v${existing.version} to v${version.version}.`
      : "Lowercase letters, digits and dashes, e.g. staging or canary. Callers pin it with Promptmint-Version.";

  const submit = () => {
    const parsed = NewLabelNameSchema.safeParse(name);
    if (!parsed.success)
      return setProblem(
        /^v-?\d+$/.test(name)
          ? "A label may not look like a version (v12): callers pinning it would get that version"
          : "Use lowercase letters, digits and dashes, starting with a letter (at most 32)",
      );
    if (BUILT_IN_LABELS.has(name)) {
      return setProblem(
        name === "production" ? "Use Promote to production to move production" : "latest follows every save",
      );
    }
    move.mutate(
      { name, version: version.version },
      {
        onSuccess: () => {
          toast.success(`${name} now points at v${version.version}`);
          onClose();
        },
      },
    );
  };

  return (
    <ConfirmDialog
      open
      onOpenChange={(open) => !open && onClose()}
      title={`Label v${version.version}`}
      description="A label names a version callers can pin, such as staging for your own tests."
      confirmLabel="Set label"
      busyLabel="Saving..."
      confirmVariant="primary"
      busy={move.isPending}
      onConfirm={submit}
    >
      <div className="mt-4 space-y-3">
        <TextField
          label="Label name"
          value={name}
          maxLength={32}
          autoComplete="off"
          spellCheck={false}
          error={problem}
          hint={hint}
          onChange={(event) => {
            setName(event.target.value.toLowerCase());
            setProblem(undefined);
          }}
        />
        {move.isError && <Alert tone="error">{getErrorMessage(move.error)}</Alert>}
      </div>
    </ConfirmDialog>
  );
}

export function RemoveLabelDialog({
  app,
  name,
  version,
  onClose,
}: {
  app: ReleaseAppId;
  name: string;
  version: number;
  onClose: () => void;
}) {
  const remove = useRemoveLabel(app);
  return (
    <ConfirmDialog
      open
      onOpenChange={(open) => !open && onClose()}
      title={`Remove the label ${name}?`}
      description={`It points at v${version}. Callers pinning ${name} will be refused until you set it again.`}
      confirmLabel="Remove label"
      busyLabel="Removing..."
      busy={remove.isPending}
      onConfirm={() =>
        remove.mutate(name, {
          onSuccess: () => {
            toast.success(`Label ${name} removed`);
            onClose();
          },
        })
      }
    >
      {remove.isError && (
        <Alert tone="error" className="mt-4">
          {getErrorMessage(remove.error)}
        </Alert>
      )}
    </ConfirmDialog>
  );
}
