-- Issue 39, decision 068: one event log, appended by the database itself in the very transaction
-- that makes each fact true (triggers below), so no path — present or future, batch or single
-- record, wallet, plan, x402 or embed — can write a fact without its event or an event without its
-- fact. Ids are derived from the fact's own id; `txid` (the writing transaction) with `seq` is the
-- order readers tail in: a reader only takes events of transactions older than every transaction of
-- this database still running (event-log.ts HORIZON), so an event committed late is never skipped.
CREATE TABLE "events" (
	"seq" bigserial NOT NULL,
	"id" text NOT NULL,
	"type" text NOT NULL,
	"txid" xid8 DEFAULT pg_current_xact_id() NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"user_ids" uuid[] DEFAULT '{}' NOT NULL,
	"application_id" uuid,
	"amount_micros" bigint DEFAULT 0 NOT NULL,
	"data" jsonb NOT NULL
) PARTITION BY RANGE ("created_at");
--> statement-breakpoint
CREATE TABLE "events_default" PARTITION OF "events" DEFAULT;
--> statement-breakpoint
-- The log's one index, in the order readers tail it (bench:events: each index is a cost every
-- paid call's record pays; an event is found by its transaction, never by its id on a hot path).
CREATE INDEX "events_cursor_idx" ON "events" USING btree ("txid", "seq");
--> statement-breakpoint
-- A day's partition of a table partitioned by day on created_at (`<parent>_pYYYYMMDD`), made as
-- pm_invocations_partition makes the invocations' (decision 038): its rows moved out of the default
-- partition, then attached. The event log uses it (event-partitions.ts).
CREATE FUNCTION "pm_day_partition"("parent" text, "day" date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  part text := parent || '_p' || to_char("day", 'YYYYMMDD');
  lo timestamptz := "day"::timestamp AT TIME ZONE 'UTC';
  hi timestamptz := ("day" + 1)::timestamp AT TIME ZONE 'UTC';
BEGIN
  IF to_regclass(part) IS NOT NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS)', part, parent);
  EXECUTE format(
    'WITH moved AS (DELETE FROM %I WHERE "created_at" >= %L AND "created_at" < %L RETURNING *) '
    'INSERT INTO %I SELECT * FROM moved', parent || '_default', lo, hi, part);
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, part, lo, hi);
  RETURN true;
