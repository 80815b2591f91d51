import { randomBytes, randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { type Database, queryRows } from "../../db/client.ts";
import { AppError, invalidFields, notFound } from "../../lib/errors.ts";
import type { SafeFetch } from "../../lib/safe-fetch.ts";
import type { SecretBox } from "../../lib/secrets.ts";
import { EVENT_TYPES, type LoggedEvent, publicEvent } from "./event-log.ts";
import type { Sink } from "./relay.ts";

/**
 * Webhooks (decision 068): endpoints a creator or consumer registers for event types; the fan-out
 * sink makes one delivery per (endpoint, event) in the transaction that moves its cursor (exactly
 * once); deliverers send due deliveries signed per the Standard Webhooks specification, at least
 * once, with the event's id as `webhook-id` on every attempt, retried on the schedule below, and
 * an endpoint that failed for `DISABLE_AFTER_MS` is disabled with a notice to its owner.
 */

/** Waits before each retry (the first attempt is at once): 5 s … 24 h, about 3.7 days in all. */
export const RETRY_SCHEDULE_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3600_000,
  5 * 3600_000,
  10 * 3600_000,
  10 * 3600_000,
  14 * 3600_000,
  24 * 3600_000,
  24 * 3600_000,
];

/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600_000;

const MAX_ENDPOINTS_PER_OWNER = 20;
const RESPONSE_BODY_KEPT = 2_000;
const TEST_EVENT = "webhook.test";

export interface WebhookDeps {
  db: Database;
  secrets: SecretBox;
  safeFetch: SafeFetch;
  /** Tells an endpoint's owner it was disabled (mail); optional. */
  notify?: (ownerId: string, endpoint: { id: string; url: string; reason: string }) => Promise<void>;
  now?: () => Date;
}

export interface EndpointInput {
  url: string;
  description?: string;
  event_types: string[];
  enabled?: boolean;
}

