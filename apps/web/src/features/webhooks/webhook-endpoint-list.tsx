import type { WebhookDelivery, WebhookEndpoint } from "@promptmint/contracts";
import { Webhook } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Alert } from "../../components/ui/alert";
import { Card, CardHeader } from "../../components/ui/card";
import { ConfirmDialog } from "../../components/ui/confirm-dialog";
import { EmptyState } from "../../components/ui/empty-state";
import { QueryStates } from "../../components/ui/query-states";
import { getErrorMessage } from "../../lib/api-client";
import { useDeleteWebhookEndpoint } from "./api/delete-webhook-endpoint";
import { useWebhookEndpoints } from "./api/list-webhook-endpoints";
import { EditWebhookEndpointDialog } from "./edit-webhook-endpoint-dialog";
import { EndpointSecretDialog } from "./endpoint-secret-dialog";
import { WebhookEndpointItem } from "./webhook-endpoint-item";

/** The caller's endpoints, with the dialogs their actions open. */
export function WebhookEndpointList({
  selectedId,
  onSelect,
  onTestSent,
}: {
  selectedId: string | undefined;
  onSelect: (endpointId: string) => void;
  onTestSent: (delivery: WebhookDelivery) => void;
}) {
  const endpoints = useWebhookEndpoints();
  const remove = useDeleteWebhookEndpoint();
  const [editing, setEditing] = useState<WebhookEndpoint | null>(null);
  const [deleting, setDeleting] = useState<WebhookEndpoint | null>(null);
  const [showingSecret, setShowingSecret] = useState<WebhookEndpoint | null>(null);

  const confirmDelete = () => {
    if (!deleting) return;
    remove.mutate(deleting.id, {
      onSuccess: () => {
        toast.success(`Deleted ${deleting.url}`);
        setDeleting(null);
      },
    });
  };

  return (
    <QueryStates query={endpoints} loading="Loading webhook endpoints...">
      {(list) =>
        list.length === 0 ? (
          <EmptyState
            icon={Webhook}
            title="No webhook endpoints"
            description="Add an endpoint to hear about charges, payouts, subscriptions and releases as they happen."
          />
        ) : (
          <Card className="overflow-hidden">
            <CardHeader title="Endpoints" />
            <ul className="divide-y divide-slate-100">
              {list.map((endpoint) => (
                <WebhookEndpointItem
                  key={endpoint.id}
                  endpoint={endpoint}
                  selected={endpoint.id === selectedId}
                  actions={{
                    onSelect: () => onSelect(endpoint.id),
                    onEdit: () => setEditing(endpoint),
                    onDelete: () => {
                      remove.reset();
                      setDeleting(endpoint);
                    },
                    onSecret: () => setShowingSecret(endpoint),
                    onTestSent,
                  }}
                />
              ))}
            </ul>
            {editing && <EditWebhookEndpointDialog endpoint={editing} onClose={() => setEditing(null)} />}
            {showingSecret && (
              <EndpointSecretDialog endpoint={showingSecret} onClose={() => setShowingSecret(null)} />
            )}
            <ConfirmDialog
              open={deleting !== null}
              onOpenChange={(open) => !open && setDeleting(null)}
              title="Delete endpoint"
              description={`Delete ${deleting?.url ?? ""}? No more events are sent to it, and its delivery log is deleted. This cannot be undone.`}
              confirmLabel="Delete"
              busyLabel="Deleting..."
              busy={remove.isPending}
              onConfirm={confirmDelete}
            >
              {remove.isError && (
                <Alert tone="error" className="mt-4">
                  {getErrorMessage(remove.error)}
                </Alert>
              )}
            </ConfirmDialog>
          </Card>
        )
      }
    </QueryStates>
  );
}
