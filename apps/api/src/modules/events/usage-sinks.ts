import { CloudEvent } from "cloudevents";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../db/client.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import { type LoggedEvent, publicEvent, USAGE_EVENT_TYPES } from "./event-log.ts";
import { PartlySent, type Sink } from "./relay.ts";

/**
 * Usage export to the systems operators already run (decision 068), each a relay sink with its own
 * cursor: OpenMeter-compatible CloudEvents over HTTP (a batch per request, the event id as the
 * CloudEvent `id`, `source` fixed, so OpenMeter's id+source deduplication holds), and Stripe
 * Billing meter events (the event id as Stripe's `identifier`). Both are at least once; the ids make
 * a resend idempotent at the receiver, beyond any deduplication window, because the relay never
 * resends an event it saw acknowledged (the cursor moved with the acknowledgement).
 */

export interface CloudEventsSinkSettings {
  url: string;
  /** Sent as `Authorization: Bearer …` when set (OpenMeter's API token). */
  token?: string;
  /** The CloudEvents `source`: with `id`, what OpenMeter deduplicates on. */
  source: string;
}

class SinkRefused extends Error {}

async function ensureAccepted(sink: string, response: { status: number; text(): Promise<string> }) {
  if (response.status >= 200 && response.status < 300) return;
  const body = (await response.text().catch(() => "")).slice(0, 300);
  throw new SinkRefused(`${sink} answered ${response.status}: ${body}`);
}

/** What a charged call is to a meter: `subject` is whom to bill (the payer), `data` its figures. */
function usageCloudEvent(event: LoggedEvent, source: string) {
  const body = publicEvent(event);
  return new CloudEvent({
    specversion: "1.0",
    id: event.id,
    source,
    type: `com.promptmint.${event.type}`,
    subject: String(event.data.payer_id ?? event.userIds[0] ?? "unknown"),
    time: body.timestamp,
    datacontenttype: "application/json",
    data: body.data,
  });
}

export function cloudEventsSink(settings: CloudEventsSinkSettings, safeFetch: SafeFetch): Sink {
  return {
    name: "cloudevents",
    types: USAGE_EVENT_TYPES,
    batch: 200,
    async send(events) {
      const batch = events.map((event) => usageCloudEvent(event, settings.source).toJSON());
      const response = await safeFetch(settings.url, {
        method: "POST",
        headers: {
          "content-type": "application/cloudevents-batch+json",
          ...(settings.token ? { authorization: `Bearer ${settings.token}` } : {}),
        },
        body: JSON.stringify(batch),
        timeoutMs: 30_000,
      });
      await ensureAccepted("the CloudEvents sink", response);
    },
  };
}

export interface StripeMeterSinkSettings {
  /** The meter's `event_name` in Stripe Billing. */
  eventName: string;
  secretKey: string;
  /** Stripe's API root (a test double's in tests). */
  apiBase: string;
}

/**
 * Stripe Billing meter events: one `POST /v1/billing/meter_events` per charged call (Stripe's
 * `identifier` is the event id, deduplicated by Stripe for at least 24 hours, and beyond that by
 * our cursor), valued in the call's price in cents, for the payer's Stripe customer (the payer's
 * id when they have none: the operator's meter maps it).
 */
export function stripeMeterSink(settings: StripeMeterSinkSettings, db: Database, safeFetch: SafeFetch): Sink {
  return {
    name: "stripe_meter",
    types: ["call.charged"],
    batch: 100,
    async send(events) {
      const payers = [...new Set(events.map((event) => String(event.data.payer_id ?? "")).filter(Boolean))];
      const customers = new Map(
        payers.length === 0
          ? []
          : (
              await queryRows<{ user_id: string; customer_id: string }>(
                db,
                sql`select user_id::text, customer_id from stripe_customers where user_id in (${sql.join(
                  payers.map((id) => sql`${id}::uuid`),
                  sql`, `,
                )})`,
              )
            ).map((row) => [row.user_id, row.customer_id] as const),
      );
      for (const [i, event] of events.entries()) {
        const payer = String(event.data.payer_id ?? "");
        const form = new URLSearchParams({
          event_name: settings.eventName,
          identifier: event.id,
          timestamp: String(Math.floor(event.occurredAt.getTime() / 1000)),
          "payload[stripe_customer_id]": customers.get(payer) ?? payer,
          "payload[value]": String(Math.round(event.amountMicros / 10_000)),
        });
        try {
          const response = await safeFetch(`${settings.apiBase}/v1/billing/meter_events`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${settings.secretKey}`,
              "content-type": "application/x-www-form-urlencoded",
              "idempotency-key": event.id,
            },
            body: form.toString(),
            timeoutMs: 30_000,
          });
          await ensureAccepted("Stripe's meter events", response);
        } catch (error) {
          // The events before this one were acknowledged: the cursor moves past them.
          throw new PartlySent(i, error);
        }
      }
    },
  };
}