interface EndpointRow {
  id: string;
  owner_id: string;
  url: string;
  description: string;
  event_types: string[] | string;
  secret: string;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

const list = (value: string[] | string) =>
  Array.isArray(value)
    ? value
    : value
        .replace(/^\{|\}$/g, "")
        .split(",")
        .filter(Boolean);

function endpointView(row: EndpointRow) {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: list(row.event_types),
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since ? new Date(row.failing_since).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

export type EndpointView = ReturnType<typeof endpointView>;

/** A new signing secret in the Standard Webhooks form: `whsec_` and 24 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

function checkInput(input: Partial<EndpointInput>) {
  const fields: Record<string, string> = {};
  if (input.url !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(input.url);
    } catch {
      fields.url = "is not a URL";
    }
    if (url && url.protocol !== "https:" && url.protocol !== "http:") fields.url = "must be http or https";
    if (url && (url.username || url.password)) fields.url = "must not carry credentials";
  }
  if (input.event_types !== undefined) {
    const unknown = input.event_types.filter((type) => type !== "*" && !(type in EVENT_TYPES));
    if (input.event_types.length === 0) fields.event_types = "must name at least one event type (or *)";
    else if (unknown.length > 0) fields.event_types = `has unknown types: ${unknown.join(", ")}`;
  }
  if (Object.keys(fields).length > 0) throw invalidFields(fields);
}

const selectEndpoint = sql`select id, owner_id, url, description, event_types, secret, enabled, disabled_reason,
  failing_since, created_at, updated_at from webhook_endpoints`;

async function ownEndpoint(db: Database, ownerId: string, id: string): Promise<EndpointRow> {
  const [row] = await queryRows<EndpointRow>(
    db,
    sql`${selectEndpoint} where id = ${id} and owner_id = ${ownerId}`,
  );
  if (!row) throw notFound("Webhook endpoint");
  return row;
}

export async function listEndpoints(db: Database, ownerId: string): Promise<EndpointView[]> {
  const rows = await queryRows<EndpointRow>(
    db,
    sql`${selectEndpoint} where owner_id = ${ownerId} order by created_at`,
  );
  return rows.map(endpointView);
}

/** Creates an endpoint; its secret is in this answer only (stored encrypted). */
export async function createEndpoint(deps: WebhookDeps, ownerId: string, input: EndpointInput) {
  checkInput(input);
  const [count] = await queryRows<{ n: number }>(
    deps.db,
    sql`select count(*)::int as n from webhook_endpoints where owner_id = ${ownerId}`,
  );
  if ((count?.n ?? 0) >= MAX_ENDPOINTS_PER_OWNER)
    throw new AppError("conflict", `At most ${MAX_ENDPOINTS_PER_OWNER} webhook endpoints per account`);
  const secret = newSecret();
  const [row] = await queryRows<EndpointRow>(
    deps.db,
    sql`insert into webhook_endpoints (owner_id, url, description, event_types, secret, enabled)
        values (${ownerId}, ${input.url}, ${input.description ?? ""},
          array[${sql.join(
            input.event_types.map((t) => sql`${t}`),
            sql`, `,
          )}]::text[], ${deps.secrets.encrypt(secret)}, ${input.enabled ?? true})
        returning id, owner_id, url, description, event_types, secret, enabled, disabled_reason, failing_since,
          created_at, updated_at`,
  );
  return { ...endpointView(row as EndpointRow), secret };
}

export async function updateEndpoint(
  db: Database,
  ownerId: string,
  id: string,
  input: Partial<EndpointInput>,
) {
  checkInput(input);
  await ownEndpoint(db, ownerId, id);
  const sets = [sql`updated_at = now()`];
  if (input.url !== undefined) sets.push(sql`url = ${input.url}`);
  if (input.description !== undefined) sets.push(sql`description = ${input.description}`);
  if (input.event_types !== undefined)
    sets.push(
      sql`event_types = array[${sql.join(
        input.event_types.map((t) => sql`${t}`),
        sql`, `,
      )}]::text[]`,
    );
  // Enabling again clears the failure record: the next failure starts a new count.
  if (input.enabled === true) sets.push(sql`enabled = true, disabled_reason = null, failing_since = null`);
  if (input.enabled === false) sets.push(sql`enabled = false, disabled_reason = 'Disabled by its owner'`);
  const [row] = await queryRows<EndpointRow>(
    db,
    sql`update webhook_endpoints set ${sql.join(sets, sql`, `)} where id = ${id} and owner_id = ${ownerId}
        returning id, owner_id, url, description, event_types, secret, enabled, disabled_reason, failing_since,
          created_at, updated_at`,
  );
  return endpointView(row as EndpointRow);
}

export async function deleteEndpoint(db: Database, ownerId: string, id: string): Promise<void> {
  await ownEndpoint(db, ownerId, id);
  await db.execute(sql`delete from webhook_endpoints where id = ${id} and owner_id = ${ownerId}`);
}

/** The endpoint's secret, for its owner (to verify signatures). */
export async function revealSecret(deps: WebhookDeps, ownerId: string, id: string) {
  const row = await ownEndpoint(deps.db, ownerId, id);
  return { secret: deps.secrets.decrypt(row.secret) };
}

/**
 * A new secret; the old one keeps signing beside it for `graceHours` (Standard Webhooks lets a
 * request carry several signatures), so a receiver can switch without losing a delivery.
 */
export async function rotateSecret(deps: WebhookDeps, ownerId: string, id: string, graceHours = 24) {
  if (!Number.isFinite(graceHours) || graceHours < 0 || graceHours > 168)
    throw invalidFields({ grace_hours: "must be between 0 and 168" });
  const row = await ownEndpoint(deps.db, ownerId, id);
  const secret = newSecret();
  await deps.db.execute(
    sql`update webhook_endpoints set secret = ${deps.secrets.encrypt(secret)}, previous_secret = ${row.secret},
          previous_secret_until = now() + make_interval(hours => ${graceHours}), updated_at = now()
        where id = ${id}`,
  );
  return { secret };
}

/** The fan-out: one delivery per enabled endpoint that wants the event and concerns one of its users. */
/** The fan-out's sink name: it is not an export (deliveries are judged one by one), so it counts none. */
export const FANOUT_SINK = "webhooks";

export function webhookFanOut(): Sink {
  return {
    name: FANOUT_SINK,
    batch: 500,
    inTransaction: true,
    // No endpoint could want anything: the cursor moves on without reading a single event.
    idleWhen: sql`not exists (select 1 from webhook_endpoints where enabled)`,
    async send(events, tx) {
      if (!tx) throw new Error("the webhook fan-out writes in the cursor's transaction");
      const rows = events.map(
        (event) =>
          sql`(${event.id}, ${event.type}, ${JSON.stringify(publicEvent(event))}::jsonb,
               ${`{${event.userIds.join(",")}}`}::uuid[], ${event.applicationId}::uuid, ${event.txid}::xid8)`,
      );
      await tx.execute(
        sql`insert into webhook_deliveries (endpoint_id, event_id, event_type, payload)
            select w.id, e.id, e.type, e.payload
            from (values ${sql.join(rows, sql`, `)}) e(id, type, payload, user_ids, application_id, txid)
            join webhook_endpoints w
              on (w.owner_id = any(e.user_ids)
                  or w.owner_id = (select owner_id from applications where id = e.application_id))
             and ('*' = any(w.event_types) or e.type = any(w.event_types))
            -- An endpoint hears what happened after it was added (and while it is enabled).
            where w.enabled and e.txid > w.created_txid
            on conflict (endpoint_id, event_id) do nothing`,
      );
    },
  };
}

interface DueDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  payload: Record<string, unknown>;
  attempts: number;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  owner_id: string;
  failing_since: string | null;
  created_at: string;
}

const claimSql = (where: ReturnType<typeof sql>, limit: number) =>
  sql`with due as (
        select d.id from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
        where ${where} and (d.locked_until is null or d.locked_until < now())
        order by d.next_attempt_at limit ${limit} for update of d skip locked)
      update webhook_deliveries d set locked_until = now() + interval '2 minutes', attempts = d.attempts + 1
      from due, webhook_endpoints w
      where d.id = due.id and w.id = d.endpoint_id
      returning d.id, d.endpoint_id, d.event_id, d.payload, d.attempts, d.created_at, w.url, w.secret,
        w.previous_secret, w.previous_secret_until, w.owner_id, w.failing_since`;

/**
 * Sends the deliveries that are due (any number of processes: each claims its own rows with SKIP
 * LOCKED and a two-minute claim, which a killed process's rows outlive). Answers how many it sent.
 */
export async function deliverDue(deps: WebhookDeps, options: { limit?: number } = {}): Promise<number> {
  const due = await queryRows<DueDelivery>(
    deps.db,
    claimSql(sql`d.status = 'pending' and d.next_attempt_at <= now() and w.enabled`, options.limit ?? 50),
  );
  await Promise.all(due.map((delivery) => attempt(deps, delivery)));
  return due.length;
}

/** Signs with the current secret, and with the previous one while its grace lasts. */
function signatures(deps: WebhookDeps, delivery: DueDelivery, id: string, at: Date, body: string): string {
  const secrets = [delivery.secret];
  if (
    delivery.previous_secret &&
    delivery.previous_secret_until &&
    new Date(delivery.previous_secret_until) > at
  )
    secrets.push(delivery.previous_secret);
  return secrets.map((sealed) => new Webhook(deps.secrets.decrypt(sealed)).sign(id, at, body)).join(" ");
}

async function attempt(
  deps: WebhookDeps,
  delivery: DueDelivery,
): Promise<{ ok: boolean; status: number | null }> {
  const now = deps.now?.() ?? new Date();
  const body = JSON.stringify(delivery.payload);
  const started = performance.now();
  let status: number | null = null;
  let error: string | null = null;
  let responseBody = "";
  try {
    const response = await deps.safeFetch(delivery.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "Promptmint-Webhooks/1",
        "webhook-id": delivery.event_id,
        "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
        "webhook-signature": signatures(deps, delivery, delivery.event_id, now, body),
      },
      body,
      timeoutMs: 15_000,
    });
    status = response.status;
    responseBody = (await response.text().catch(() => "")).slice(0, RESPONSE_BODY_KEPT);
  } catch (caught) {
    error = (caught instanceof Error ? caught.message : String(caught)).slice(0, 500);
  }
  const ok = status !== null && status >= 200 && status < 300;
  const retryIn = RETRY_SCHEDULE_MS[delivery.attempts - 1];
  await deps.db.transaction(async (tx) => {
    await tx.execute(
      sql`insert into webhook_attempts (delivery_id, attempt, status_code, error, response_body, duration_ms)
          values (${delivery.id}, ${delivery.attempts}, ${status}, ${error}, ${responseBody},
            ${Math.round(performance.now() - started)})`,
    );
    await tx.execute(
      ok
        ? sql`update webhook_deliveries set status = 'delivered', delivered_at = now(), locked_until = null
              where id = ${delivery.id}`
        : retryIn === undefined
          ? sql`update webhook_deliveries set status = 'failed', locked_until = null where id = ${delivery.id}`
          : sql`update webhook_deliveries set next_attempt_at = now() + make_interval(secs => ${retryIn / 1000}),
                  locked_until = null where id = ${delivery.id}`,
    );
    await tx.execute(
      ok
        ? sql`update webhook_endpoints set failing_since = null where id = ${delivery.endpoint_id} and failing_since is not null`
        : sql`update webhook_endpoints set failing_since = coalesce(failing_since, now()) where id = ${delivery.endpoint_id}`,
    );
  });
  if (!ok) await disableIfFailingTooLong(deps, delivery.endpoint_id);
  return { ok, status };
}

