import type { CreatedWebhookEndpoint } from "@promptmint/contracts";
import { useState } from "react";
import { PageContainer } from "../../components/ui/page-container";
import { PageHeader } from "../../components/ui/page-header";
import { useWebhookEndpoints } from "./api/list-webhook-endpoints";
import { CreateWebhookEndpointForm } from "./create-webhook-endpoint-form";
import { CreatedSecretPanel } from "./created-secret-panel";
import { DeliveryLog } from "./delivery-log";
import { WebhookEndpointList } from "./webhook-endpoint-list";

/** /webhooks: endpoints that hear the events concerning you (as creator or payer), and their deliveries. */
export function WebhooksPage() {
  const endpoints = useWebhookEndpoints();
  // The secret is held only in memory until dismissed; it can be revealed again from the endpoint.
  const [created, setCreated] = useState<CreatedWebhookEndpoint | null>(null);
  const [chosenId, setChosenId] = useState<string | undefined>();
  const [openDeliveryId, setOpenDeliveryId] = useState<string | undefined>();
  const selected = endpoints.data?.find((endpoint) => endpoint.id === chosenId) ?? endpoints.data?.[0];

  const select = (endpointId: string) => {
    setChosenId(endpointId);
    setOpenDeliveryId(undefined);
  };

  return (
    <PageContainer className="max-w-5xl">
      <PageHeader
        title="Webhooks"
        description="Get an HTTP request, signed per Standard Webhooks, when something happens to your apps, calls or money."
      />
      <div className="space-y-6">
        {created && <CreatedSecretPanel endpoint={created} onDismiss={() => setCreated(null)} />}
        <CreateWebhookEndpointForm
          onCreated={(endpoint) => {
            setCreated(endpoint);
            select(endpoint.id);
          }}
        />
        <WebhookEndpointList
          selectedId={selected?.id}
          onSelect={select}
          onTestSent={(delivery) => {
            setChosenId(delivery.endpoint_id);
            setOpenDeliveryId(delivery.id);
          }}
        />
        {selected && (
          <DeliveryLog
            endpoint={selected}
            openId={openDeliveryId}
            onToggle={(id) => setOpenDeliveryId((open) => (open === id ? undefined : id))}
          />
        )}
      </div>
    </PageContainer>
  );
}
