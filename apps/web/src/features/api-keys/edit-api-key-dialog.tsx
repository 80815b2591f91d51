import type { ApiKey, UpdateApiKey } from "@promptmint/contracts";
import { type FormEvent, useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { CancelSubmitButtons } from "../../components/ui/button";
import { Modal } from "../../components/ui/modal";
import { TextField } from "../../components/ui/text-field";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { useUpdateApiKey } from "./api/update-api-key";
import { draftOf, type KeyOptionErrors, KeyOptionsFields, parseDraft } from "./key-options-fields";

/** Changes a key's name and options; they apply to the key's next call. */
export function EditApiKeyDialog({ apiKey, onClose }: { apiKey: ApiKey; onClose: () => void }) {
  const update = useUpdateApiKey();
  const [name, setName] = useState(apiKey.name);
  const [draft, setDraft] = useState(() => draftOf(apiKey));
  const [errors, setErrors] = useState<KeyOptionErrors & { name?: string }>({});

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (name.trim() === "") return setErrors({ name: "Key name is required" });
    const parsed = parseDraft(draft);
    if ("errors" in parsed) return setErrors(parsed.errors);
    setErrors({});
    const changes = changedFields(apiKey, { name: name.trim(), ...parsed.options });
    if (Object.keys(changes).length === 0) return onClose();
    update.mutate(
      { id: apiKey.id, changes },
      {
        onSuccess: () => {
          toast.success(`Saved ${name.trim()}`);
          onClose();
        },
        onError: (failure) => {
          if (failure instanceof ApiClientError && failure.fields) setErrors(failure.fields);
        },
      },
    );
  };

  return (
    <Modal
      open
      onOpenChange={(open) => !open && onClose()}
      title={`Edit ${apiKey.name}`}
      description="Changes apply to the key's next call."
      busy={update.isPending}
      className="max-w-2xl"
    >
      <form onSubmit={submit} noValidate className="space-y-4">
        {update.isError && Object.keys(errors).length === 0 && (
          <Alert tone="error">{getErrorMessage(update.error)}</Alert>
        )}
        <TextField
          label="Key Name"
          maxLength={100}
          autoComplete="off"
          value={name}
          error={errors.name}
          onChange={(event) => setName(event.target.value)}
        />
        <KeyOptionsFields draft={draft} onChange={setDraft} errors={errors} />
        <CancelSubmitButtons busy={update.isPending} onCancel={onClose} label="Save" busyLabel="Saving..." />
      </form>
    </Modal>
  );
}

/**
 * Only what the form changed, so that saving a key whose expiry has passed (which the API would
 * refuse as a new expiry) can still rename it or change its limit.
 */
function changedFields(apiKey: ApiKey, edited: UpdateApiKey): UpdateApiKey {
  const before = parseDraft(draftOf(apiKey));
  const original: UpdateApiKey = { name: apiKey.name, ...("options" in before ? before.options : {}) };
  return Object.fromEntries(
    Object.entries(edited).filter(
      ([field, value]) => JSON.stringify(value) !== JSON.stringify(original[field as keyof UpdateApiKey]),
    ),
  );
}