async function disableIfFailingTooLong(deps: WebhookDeps, endpointId: string) {
  const reason = `Every delivery failed for ${Math.round(DISABLE_AFTER_MS / 86_400_000)} days`;
  const [disabled] = await queryRows<{ owner_id: string; url: string }>(
    deps.db,
    sql`update webhook_endpoints set enabled = false, disabled_reason = ${reason}, updated_at = now()
        where id = ${endpointId} and enabled
          and failing_since < now() - make_interval(secs => ${DISABLE_AFTER_MS / 1000})
        returning owner_id, url`,
  );
  if (disabled) await deps.notify?.(disabled.owner_id, { id: endpointId, url: disabled.url, reason });
}

/**
 * A delivery sent now by its owner's request is not due for the deliverers yet: were it due, the
 * events job could claim it between this write and `sendNow`'s claim, and the owner's click would
 * answer 409. Should the process die before sending it, a deliverer sends it a minute later.
 */
const NOT_DUE_WHILE_SENT_NOW = sql`now() + interval '1 minute'`;

/** A `webhook.test` delivery to one endpoint, sent now (not an event of the log: nothing happened). */
export async function sendTestEvent(deps: WebhookDeps, ownerId: string, endpointId: string) {
  await ownEndpoint(deps.db, ownerId, endpointId);
  const eventId = `test_${randomUUID()}`;
  const payload = {
    id: eventId,
    type: TEST_EVENT,
    timestamp: new Date().toISOString(),
    data: { message: "A test event from Promptmint" },
  };
  const [row] = await queryRows<{ id: string }>(
    deps.db,
    sql`insert into webhook_deliveries (endpoint_id, event_id, event_type, payload, next_attempt_at)
        values (${endpointId}, ${eventId}, ${TEST_EVENT}, ${JSON.stringify(payload)}::jsonb, ${NOT_DUE_WHILE_SENT_NOW})
        returning id`,
  );
  const id = (row as { id: string }).id;
  return sendNow(deps, ownerId, id);
}

