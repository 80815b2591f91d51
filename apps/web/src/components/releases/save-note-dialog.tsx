import { useState } from "react";
import { ConfirmDialog } from "../ui/confirm-dialog";
import { TextareaField } from "../ui/textarea-field";

/** The longest note a version keeps (the API's `changelog`, at most 500 characters). */
export const CHANGE_NOTE_MAX = 500;

/**
 * Saving from an editor asks what changed (docs/decisions/079): an optional note, at most 500
 * characters, kept as the new version's changelog and shown in the versions list (empty reads
 * "No note"). A save that changes only the app's own settings makes no version; the note is then
 * unused.
 */
export function SaveNoteDialog({
  open,
  onOpenChange,
  live,
  onSave,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /** A live app's save does not reach callers until promoted; a draft's goes to production. */
  live: boolean;
  onSave: (note: string) => void;
}) {
  const [note, setNote] = useState("");
  const close = (next: boolean) => {
    if (!next) setNote("");
    onOpenChange(next);
  };
  return (
    <ConfirmDialog
      open={open}
      onOpenChange={close}
      title="Save a new version"
      description={
        live
          ? "A change to what calls run is saved as a new version. Callers keep getting production until you promote it."
          : "A change to what calls run is saved as a new version and, as the app is a draft, goes to production."
      }
      confirmLabel="Save version"
      confirmVariant="primary"
      onConfirm={() => {
        onSave(note.trim());
        close(false);
      }}
    >
      <div className="mt-4">
        <TextareaField
          label="What changed? (optional)"
          rows={3}
          maxLength={CHANGE_NOTE_MAX}
          placeholder="e.g. Shorter answers; switched to a cheaper model"
          hint={`Shown beside the version in its history, with your name. ${note.length}/${CHANGE_NOTE_MAX}`}
          value={note}
          onChange={(event) => setNote(event.target.value)}
        />
      </div>
    </ConfirmDialog>
  );
}
