import type { WebhookEndpoint } from "@promptmint/contracts";
import { RefreshCw } from "lucide-react";
import { useEffect, useId, useState } from "react";
import { Alert } from "../../components/ui/alert";
import { Button } from "../../components/ui/button";
import { Modal, ModalFooter } from "../../components/ui/modal";
import { SecretField } from "../../components/ui/secret-field";
import { SelectField } from "../../components/ui/select-field";
import { LoadingState } from "../../components/ui/spinner";
import { getErrorMessage } from "../../lib/api-client";
import { useRevealWebhookSecret, useRotateWebhookSecret } from "./api/webhook-secret";

const GRACE_OPTIONS = [
  { value: "0", label: "Stop signing with it now" },
  { value: "1", label: "1 hour" },
  { value: "24", label: "24 hours" },
  { value: "72", label: "3 days" },
  { value: "168", label: "7 days" },
];

/** An endpoint's signing secret, fetched when the dialog opens; and its rotation. */
export function EndpointSecretDialog({
  endpoint,
  onClose,
}: {
  endpoint: WebhookEndpoint;
  onClose: () => void;
}) {
  const reveal = useRevealWebhookSecret();
  const rotate = useRotateWebhookSecret();
  const [graceHours, setGraceHours] = useState("24");
  const [rotated, setRotated] = useState(false);
  const noteId = useId();
  const { mutate: revealNow } = reveal;

  useEffect(() => revealNow(endpoint.id), [revealNow, endpoint.id]);

  const secret = rotate.data ?? reveal.data;
  const rotateNow = () =>
    rotate.mutate({ id: endpoint.id, graceHours: Number(graceHours) }, { onSuccess: () => setRotated(true) });

  return (
    <Modal
      open
      onOpenChange={(open) => !open && onClose()}
      title="Signing secret"
      description={endpoint.url}
      busy={rotate.isPending}
      className="max-w-xl"
    >
      <div className="space-y-4">
        {reveal.isPending && <LoadingState label="Revealing the secret..." className="py-6" />}
        {reveal.isError && <Alert tone="error">{getErrorMessage(reveal.error)}</Alert>}
        {secret && (
          <div className="space-y-2">
            <p id={noteId} className="text-sm text-slate-600">
              {rotated
                ? "The new secret signs every request from now on. Update your receiver before the old one stops."
                : "Verify each request's webhook-signature header with this secret (Standard Webhooks libraries do it in one call)."}
            </p>
            <SecretField label="Signing secret" value={secret} describedBy={noteId} />
          </div>
        )}
        <section aria-labelledby={`${noteId}-rotate`} className="space-y-3 border-t border-slate-100 pt-4">
          <h3 id={`${noteId}-rotate`} className="text-sm font-semibold text-slate-900">
            Rotate the secret
          </h3>
          <p className="text-sm text-slate-600">
            A new secret replaces this one. Requests carry both signatures while the old one keeps signing.
          </p>
          <SelectField
            label="Old secret keeps signing for"
            options={GRACE_OPTIONS}
            value={graceHours}
            onChange={(event) => setGraceHours(event.target.value)}
          />
          {rotate.isError && <Alert tone="error">{getErrorMessage(rotate.error)}</Alert>}
        </section>
        <ModalFooter>
          <Button variant="secondary" onClick={onClose} disabled={rotate.isPending}>
            Done
          </Button>
          <Button busy={rotate.isPending} onClick={rotateNow}>
            {!rotate.isPending && <RefreshCw className="size-4" aria-hidden="true" />}
            {rotate.isPending ? "Rotating..." : "Rotate secret"}
          </Button>
        </ModalFooter>
      </div>
    </Modal>
  );
}
