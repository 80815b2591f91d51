import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import type { Config } from "../../config.ts";
import { type Database, queryRows } from "../../db/client.ts";
import { createSafeFetch } from "../../lib/safe-fetch.ts";
import { createSecretBox } from "../../lib/secrets.ts";
import { USAGE_EVENT_TYPES } from "../../modules/events/event-log.ts";
import { createEventServices } from "../../modules/events/index.ts";
import type { World } from "./world.ts";

/**
 * What leaves Promptmint, under the attack (issue 39, decision 068): one loopback server plays every
 * receiver — each person's webhook endpoint (signatures verified with `standardwebhooks`; the first
 * attempt of one id in four answered 500), an OpenMeter-style CloudEvents collector and Stripe's
 * meter events (every fifth and seventh request refused) — while both server processes relay and
 * are SIGKILLed. After the attack the judge drains what is left and compares, receiver by receiver,
 * the set of ids acknowledged with the log's: every event reaches every subscribed receiver at least
 * once, with one id, and nothing else does.
 */
export interface EventReceivers {
  url: string;
  /** The settings that point both servers' usage export here. */
  env(): Record<string, string>;
  /** Acknowledged ids per receiver (`webhook:<person>`, `cloudevents`, `stripe_meter`). */
  acknowledged: Map<string, Set<string>>;
  /** Requests per webhook id (every attempt), and the signature failures seen. */
  attempts: Map<string, number>;
  badSignatures: string[];
  secrets: Map<string, string>;
  stop(): Promise<void>;
}

const failsFirst = (id: string) => (createHash("sha256").update(id).digest()[0] ?? 0) % 4 === 0;

