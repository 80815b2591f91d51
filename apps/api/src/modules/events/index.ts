import { sql } from "drizzle-orm";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.ts";
import { backgroundFor, type Database, queryRows } from "../../db/client.ts";
import { escapeHtml } from "../../lib/html.ts";
import type { Mailer } from "../../lib/mailer.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { relay, type Sink, sinkStates } from "./relay.ts";
import { cloudEventsSink, stripeMeterSink } from "./usage-sinks.ts";
import { deliverDue, type WebhookDeps, webhookFanOut } from "./webhooks.ts";

/**
 * What leaves Promptmint (decision 068): the webhook fan-out and deliveries, and the usage export
 * sinks the configuration names. `run` is one round of all of them: the server's job runs it every
 * few seconds on every process (leases and SKIP LOCKED keep them from sending anything twice).
 */
export interface EventServices {
  webhooks: WebhookDeps;
  sinks: Sink[];
  /** Fans out, sends due deliveries, relays every sink; answers what each did. */
  run(log: FastifyBaseLogger): Promise<{ fannedOut: number; delivered: number; exported: number }>;
  states(): ReturnType<typeof sinkStates>;
}

export function createEventServices(
  config: Config,
  deps: { db: Database; secrets: SecretBox; safeFetch: SafeFetch; mailer: Mailer | undefined },
): EventServices {
  const { db } = deps;
  const webhooks: WebhookDeps = {
    db,
    secrets: deps.secrets,
    safeFetch: deps.safeFetch,
    notify: deps.mailer
      ? (ownerId, endpoint) => noticeDisabled(db, deps.mailer as Mailer, config, ownerId, endpoint)
      : undefined,
  };
  // The job's own connections (client.ts backgroundFor): it never takes one from a paid call.
  const jobDb = backgroundFor(db);
  const fanOut = webhookFanOut();
  const { cloudEvents, stripeMeter } = config.usageExport;
  const sinks: Sink[] = [
    ...(cloudEvents ? [cloudEventsSink(cloudEvents, deps.safeFetch)] : []),
    ...(stripeMeter ? [stripeMeterSink(stripeMeter, jobDb, deps.safeFetch)] : []),
  ];
  return {
    webhooks,
    sinks,
    async run(log) {
      const fannedOut = (await relay(jobDb, fanOut)).sent;
      const delivered = await deliverDue({ ...webhooks, db: jobDb });
      let exported = 0;
      for (const sink of sinks) {
        try {
          exported += (await relay(jobDb, sink)).sent;
        } catch (error) {
          // Kept on the sink's cursor (last_error) and tried again next round; never skipped.
          log.warn({ err: error, sink: sink.name }, "usage export sink failed; will retry");
        }
      }
      return { fannedOut, delivered, exported };
    },
    states: () =>
      sinkStates(db, Object.fromEntries([fanOut, ...sinks].map((sink) => [sink.name, sink.types]))),
  };
}

async function noticeDisabled(
  db: Database,
  mailer: Mailer,
  config: Config,
  ownerId: string,
  endpoint: { id: string; url: string; reason: string },
) {
  const [owner] = await queryRows<{ email: string }>(db, sql`select email from users where id = ${ownerId}`);
  if (!owner) return;
  const url = `${config.publicUrl}/webhooks`;
  await mailer.send({
    to: owner.email,
    subject: "Promptmint disabled a webhook endpoint",
    text: `Your webhook endpoint ${endpoint.url} was disabled: ${endpoint.reason}. Fix it and enable it again at ${url}.`,
    html: `<p>Your webhook endpoint <code>${escapeHtml(endpoint.url)}</code> was disabled: ${escapeHtml(endpoint.reason)}.</p><p>Fix it and enable it again in <a href="${escapeHtml(url)}">your webhook settings</a>.</p>`,
    links: [{ label: "Webhook settings", url }],
  });
}
