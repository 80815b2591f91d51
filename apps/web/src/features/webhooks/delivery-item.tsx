import type { WebhookAttempt, WebhookDelivery } from "@promptmint/contracts";
import { ChevronRight, RotateCw } from "lucide-react";
import { toast } from "sonner";
import { Badge } from "../../components/ui/badge";
import { Button } from "../../components/ui/button";
import { getErrorMessage } from "../../lib/api-client";
import { cn } from "../../lib/cn";
import { formatDateTime, formatDuration } from "../../lib/format";
import { useRedeliverDelivery } from "./api/redeliver-delivery";
import { DeliveryStatusBadge } from "./delivery-status-badge";

/** One delivery: a disclosure button (its summary) opening its attempts and payload, and Redeliver. */
export function DeliveryItem({
  delivery,
  open,
  onToggle,
}: {
  delivery: WebhookDelivery;
  open: boolean;
  onToggle: () => void;
}) {
  const redeliver = useRedeliverDelivery();
  const detailsId = `delivery-${delivery.id}`;
  const send = () =>
    redeliver.mutate(delivery.id, {
      onSuccess: (sent) => {
        const answer = sent.attempt_log[0];
        if (sent.status === "delivered") toast.success(`Redelivered (${answer?.status_code})`);
        else toast.error(`Redelivery failed: ${answer?.error ?? `HTTP ${answer?.status_code}`}`);
      },
      onError: (error) => toast.error(getErrorMessage(error)),
    });

  return (
    <li>
      <div className="flex items-start gap-2 px-3 py-3 sm:px-5">
        <button
          type="button"
          aria-expanded={open}
          aria-controls={detailsId}
          onClick={onToggle}
          className="flex min-w-0 flex-1 items-start gap-2 rounded-md p-1 text-left hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-brand-600"
        >
          <ChevronRight
            className={cn("mt-0.5 size-4 shrink-0 text-slate-400 transition-transform", open && "rotate-90")}
            aria-hidden="true"
          />
          <span className="grid min-w-0 flex-1 gap-x-4 gap-y-1 sm:grid-cols-[minmax(0,1fr)_auto]">
            <span className="flex min-w-0 flex-wrap items-center gap-2">
              <span className="font-mono text-sm font-medium text-slate-900">{delivery.event_type}</span>
              <DeliveryStatusBadge delivery={delivery} />
            </span>
            <span className="text-sm text-slate-500 sm:text-right">
              {formatDateTime(delivery.created_at)}
            </span>
            <span className="truncate font-mono text-xs text-slate-500" title={delivery.event_id}>
              {delivery.event_id}
            </span>
            <span className="text-xs text-slate-500 sm:text-right">{attemptsText(delivery)}</span>
          </span>
        </button>
        <Button
          variant="secondary"
          size="sm"
          className="mt-0.5 shrink-0"
          aria-label={`Redeliver ${delivery.event_type} ${delivery.event_id}`}
          busy={redeliver.isPending}
          onClick={send}
        >
          {!redeliver.isPending && <RotateCw className="size-4" aria-hidden="true" />}
          <span className="max-sm:sr-only">Redeliver</span>
        </Button>
      </div>
      {open && <DeliveryDetails id={detailsId} delivery={delivery} />}
    </li>
  );
}

function attemptsText(delivery: WebhookDelivery): string {
  const attempts = `${delivery.attempts} ${delivery.attempts === 1 ? "attempt" : "attempts"}`;
  if (delivery.status === "pending" && delivery.next_attempt_at)
    return `${attempts}, next ${formatDateTime(delivery.next_attempt_at)}`;
  return attempts;
}

function DeliveryDetails({ id, delivery }: { id: string; delivery: WebhookDelivery }) {
  return (
    <div id={id} className="space-y-4 border-t border-slate-100 bg-slate-50/60 px-4 py-4 sm:px-12">
      <section aria-label="Attempts" className="space-y-2">
        <h4 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">Attempts</h4>
        {delivery.attempt_log.length === 0 ? (
          <p className="text-sm text-slate-500">Not attempted yet.</p>
        ) : (
          <ol className="space-y-2">
            {delivery.attempt_log.map((attempt) => (
              <AttemptItem key={attempt.attempt} attempt={attempt} />
            ))}
          </ol>
        )}
      </section>
      <section aria-label="Payload" className="space-y-2">
        <h4 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">Payload</h4>
        <pre className="max-h-80 overflow-auto rounded-lg border border-slate-200 bg-white p-3 font-mono text-xs text-slate-800">
          {JSON.stringify(delivery.payload, null, 2)}
        </pre>
      </section>
    </div>
  );
}

function AttemptItem({ attempt }: { attempt: WebhookAttempt }) {
  const ok = attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
  return (
    <li className="space-y-1.5 rounded-lg border border-slate-200 bg-white p-3">
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 text-sm">
        <span className="font-medium text-slate-900">Attempt {attempt.attempt}</span>
        {attempt.status_code !== null ? (
          <Badge tone={ok ? "green" : "red"}>HTTP {attempt.status_code}</Badge>
        ) : (
          <Badge tone="red">No response</Badge>
        )}
        <span className="text-xs text-slate-500">
          {formatDateTime(attempt.created_at)} · {formatDuration(attempt.duration_ms)}
        </span>
      </div>
      {attempt.error && <p className="text-sm break-words text-red-700">{attempt.error}</p>}
      {attempt.response_body && (
        <pre className="max-h-40 overflow-auto rounded bg-slate-50 p-2 font-mono text-xs break-all whitespace-pre-wrap text-slate-700">
          {attempt.response_body}
        </pre>
      )}
    </li>
  );
}