/** Sends one of the owner's deliveries again now (a failed or delivered one too), with the same id. */
export async function redeliver(deps: WebhookDeps, ownerId: string, deliveryId: string) {
  const [owned] = await queryRows<{ id: string }>(
    deps.db,
    sql`update webhook_deliveries d set status = 'pending', next_attempt_at = ${NOT_DUE_WHILE_SENT_NOW}
        from webhook_endpoints w
        where d.id = ${deliveryId} and w.id = d.endpoint_id and w.owner_id = ${ownerId}
        returning d.id`,
  );
  if (!owned) throw notFound("Webhook delivery");
  return sendNow(deps, ownerId, deliveryId);
}

async function sendNow(deps: WebhookDeps, ownerId: string, deliveryId: string) {
  const [claimed] = await queryRows<DueDelivery>(deps.db, claimSql(sql`d.id = ${deliveryId}`, 1));
  if (!claimed)
    throw new AppError("conflict", "This delivery is being sent right now; try again in a moment");
  await attempt(deps, claimed);
  const [view] = await listDeliveries(deps.db, ownerId, { deliveryId });
  return view;
}

export interface DeliveryView {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  payload: Record<string, unknown>;
  attempt_log: {
    attempt: number;
    status_code: number | null;
    error: string | null;
    response_body: string;
    duration_ms: number;
    created_at: string;
  }[];
}

/** The owner's deliveries, newest first (one endpoint's, or one delivery), each with its attempts. */
export async function listDeliveries(
  db: Database,
  ownerId: string,
  filter: { endpointId?: string; deliveryId?: string; limit?: number },
): Promise<DeliveryView[]> {
  const where = [sql`w.owner_id = ${ownerId}`];
  if (filter.endpointId) where.push(sql`d.endpoint_id = ${filter.endpointId}`);
  if (filter.deliveryId) where.push(sql`d.id = ${filter.deliveryId}`);
  const rows = await queryRows<{
    id: string;
    endpoint_id: string;
    event_id: string;
    event_type: string;
    status: DeliveryView["status"];
    attempts: number;
    next_attempt_at: string;
    delivered_at: string | null;
    created_at: string;
    payload: Record<string, unknown>;
    attempt_log: DeliveryView["attempt_log"] | null;
  }>(
    db,
    sql`select d.id, d.endpoint_id, d.event_id, d.event_type, d.status, d.attempts, d.next_attempt_at,
          d.delivered_at, d.created_at, d.payload,
          (select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'status_code', a.status_code, 'error', a.error,
                  'response_body', a.response_body, 'duration_ms', a.duration_ms, 'created_at', a.created_at)
                  order by a.attempt desc)
           from webhook_attempts a where a.delivery_id = d.id) as attempt_log
        from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
        where ${sql.join(where, sql` and `)}
        order by d.created_at desc, d.id limit ${filter.limit ?? 50}`,
  );
  return rows.map((row) => ({
    ...row,
    next_attempt_at: row.status === "pending" ? new Date(row.next_attempt_at).toISOString() : null,
    delivered_at: row.delivered_at ? new Date(row.delivered_at).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
    attempt_log: (row.attempt_log ?? []).map((a) => ({
      ...a,
      created_at: new Date(a.created_at).toISOString(),
    })),
  }));
}

export type { LoggedEvent };
