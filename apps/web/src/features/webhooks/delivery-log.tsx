import type { WebhookEndpoint } from "@promptmint/contracts";
import { Inbox, RefreshCw } from "lucide-react";
import { Button } from "../../components/ui/button";
import { Card, CardHeader } from "../../components/ui/card";
import { EmptyState } from "../../components/ui/empty-state";
import { QueryStates } from "../../components/ui/query-states";
import { useWebhookDeliveries } from "./api/list-deliveries";
import { DeliveryItem } from "./delivery-item";

/** The selected endpoint's deliveries, newest first; one may be open to show its payload and attempts. */
export function DeliveryLog({
  endpoint,
  openId,
  onToggle,
}: {
  endpoint: WebhookEndpoint;
  openId: string | undefined;
  onToggle: (deliveryId: string) => void;
}) {
  const deliveries = useWebhookDeliveries(endpoint.id);
  return (
    <Card className="overflow-hidden">
      <CardHeader
        title="Delivery log"
        description={<span className="font-mono break-all">{endpoint.url}</span>}
        actions={
          <Button
            variant="secondary"
            size="sm"
            busy={deliveries.isFetching}
            onClick={() => void deliveries.refetch()}
          >
            {!deliveries.isFetching && <RefreshCw className="size-4" aria-hidden="true" />}
            Refresh
          </Button>
        }
      />
      <QueryStates query={deliveries} loading="Loading deliveries...">
        {(list) =>
          list.length === 0 ? (
            <EmptyState
              framed={false}
              icon={Inbox}
              title="No deliveries yet"
              description="Events this endpoint hears appear here. Send a test event to try it."
            />
          ) : (
            <ul className="divide-y divide-slate-100">
              {list.map((delivery) => (
                <DeliveryItem
                  key={delivery.id}
                  delivery={delivery}
                  open={delivery.id === openId}
                  onToggle={() => onToggle(delivery.id)}
                />
              ))}
            </ul>
          )
        }
      </QueryStates>
    </Card>
  );
}
