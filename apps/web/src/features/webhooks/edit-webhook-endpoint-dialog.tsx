import type { UpdateWebhookEndpoint, WebhookEndpoint } from "@promptmint/contracts";
import { type FormEvent, useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { CancelSubmitButtons } from "../../components/ui/button";
import { Modal } from "../../components/ui/modal";
import { ApiClientError, getErrorMessage } from "../../lib/api-client";
import { useUpdateWebhookEndpoint } from "./api/update-webhook-endpoint";
import { draftOf, type EndpointErrors, EndpointFields, parseDraft } from "./endpoint-fields";

/** Changes an endpoint's URL, description and event types; deliveries from then on follow them. */
export function EditWebhookEndpointDialog({
  endpoint,
  onClose,
}: {
  endpoint: WebhookEndpoint;
  onClose: () => void;
}) {
  const update = useUpdateWebhookEndpoint();
  const [draft, setDraft] = useState(() => draftOf(endpoint));
  const [errors, setErrors] = useState<EndpointErrors>({});

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseDraft(draft);
    if ("errors" in parsed) return setErrors(parsed.errors);
    setErrors({});
    const changes = changedFields(endpoint, parsed.endpoint);
    if (Object.keys(changes).length === 0) return onClose();
    update.mutate(
      { id: endpoint.id, changes },
      {
        onSuccess: () => {
          toast.success("Endpoint saved");
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
      title="Edit endpoint"
      description="Events from now on are sent to the URL and of the types saved here."
      busy={update.isPending}
      className="max-w-2xl"
    >
      <form onSubmit={submit} noValidate className="space-y-4">
        {update.isError && Object.keys(errors).length === 0 && (
          <Alert tone="error">{getErrorMessage(update.error)}</Alert>
        )}
        <EndpointFields draft={draft} onChange={setDraft} errors={errors} />
        <CancelSubmitButtons busy={update.isPending} onCancel={onClose} label="Save" busyLabel="Saving..." />
      </form>
    </Modal>
  );
}

/** Only what the form changed. */
function changedFields(endpoint: WebhookEndpoint, edited: Required<Omit<UpdateWebhookEndpoint, "enabled">>) {
  const changes: UpdateWebhookEndpoint = {};
  if (edited.url !== endpoint.url) changes.url = edited.url;
  if (edited.description !== endpoint.description) changes.description = edited.description;
  if (JSON.stringify(edited.event_types) !== JSON.stringify(endpoint.event_types))
    changes.event_types = edited.event_types;
  return changes;
}
