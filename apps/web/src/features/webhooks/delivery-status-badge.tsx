import type { WebhookDelivery } from "@promptmint/contracts";
import { Badge, type BadgeTone } from "../../components/ui/badge";

/** Delivered, Failed (no retry left), Retrying (an attempt failed, another is due) or Pending. */
export function deliveryStatusOf(delivery: WebhookDelivery): { label: string; tone: BadgeTone } {
  if (delivery.status === "delivered") return { label: "Delivered", tone: "green" };
  if (delivery.status === "failed") return { label: "Failed", tone: "red" };
  if (delivery.attempts > 0) return { label: "Retrying", tone: "yellow" };
  return { label: "Pending", tone: "gray" };
}

export function DeliveryStatusBadge({ delivery }: { delivery: WebhookDelivery }) {
  const { label, tone } = deliveryStatusOf(delivery);
  return <Badge tone={tone}>{label}</Badge>;
}