END
$$;
--> statement-breakpoint
-- Today's partition of the log and the next 7 days' (the maintenance job keeps it so).
SELECT "pm_day_partition"('events', d::date)
FROM generate_series((now() AT TIME ZONE 'UTC')::date, (now() AT TIME ZONE 'UTC')::date + 7, interval '1 day') AS d;
--> statement-breakpoint
-- The log's retention (decision 068): days created before `kept_from` were dropped, each only once
-- every sink had passed all its events; reconcile compares facts and exports from then on.
CREATE TABLE "event_retention" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL CHECK ("id"),
	"kept_from" timestamp with time zone NOT NULL
);
--> statement-breakpoint
-- Each sink's place in the log (usage export: cloudevents, stripe_meter; webhook fan-out): the
-- last event it took. A relay leases the row before it sends (`leased_by`, `leased_until`), so one
-- process relays a sink at a time without a transaction open across the network; the cursor moves
-- only after the sink acknowledged, and only by the lease's holder.
CREATE TABLE "event_cursors" (
	"sink" text PRIMARY KEY NOT NULL,
	"types" text[],
	"txid" xid8 DEFAULT '0'::xid8 NOT NULL,
	"seq" bigint DEFAULT 0 NOT NULL,
	"exported" bigint DEFAULT 0 NOT NULL,
	"exported_micros" bigint DEFAULT 0 NOT NULL,
	"leased_by" text,
	"leased_until" timestamp with time zone,
	"last_error" text,
	"last_error_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- Every event a sink acknowledged, per day of the event, type and app (the zero uuid for events of
-- no app; an app's creator never changes, and an app with charged calls is never deleted): what
-- reconcile and the operator console compare, per creator and day, with the log and the ledger
-- (events charged = events exported = money).
CREATE TABLE "event_exports" (
	"sink" text NOT NULL,
	"day" date NOT NULL,
	"type" text NOT NULL,
	"application_id" uuid NOT NULL,
	"events" bigint DEFAULT 0 NOT NULL,
	"amount_micros" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "event_exports_pkey" PRIMARY KEY ("sink", "day", "type", "application_id")
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"owner_id" uuid NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
	"url" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"event_types" text[] NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_until" timestamp with time zone,
	"enabled" boolean DEFAULT true NOT NULL,
	"disabled_reason" text,
	"failing_since" timestamp with time zone,
	-- The transaction that added it: it hears the events of later transactions only (an event of a
	-- later one is read only after this one ended, so none is passed over before it is visible).
	"created_txid" xid8 DEFAULT pg_current_xact_id() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "webhook_endpoints_owner_idx" ON "webhook_endpoints" USING btree ("owner_id");
--> statement-breakpoint
-- One row per (endpoint, event): made once by the fan-out, in the transaction that moves its
-- cursor. `webhook-id` is the event's id on every attempt.
CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"endpoint_id" uuid NOT NULL REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"locked_until" timestamp with time zone,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_deliveries_status" CHECK ("status" in ('pending', 'delivered', 'failed'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_endpoint_event_key" ON "webhook_deliveries" USING btree ("endpoint_id", "event_id");
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "status" = 'pending';
--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id", "created_at");
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" uuid NOT NULL REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE,
	"attempt" integer NOT NULL,
	"status_code" integer,
	"error" text,
	"response_body" text DEFAULT '' NOT NULL,
	"duration_ms" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "webhook_attempts_delivery_idx" ON "webhook_attempts" USING btree ("delivery_id", "attempt");
--> statement-breakpoint
-- A call's charge: what paid it (its rail), read off its invocation row.
CREATE FUNCTION "pm_call_charged"("status" text, "charged_cents" bigint, "hold_id" uuid, "subscription_id" uuid)
RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT status = 'success' AND (charged_cents > 0 OR hold_id IS NOT NULL OR subscription_id IS NOT NULL)
$$;
--> statement-breakpoint
CREATE FUNCTION "pm_call_rail"("charged_cents" bigint, "hold_id" uuid, "subscription_id" uuid)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN subscription_id IS NOT NULL THEN 'plan'
              WHEN hold_id IS NOT NULL AND charged_cents > 0 THEN 'wallet'
              WHEN hold_id IS NOT NULL THEN 'embed_owner'
              ELSE 'x402' END
$$;
--> statement-breakpoint
CREATE FUNCTION "pm_call_event_data"("c" "invocations") RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('invocation_id', c.id, 'application_id', c.application_id,
           'api_key_id', c.api_key_id, 'payer_id', c.caller_user_id,
           'rail', pm_call_rail(c.charged_cents, c.hold_id, c.subscription_id),
           'charged', pm_call_charged(c.status, c.charged_cents, c.hold_id, c.subscription_id),
           'price_cents', c.charged_cents, 'fee_micros', c.fee_micros, 'mode', c.mode, 'model', c.model,
           'input_tokens', c.input_tokens, 'output_tokens', c.output_tokens,
           'subscription_id', c.subscription_id, 'app_version', c.app_version, 'created_at', c.created_at)
$$;
--> statement-breakpoint
CREATE FUNCTION "pm_call_events_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO events (id, type, occurred_at, user_ids, application_id, amount_micros, data)
  SELECT 'call_' || n.id, 'call.charged', n.created_at,
         CASE WHEN n.caller_user_id IS NULL THEN '{}'::uuid[] ELSE ARRAY[n.caller_user_id] END,
         n.application_id, n.charged_cents * 10000,
         pm_call_event_data(n)
  FROM new_rows n
  WHERE pm_call_charged(n.status, n.charged_cents, n.hold_id, n.subscription_id);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- A call's charge changed by a later statement: in the transaction that recorded it (a settlement
-- that refused, lowered or moved it to a plan), its event is replaced; after that transaction,
-- a `call.charge_changed` event says what it is now.
CREATE FUNCTION "pm_call_events_updated"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH changed AS (
    SELECT n.id, n.created_at, n.status, n.charged_cents, n.hold_id, n.subscription_id, n.caller_user_id,
           n.application_id,
           pm_call_charged(o.status, o.charged_cents, o.hold_id, o.subscription_id) AS was_charged
    FROM new_rows n JOIN old_rows o ON o.id = n.id AND o.created_at = n.created_at
    WHERE (o.status, o.charged_cents, o.fee_micros, o.hold_id, o.subscription_id)
      IS DISTINCT FROM (n.status, n.charged_cents, n.fee_micros, n.hold_id, n.subscription_id)
  ),
  replaced AS (
    DELETE FROM events e USING changed c
    WHERE e.txid = pg_current_xact_id() AND e.created_at = now() AND e.id = 'call_' || c.id
    RETURNING e.id
  )
  INSERT INTO events (id, type, occurred_at, user_ids, application_id, amount_micros, data)
  SELECT CASE WHEN r.id IS NOT NULL OR NOT c.was_charged THEN 'call_' || c.id
              ELSE 'call_' || c.id || '_' || pg_current_xact_id()::text END,
         CASE WHEN r.id IS NOT NULL OR NOT c.was_charged THEN 'call.charged' ELSE 'call.charge_changed' END,
         c.created_at,
         CASE WHEN c.caller_user_id IS NULL THEN '{}'::uuid[] ELSE ARRAY[c.caller_user_id] END,
         c.application_id,
         CASE WHEN pm_call_charged(c.status, c.charged_cents, c.hold_id, c.subscription_id)
              THEN c.charged_cents * 10000 ELSE 0 END,
         pm_call_event_data(n)
  FROM changed c JOIN new_rows n ON n.id = c.id AND n.created_at = c.created_at
  LEFT JOIN replaced r ON r.id = 'call_' || c.id
  WHERE pm_call_charged(c.status, c.charged_cents, c.hold_id, c.subscription_id)
     OR (c.was_charged AND r.id IS NULL);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "invocations_events_inserted" AFTER INSERT ON "invocations"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pm_call_events_inserted();
--> statement-breakpoint
CREATE TRIGGER "invocations_events_updated" AFTER UPDATE ON "invocations"
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pm_call_events_updated();
--> statement-breakpoint
-- A ledger movement a person sees (not the leases' hold/settle/release, nor an x402 call's own
-- payment, which is its call.charged): at commit, when its entries exist, with the users whose
-- accounts it moved and the money it moved.
CREATE FUNCTION "pm_ledger_events"("ids" uuid[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO events (id, type, occurred_at, user_ids, amount_micros, data)
  SELECT 'ledger_' || t.id,
         CASE t.kind WHEN 'top_up' THEN 'wallet.topped_up'
                     WHEN 'reversal' THEN 'payment.reversed'
                     WHEN 'subscription' THEN 'subscription.paid'
                     WHEN 'payout' THEN 'payout.created'
                     WHEN 'payout_paid' THEN 'payout.paid'
                     WHEN 'payout_return' THEN 'payout.failed'
                     WHEN 'x402_credit' THEN 'x402.credited'
                     ELSE 'ledger.' || t.kind END,
         t.created_at,
         coalesce((SELECT array_agg(DISTINCT a.owner_id) FROM ledger_entries le
                   JOIN ledger_accounts a ON a.id = le.account_id
                   WHERE le.transaction_id = t.id AND a.owner_id IS NOT NULL), '{}'),
         coalesce((SELECT sum(le.amount_micros) FROM ledger_entries le
                   WHERE le.transaction_id = t.id AND le.amount_micros > 0), 0),
         jsonb_build_object('transaction_id', t.id, 'kind', t.kind, 'reference', t.reference,
           'description', t.description,
           'entries', coalesce((SELECT jsonb_agg(jsonb_build_object('account', a.kind, 'user_id', a.owner_id,
                                  'amount_micros', le.amount_micros) ORDER BY le.id)
                                FROM ledger_entries le JOIN ledger_accounts a ON a.id = le.account_id
                                WHERE le.transaction_id = t.id), '[]'::jsonb))
  FROM ledger_transactions t WHERE t.id = ANY(ids)
$$;
--> statement-breakpoint
CREATE FUNCTION "pm_ledger_event"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pm_ledger_events(ARRAY[NEW.id]);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "ledger_transactions_events" AFTER INSERT ON "ledger_transactions"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.kind IN ('top_up', 'reversal', 'subscription', 'payout', 'payout_paid', 'payout_return', 'x402_credit'))
  EXECUTE FUNCTION pm_ledger_event();
--> statement-breakpoint
-- Releases: a label moved (promotion, rollback), an experiment started or ended, an eval run finished.
CREATE FUNCTION "pm_label_move_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE app uuid; owner uuid;
BEGIN
  IF TG_TABLE_NAME = 'prompt_label_moves' THEN
    SELECT a.id, a.owner_id INTO app, owner FROM prompts p JOIN applications a ON a.id = p.application_id WHERE p.id = NEW.prompt_id;
  ELSE
    SELECT a.id, a.owner_id INTO app, owner FROM workflows w JOIN applications a ON a.id = w.application_id WHERE w.id = NEW.workflow_id;
  END IF;
  INSERT INTO events (id, type, occurred_at, user_ids, application_id, data)
  VALUES ('label_move_' || NEW.id,
          CASE WHEN NEW.name <> 'production' THEN 'version.label_moved'
               WHEN NEW.to_version < NEW.from_version THEN 'version.rolled_back'
               ELSE 'version.promoted' END,
          NEW.created_at, CASE WHEN owner IS NULL THEN '{}'::uuid[] ELSE ARRAY[owner] END, app,
          jsonb_build_object('application_id', app, 'label', NEW.name, 'from_version', NEW.from_version,
            'to_version', NEW.to_version, 'reason', NEW.reason, 'actor_id', NEW.actor_id));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "prompt_label_moves_events" AFTER INSERT ON "prompt_label_moves" FOR EACH ROW EXECUTE FUNCTION pm_label_move_event();
--> statement-breakpoint
CREATE TRIGGER "workflow_label_moves_events" AFTER INSERT ON "workflow_label_moves" FOR EACH ROW EXECUTE FUNCTION pm_label_move_event();
--> statement-breakpoint
CREATE FUNCTION "pm_experiment_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE owner uuid;
BEGIN
  IF TG_OP = 'UPDATE' AND NOT (OLD.status = 'running' AND NEW.status = 'ended') THEN RETURN NULL; END IF;
  SELECT owner_id INTO owner FROM applications WHERE id = NEW.application_id;
  INSERT INTO events (id, type, occurred_at, user_ids, application_id, data)
  VALUES ('experiment_' || NEW.id || CASE WHEN TG_OP = 'INSERT' THEN '_started' ELSE '_ended' END,
          CASE WHEN TG_OP = 'INSERT' THEN 'experiment.started'
               WHEN NEW.outcome = 'rolled_back' THEN 'experiment.rolled_back'
               ELSE 'experiment.ended' END,
          CASE WHEN TG_OP = 'INSERT' THEN NEW.started_at ELSE coalesce(NEW.ended_at, now()) END,
          CASE WHEN owner IS NULL THEN '{}'::uuid[] ELSE ARRAY[owner] END, NEW.application_id,
          jsonb_build_object('experiment_id', NEW.id, 'application_id', NEW.application_id, 'arms', NEW.arms,
            'control_version', NEW.control_version, 'outcome', NEW.outcome,
            'winner_version', NEW.winner_version, 'reason', NEW.end_reason));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "experiments_events" AFTER INSERT OR UPDATE ON "experiments" FOR EACH ROW EXECUTE FUNCTION pm_experiment_event();
--> statement-breakpoint
CREATE FUNCTION "pm_eval_run_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE app uuid; owner uuid;
BEGIN
  IF OLD.status NOT IN ('queued', 'running') OR NEW.status NOT IN ('passed', 'failed', 'error') THEN RETURN NULL; END IF;
  SELECT a.id, a.owner_id INTO app, owner FROM prompts p JOIN applications a ON a.id = p.application_id WHERE p.id = NEW.prompt_id;
  INSERT INTO events (id, type, occurred_at, user_ids, application_id, data)
  VALUES ('eval_run_' || NEW.id, CASE WHEN NEW.status = 'passed' THEN 'eval_run.passed' ELSE 'eval_run.failed' END,
          coalesce(NEW.finished_at, now()), CASE WHEN owner IS NULL THEN '{}'::uuid[] ELSE ARRAY[owner] END, app,
          jsonb_build_object('eval_run_id', NEW.id, 'application_id', app, 'version', NEW.version,
            'status', NEW.status, 'cases', NEW.cases, 'passed', NEW.passed, 'error', NEW.error));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "eval_runs_events" AFTER UPDATE ON "eval_runs" FOR EACH ROW EXECUTE FUNCTION pm_eval_run_event();
--> statement-breakpoint
CREATE FUNCTION "pm_subscription_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE owner uuid; kind text;
BEGIN
  IF NEW.status = 'active' AND (TG_OP = 'INSERT' OR OLD.status = 'incomplete') THEN kind := 'started';
  ELSIF TG_OP = 'UPDATE' AND NEW.status = 'canceled' AND OLD.status <> 'canceled' THEN kind := 'ended';
  ELSE RETURN NULL; END IF;
  SELECT owner_id INTO owner FROM applications WHERE id = NEW.application_id;
  INSERT INTO events (id, type, occurred_at, user_ids, application_id, data)
  VALUES ('subscription_' || NEW.id || '_' || kind, 'subscription.' || kind, now(),
          ARRAY[NEW.subscriber_id] || CASE WHEN owner IS NULL THEN '{}'::uuid[] ELSE ARRAY[owner] END,
          NEW.application_id,
          jsonb_build_object('subscription_id', NEW.id, 'application_id', NEW.application_id,
            'package_id', NEW.package_id, 'subscriber_id', NEW.subscriber_id, 'status', NEW.status,
            'current_period_start', NEW.current_period_start, 'current_period_end', NEW.current_period_end));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "subscriptions_events" AFTER INSERT OR UPDATE ON "subscriptions" FOR EACH ROW EXECUTE FUNCTION pm_subscription_event();
--> statement-breakpoint
CREATE FUNCTION "pm_dispute_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE payer uuid;
BEGIN
  IF NEW.kind <> 'dispute' OR (TG_OP = 'UPDATE' AND OLD.status = NEW.status) THEN RETURN NULL; END IF;
  SELECT user_id INTO payer FROM payments WHERE id = NEW.payment_id;
  INSERT INTO events (id, type, occurred_at, user_ids, amount_micros, data)
  VALUES ('dispute_' || NEW.id || '_' || NEW.status,
          CASE WHEN TG_OP = 'INSERT' THEN 'dispute.opened' ELSE 'dispute.updated' END, now(),
          CASE WHEN payer IS NULL THEN '{}'::uuid[] ELSE ARRAY[payer] END, NEW.amount_cents * 10000,
          jsonb_build_object('dispute_id', NEW.id, 'payment_id', NEW.payment_id, 'status', NEW.status,
            'amount_cents', NEW.amount_cents, 'reason', NEW.reason));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "payment_reversals_events" AFTER INSERT OR UPDATE ON "payment_reversals" FOR EACH ROW EXECUTE FUNCTION pm_dispute_event();
--> statement-breakpoint
-- Facts from before the log: every charged call still kept and every visible ledger movement.
INSERT INTO events (id, type, occurred_at, user_ids, application_id, amount_micros, data)
SELECT 'call_' || i.id, 'call.charged', i.created_at,
       CASE WHEN i.caller_user_id IS NULL THEN '{}'::uuid[] ELSE ARRAY[i.caller_user_id] END,
       i.application_id, i.charged_cents * 10000, pm_call_event_data(i)
FROM invocations i
WHERE pm_call_charged(i.status, i.charged_cents, i.hold_id, i.subscription_id)
ORDER BY i.created_at;
--> statement-breakpoint
SELECT pm_ledger_events(array_agg(id ORDER BY created_at)) FROM ledger_transactions
WHERE kind IN ('top_up', 'reversal', 'subscription', 'payout', 'payout_paid', 'payout_return', 'x402_credit');
--> statement-breakpoint
-- An app's error rate jumped in a 15-minute window (events/app-health.ts): one row per app and
-- window, written once whichever process finds it; its event is written with it.
CREATE TABLE "app_health_alerts" (
	"application_id" uuid NOT NULL REFERENCES "applications"("id") ON DELETE CASCADE,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"calls" integer NOT NULL,
	"errors" integer NOT NULL,
	"error_rate" double precision NOT NULL,
	"baseline_rate" double precision NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "app_health_alerts_pkey" PRIMARY KEY ("application_id", "window_start")
);
--> statement-breakpoint
CREATE FUNCTION "pm_app_health_event"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE owner uuid;
BEGIN
  SELECT owner_id INTO owner FROM applications WHERE id = NEW.application_id;
  INSERT INTO events (id, type, occurred_at, user_ids, application_id, data)
  VALUES ('app_health_' || NEW.application_id || '_' || extract(epoch FROM NEW.window_start)::bigint,
          'app.error_rate_jumped', NEW.window_end,
          CASE WHEN owner IS NULL THEN '{}'::uuid[] ELSE ARRAY[owner] END, NEW.application_id,
          jsonb_build_object('application_id', NEW.application_id, 'window_start', NEW.window_start,
            'window_end', NEW.window_end, 'calls', NEW.calls, 'errors', NEW.errors,
            'error_rate', NEW.error_rate, 'baseline_rate', NEW.baseline_rate));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "app_health_alerts_events" AFTER INSERT ON "app_health_alerts" FOR EACH ROW EXECUTE FUNCTION pm_app_health_event();
