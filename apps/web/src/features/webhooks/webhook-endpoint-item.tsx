import type { WebhookDelivery, WebhookEndpoint } from "@promptmint/contracts";
import { KeyRound, ListTree, Power, Send, Trash2 } from "lucide-react";
import { useId } from "react";
import { toast } from "sonner";
import { Badge } from "../../components/ui/badge";
import { Button, EditButton } from "../../components/ui/button";
import { getErrorMessage } from "../../lib/api-client";
import { cn } from "../../lib/cn";
import { formatDateTime } from "../../lib/format";
import { useSendTestEvent } from "./api/send-test-event";
import { useUpdateWebhookEndpoint } from "./api/update-webhook-endpoint";
import { ALL_EVENTS } from "./endpoint-fields";

export interface EndpointActions {
  onSelect: () => void;
  onEdit: () => void;
  onDelete: () => void;
  onSecret: () => void;
  onTestSent: (delivery: WebhookDelivery) => void;
}

/** One endpoint: where it points, what it hears, whether it works, and what can be done to it. */
export function WebhookEndpointItem({
  endpoint,
  selected,
  actions,
}: {
  endpoint: WebhookEndpoint;
  selected: boolean;
  actions: EndpointActions;
}) {
  const update = useUpdateWebhookEndpoint();
  const test = useSendTestEvent();
  const name = endpoint.description || endpoint.url;
  // Each action is described by its endpoint's URL: several endpoints have the same buttons.
  const urlId = useId();

  const toggle = () =>
    update.mutate(
      { id: endpoint.id, changes: { enabled: !endpoint.enabled } },
      {
        onSuccess: () => toast.success(`${endpoint.enabled ? "Disabled" : "Enabled"} ${name}`),
        onError: (error) => toast.error(getErrorMessage(error)),
      },
    );
  const sendTest = () =>
    test.mutate(endpoint.id, {
      onSuccess: (delivery) => {
        const answer = delivery.attempt_log[0];
        if (delivery.status === "delivered") toast.success(`Test event delivered (${answer?.status_code})`);
        else toast.error(`Test event failed: ${answer?.error ?? `HTTP ${answer?.status_code}`}`);
        actions.onTestSent(delivery);
      },
      onError: (error) => toast.error(getErrorMessage(error)),
    });

  return (
    <li
      className={cn(
        "space-y-3 px-5 py-4",
        selected && "bg-brand-50/40 shadow-[inset_3px_0_0_var(--color-brand-600)]",
      )}
    >
      <div className="flex flex-wrap items-start justify-between gap-x-4 gap-y-2">
        <div className="min-w-0 flex-1">
          <h3 id={urlId} className="font-mono text-sm font-medium break-all text-slate-900">
            {endpoint.url}
          </h3>
          {endpoint.description && <p className="mt-0.5 text-sm text-slate-600">{endpoint.description}</p>}
        </div>
        <div className="flex flex-wrap items-center gap-2">
          {endpoint.enabled ? <Badge tone="green">Enabled</Badge> : <Badge tone="gray">Disabled</Badge>}
          {endpoint.failing_since && (
            <Badge tone="red">Failing since {formatDateTime(endpoint.failing_since)}</Badge>
          )}
        </div>
      </div>
      {!endpoint.enabled && endpoint.disabled_reason && (
        <p className="text-sm text-slate-600">
          <span className="font-medium">Disabled:</span> {endpoint.disabled_reason}
        </p>
      )}
      <ul aria-label={`Event types of ${name}`} className="flex flex-wrap gap-1.5">
        {endpoint.event_types.map((type) => (
          <li key={type}>
            <Badge tone="blue" className={type === ALL_EVENTS ? undefined : "font-mono"}>
              {type === ALL_EVENTS ? "All events" : type}
            </Badge>
          </li>
        ))}
      </ul>
      <div className="-ml-2.5 flex flex-wrap gap-1">
        <Button
          variant="ghost"
          size="sm"
          aria-describedby={urlId}
          aria-pressed={selected}
          onClick={actions.onSelect}
        >
          <ListTree className="size-4" aria-hidden="true" />
          Deliveries
        </Button>
        <Button variant="ghost" size="sm" aria-describedby={urlId} busy={test.isPending} onClick={sendTest}>
          {!test.isPending && <Send className="size-4" aria-hidden="true" />}
          {test.isPending ? "Sending..." : "Send test event"}
        </Button>
        <Button variant="ghost" size="sm" aria-describedby={urlId} busy={update.isPending} onClick={toggle}>
          {!update.isPending && <Power className="size-4" aria-hidden="true" />}
          {endpoint.enabled ? "Disable" : "Enable"}
        </Button>
        <EditButton variant="ghost" itemName={name} onClick={actions.onEdit} />
        <Button variant="ghost" size="sm" aria-describedby={urlId} onClick={actions.onSecret}>
          <KeyRound className="size-4" aria-hidden="true" />
          Signing secret
        </Button>
        <Button
          variant="ghost"
          size="sm"
          className="text-red-600 hover:bg-red-50 hover:text-red-700"
          aria-label={`Delete ${name}`}
          onClick={actions.onDelete}
        >
          <Trash2 className="size-4" aria-hidden="true" />
          Delete
        </Button>
      </div>
    </li>
  );
}