export async function startEventReceivers(): Promise<EventReceivers> {
  const acknowledged = new Map<string, Set<string>>();
  const attempts = new Map<string, number>();
  const badSignatures: string[] = [];
  const secrets = new Map<string, string>();
  const counters = { cloudevents: 0, stripe: 0 };
  const ack = (receiver: string, ids: string[]) => {
    const set = acknowledged.get(receiver) ?? new Set<string>();
    for (const id of ids) set.add(id);
    acknowledged.set(receiver, set);
  };
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      const answer = (status: number) =>
        res.writeHead(status, { "content-type": "text/plain" }).end(String(status));
      const path = req.url ?? "";
      if (path.startsWith("/webhook/")) {
        const person = decodeURIComponent(path.slice("/webhook/".length));
        const id = String(req.headers["webhook-id"] ?? "");
        const seen = (attempts.get(`${person} ${id}`) ?? 0) + 1;
        attempts.set(`${person} ${id}`, seen);
        const secret = secrets.get(person);
        try {
          const payload = new Webhook(secret ?? "whsec_AAAA").verify(
            body,
            req.headers as Record<string, string>,
          ) as {
            id: string;
          };
          if (payload.id !== id) throw new Error(`payload id ${payload.id} ≠ webhook-id ${id}`);
        } catch (error) {
          badSignatures.push(`${person} ${id}: ${(error as Error).message}`);
          return answer(400);
        }
        if (seen === 1 && failsFirst(id)) return answer(500);
        ack(`webhook:${person}`, [id]);
        return answer(200);
      }
      if (path === "/cloudevents") {
        counters.cloudevents += 1;
        if (counters.cloudevents % 5 === 0) return answer(503);
        ack(
          "cloudevents",
          (JSON.parse(body) as { id: string }[]).map((event) => event.id),
        );
        return answer(200);
      }
      if (path === "/stripe/v1/billing/meter_events") {
        counters.stripe += 1;
        if (counters.stripe % 7 === 0) return answer(500);
        ack("stripe_meter", [new URLSearchParams(body).get("identifier") ?? ""]);
        return answer(200);
      }
      answer(404);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    env: () => ({
      USAGE_EXPORT_CLOUDEVENTS_URL: `${url}/cloudevents`,
      USAGE_EXPORT_CLOUDEVENTS_SOURCE: "https://promptmint.attack",
      USAGE_EXPORT_STRIPE_METER: "promptmint_calls",
      USAGE_EXPORT_STRIPE_KEY: "sk_test_attack",
      USAGE_EXPORT_STRIPE_API_URL: `${url}/stripe`,
    }),
    acknowledged,
    attempts,
    badSignatures,
    secrets,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Every person of the world subscribes to every event type at their own receiver path. */
export async function subscribeEveryone(world: World, receivers: EventReceivers): Promise<void> {
  for (const person of [world.creator, ...world.consumers]) {
    const created = await person.caller.api("POST", "/api/webhooks/endpoints/", {
      body: { url: `${receivers.url}/webhook/${encodeURIComponent(person.name)}`, event_types: ["*"] },
    });
    if (created.status !== 201)
      throw new Error(`endpoint for ${person.name}: ${created.status} ${JSON.stringify(created.body)}`);
    receivers.secrets.set(person.name, created.body.secret);
  }
}

/**
 * After the servers stopped: relays what is left as a server would (retries made due at once),
 * then compares each receiver's acknowledged ids with the log's.
 */
export async function judgeEvents(
  db: Database,
  world: World,
  receivers: EventReceivers,
  settings: { secretKey: string; publicUrl: string },
  flag: (kind: string, example: string) => void,
): Promise<{ events: number; webhookAttempts: number; exported: number }> {
  const env = receivers.env();
  const config = {
    publicUrl: settings.publicUrl,
    usageExport: {
      cloudEvents: {
        url: env.USAGE_EXPORT_CLOUDEVENTS_URL,
        token: undefined,
        source: env.USAGE_EXPORT_CLOUDEVENTS_SOURCE,
      },
      stripeMeter: {
        eventName: env.USAGE_EXPORT_STRIPE_METER,
        secretKey: env.USAGE_EXPORT_STRIPE_KEY,
        apiBase: env.USAGE_EXPORT_STRIPE_API_URL,
      },
    },
  } as unknown as Config;
  const services = createEventServices(config, {
    db,
    secrets: createSecretBox(settings.secretKey),
    safeFetch: createSafeFetch({ allowPrivate: true, timeoutMs: 10_000 }),
    mailer: undefined,
  });
  const silent = { warn() {} } as unknown as Parameters<typeof services.run>[0];
  let drained = false;
  for (let round = 0; round < 200 && !drained; round += 1) {
    // The killed processes' claims and the retry schedule: due now (no server is left to wait for).
    await db.execute(
      sql`update webhook_deliveries set next_attempt_at = now(), locked_until = null where status = 'pending'`,
    );
    await db.execute(sql`update event_cursors set leased_by = null, leased_until = null`);
    await services.run(silent);
    const [left] = await queryRows<{ pending: number }>(
      db,
      sql`select count(*)::int as pending from webhook_deliveries where status = 'pending'`,
    );
    const behind = (await services.states()).reduce((sum, state) => sum + state.behind, 0);
    drained = (left?.pending ?? 0) === 0 && behind === 0;
  }
  if (!drained) {
    const [open] = await queryRows<{ sessions: string }>(
      db,
      sql`select string_agg(application_name || ' ' || state || ' xid ' || coalesce(backend_xid::text, '-') || ' since ' || coalesce(xact_start::text, '-'), '; ') as sessions
          from pg_stat_activity where backend_xid is not null or backend_xmin is not null`,
    );
    flag("the relays could not drain the log after the attack", `open transactions: ${open?.sessions}`);
  }
  for (const bad of receivers.badSignatures) flag("webhook signature not verified", bad);
  let events = 0;
  for (const person of [world.creator, ...world.consumers]) {
    const expected = (
      await queryRows<{ id: string }>(
        db,
        sql`select e.id from events e left join applications a on a.id = e.application_id
            where (${person.id}::uuid = any(e.user_ids) or a.owner_id = ${person.id}::uuid)
              and e.txid > (select created_txid from webhook_endpoints where owner_id = ${person.id}::uuid)`,
      )
    ).map((row) => row.id);
    events += expected.length;
    const missed = compare(
      `webhook:${person.name}`,
      expected,
      receivers.acknowledged.get(`webhook:${person.name}`),
      flag,
    );
    for (const id of missed.slice(0, 3)) {
      const [why] = await queryRows<Record<string, unknown>>(
        db,
        sql`select e.txid::text, e.seq, e.created_at, e.user_ids::text, e.application_id,
              (select txid::text || '/' || seq from event_cursors where sink = 'webhooks') as cursor,
              (select string_agg(d.status || ' x' || d.attempts || ' endpoint ' || w.owner_id, ', ')
               from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id where d.event_id = e.id) as deliveries
            from events e where e.id = ${id}`,
      );
      flag("a missed event, as the log has it", `${person.name} ${id}: ${JSON.stringify(why)}`);
    }
  }
  const usage = await queryRows<{ id: string; type: string }>(
    db,
    sql`select id, type from events where type in (${sql.join(
      USAGE_EVENT_TYPES.map((type) => sql`${type}`),
      sql`, `,
    )})`,
  );
  compare(
    "cloudevents",
    usage.map((row) => row.id),
    receivers.acknowledged.get("cloudevents"),
    flag,
  );
  compare(
    "stripe_meter",
    usage.filter((row) => row.type === "call.charged").map((row) => row.id),
    receivers.acknowledged.get("stripe_meter"),
    flag,
  );
  return {
    events,
    webhookAttempts: [...receivers.attempts.values()].reduce((sum, n) => sum + n, 0),
    exported: usage.length,
  };
}

/** Flags the ids missed and the ids extra; answers the missed. */
function compare(
  receiver: string,
  expected: string[],
  got: Set<string> | undefined,
  flag: (kind: string, example: string) => void,
): string[] {
  const seen = got ?? new Set<string>();
  const want = new Set(expected);
  const missed = expected.filter((id) => !seen.has(id));
  const extra = [...seen].filter((id) => !want.has(id));
  if (missed.length > 0)
    flag(
      "event never reached its receiver",
      `${receiver}: ${missed.length} missed, e.g. ${missed.slice(0, 3).join(", ")}`,
    );
  if (extra.length > 0)
    flag(
      "receiver got an event the log does not have for it",
      `${receiver}: ${extra.slice(0, 3).join(", ")}`,
    );
  return missed;
}
