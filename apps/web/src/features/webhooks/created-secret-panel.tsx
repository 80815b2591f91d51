import type { CreatedWebhookEndpoint } from "@promptmint/contracts";
import { ShieldAlert } from "lucide-react";
import { Button } from "../../components/ui/button";
import { SecretField } from "../../components/ui/secret-field";

/** A new endpoint's signing secret, right after it was added. */
export function CreatedSecretPanel({
  endpoint,
  onDismiss,
}: {
  endpoint: CreatedWebhookEndpoint;
  onDismiss: () => void;
}) {
  return (
    <section
      aria-labelledby="created-endpoint-heading"
      className="rounded-xl border-2 border-green-300 bg-green-50 p-5 shadow-sm"
    >
      <div className="flex items-start gap-3">
        <ShieldAlert className="mt-0.5 size-5 shrink-0 text-green-700" aria-hidden="true" />
        <div className="min-w-0 flex-1 space-y-3">
          <div>
            <h2 id="created-endpoint-heading" className="font-semibold break-all text-green-900">
              Endpoint {endpoint.url} added
            </h2>
            <p id="created-endpoint-note" className="mt-1 text-sm text-green-800">
              Your receiver verifies each request's <code>webhook-signature</code> with this signing secret.
              Copy it now; later, reveal it from the endpoint's Secret button.
            </p>
          </div>
          <SecretField label="Signing secret" value={endpoint.secret} describedBy="created-endpoint-note" />
          <Button variant="ghost" size="sm" onClick={onDismiss}>
            I've saved it
          </Button>
        </div>
      </div>
    </section>
  );
}
