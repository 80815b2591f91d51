import { sql } from "drizzle-orm";
import { type Database, preparedStatement, queryRows, writerFor } from "../../db/client.ts";
import { APP_STATS_ADDED, OWNER_STATS_ADDED, ROLLUP_SHARDS } from "../analytics/rollups.ts";
import { MICROS_PER_CENT } from "../billing/money.ts";

/**
 * A wallet-paid call's record in three steps (docs/decisions/037-call-intent.md), so that only a
 * one-row synchronous write stays between the upstream's answer and the caller:
 *
 * 1. Intent, sent as soon as the call is paid and run while the upstream works, committed
 *    asynchronously: a plan's included call or the price spent from the hold, and the invocation
 *    row as `pending` (nothing charged on it yet, `spent_micros` naming what the hold spent).
 * 2. Completion, after the upstream answered and before the answer (or a stream's first content)
 *    is sent, committed synchronously: the pending row becomes a successful, charged call. Its
 *    commit writes WAL, so its flush makes the earlier intent durable too.
 * 3. Finish, after the answer, asynchronous: the model cost (on the hold while it is open) and the
 *    rollups.
 *
 * A failed call's pending row is voided: deleted, its price given back to the hold (or its
 * included call to the plan). A pending row past `void_after` was never completed (the completion
 * always precedes the answer) and the sweeper voids it; a completed one left unfinished it
 * finishes. Closing a hold voids its pending rows first, in the same statement (billing/holds.ts).
 * Each step is batched like the recorder: a call alone is written at once, calls that arrive while
 * a statement runs share the next.
 */

export interface CallIntent {
  id: string;
  applicationId: string;
  callerUserId: string;
  apiKeyId?: string | null;
  endUser?: string | null;
  mode: "completion" | "chat";
  model: string | null;
  /** After this the sweeper voids the call if it is still pending (its deadline and a margin). */
  voidAfter: Date;
  holdId: string;
  amountCents: number;
  feePercent: number;
}

/**
 * How the intent paid: `plan` (an included call), `hold` (the price, `cents`), `refused` (recorded
 * as failed). `createdAt`: the row's, which every later step names it by (with its id); the
 * database's clock when the payment was decided (after the intent's locks), in whole milliseconds.
 * Undefined when no row was written (the app is gone).
 */
export type IntentOutcome = { createdAt?: Date } & (
  | { outcome: "plan"; cents: 0 }
  | { outcome: "hold"; cents: number }
  | { outcome: "refused"; cents: 0 }
);

/** What the completion writes on the row. */
export interface Completion {
  id: string;
  createdAt: Date;
  /** What the call's row charges (0: a plan's call, or an embedded call its owner paid); else its price. */
  chargedCents: number;
  feePercent: number;
  model: string | null;
  latencyMs: number;
  inputTokens: number;
  outputTokens: number;
}

/** What the finish writes (only what is given; a stream's tokens are known only at its end). */
export interface Finish {
  id: string;
  createdAt: Date;
  model?: string | null;
  latencyMs?: number;
  inputTokens?: number;
  outputTokens?: number;
  modelCostMicros?: number;
}

export interface VoidCall {
  id: string;
  createdAt: Date;
}

const MAX_BATCH = 256;

/**
 * Runs items through a statement in batches: one at once when idle, the ones queued meanwhile
 * together next. A failed batch is run again item by item, so one bad item fails only itself.
 */
class Batcher<In, Out> {
  private queue: { item: In; resolve(out: Out): void; reject(error: unknown): void }[] = [];
  private writing = false;
  readonly stats = { batches: 0, items: 0, fallbacks: 0 };
  private readonly run: (items: In[]) => Promise<Out[]>;

  constructor(run: (items: In[]) => Promise<Out[]>) {
    this.run = run;
  }

  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain() {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        this.stats.batches += 1;
        this.stats.items += batch.length;
        try {
          const outs = await this.run(batch.map((entry) => entry.item));
          for (const [i, entry] of batch.entries()) entry.resolve(outs[i] as Out);
        } catch (error) {
          if (batch.length === 1) {
            batch[0]?.reject(error);
            continue;
          }
          this.stats.fallbacks += 1;
          await Promise.all(
            batch.map((entry) =>
              this.run([entry.item]).then((outs) => entry.resolve(outs[0] as Out), entry.reject),
            ),
          );
        }
      }
    } finally {
      this.writing = false;
    }
  }
}

interface Batchers {
  intent: Batcher<CallIntent, IntentOutcome>;
  complete: Batcher<Completion, number | undefined>;
  finish: Batcher<Finish, boolean>;
  void: Batcher<VoidCall, boolean>;
}

const batchers = new WeakMap<Database, Batchers>();

function batchersFor(db: Database): Batchers {
  let found = batchers.get(db);
  if (!found) {
    const writer = writerFor(db);
    found = {
      intent: new Batcher((items) => writeIntents(writer, items)),
      complete: new Batcher((items) => writeCompletions(writer, items)),
      finish: new Batcher((items) => writeFinishes(writer, items)),
      void: new Batcher((items) => writeVoids(writer, items)),
    };
    batchers.set(db, found);
  }
  return found;
}

/** The intent (asynchronous commit): resolves once its statement returned, with how the call was paid. */
export function submitIntent(db: Database, intent: CallIntent): Promise<IntentOutcome> {
  return batchersFor(db).intent.submit(intent);
}

/**
 * The completion (synchronous commit): the cents the call's hold spent once the pending row became
 * a successful call (the lower of its price and the app's price now); undefined when it was voided.
 */
export function submitCompletion(db: Database, completion: Completion): Promise<number | undefined> {
  return batchersFor(db).complete.submit(completion);
}

/** The finish (asynchronous commit): model cost and rollups; false if the call was finished already. */
export function submitFinish(db: Database, finish: Finish): Promise<boolean> {
  return batchersFor(db).finish.submit(finish);
}

/** The void (asynchronous commit: a lost one is done again by the sweeper): false if it was not pending. */
export function submitVoid(db: Database, call: VoidCall): Promise<boolean> {
  return batchersFor(db).void.submit(call);
}

const unsettled = new WeakMap<Database, Set<Promise<unknown>>>();

/**
 * Keeps track of work a call left running after its answer (its finish, and the lease's end after
 * it), so that a closing server can wait for it (`callStepsSettled`) before closing its leases.
 */
export function trackCallStep(db: Database, step: Promise<unknown>): void {
  let steps = unsettled.get(db);
  if (!steps) {
    steps = new Set();
    unsettled.set(db, steps);
  }
  const tracked = step.catch(() => {}).finally(() => steps.delete(tracked));
  steps.add(tracked);
}

/** Resolves once every step tracked so far (and any it started) has settled. */
export async function callStepsSettled(db: Database): Promise<void> {
  const steps = unsettled.get(db);
  while (steps && steps.size > 0) await Promise.allSettled([...steps]);
}

/** How the steps have been written (statements, items, batches retried item by item). */
export function intentStats(db: Database) {
  const found = batchers.get(db);
  return {
    intent: { ...found?.intent.stats },
    complete: { ...found?.complete.stats },
    finish: { ...found?.finish.stats },
    void: { ...found?.void.stats },
  };
}

async function writeIntents(db: Database, items: CallIntent[]): Promise<IntentOutcome[]> {
  const rows = items.map((item) => ({
    id: item.id,
    application_id: item.applicationId,
    caller_user_id: item.callerUserId,
    api_key_id: item.apiKeyId ?? null,
    end_user: item.endUser ?? null,
    mode: item.mode,
    model: item.model,
    void_after: item.voidAfter.toISOString(),
    hold_id: item.holdId,
    amount: item.amountCents,
    fee_percent: item.feePercent,
  }));
  const [row] = await intentStatement(db, [JSON.stringify(rows)]);
  const charged = new Map(
    (row?.charged ? row.charged.split(",") : []).map((pair) => {
      const [id = "", cents = "0"] = pair.split(":");
      return [id, Number(cents)] as const;
    }),
  );
  const covered = new Set(row?.covered ? row.covered.split(",") : []);
  const created = new Map(
    (row?.created ? row.created.split(",") : []).map((pair) => {
      const [id = "", ms = "0"] = pair.split("=");
      return [id, new Date(Number(ms))] as const;
    }),
  );
  return items.map((item): IntentOutcome => {
    const createdAt = created.get(item.id);
    if (covered.has(item.id)) return { outcome: "plan", cents: 0, createdAt };
    const cents = charged.get(item.id);
    return cents !== undefined
      ? { outcome: "hold", cents, createdAt }
      : { outcome: "refused", cents: 0, createdAt };
  });
}

async function writeCompletions(db: Database, items: Completion[]): Promise<(number | undefined)[]> {
  const rows = items.map((item) => ({
    id: item.id,
    created_at: item.createdAt.toISOString(),
    charged: item.chargedCents,
    fee_percent: item.feePercent,
    model: item.model,
    latency_ms: item.latencyMs,
    input_tokens: item.inputTokens,
    output_tokens: item.outputTokens,
  }));
  const done = new Map(
    (await completeStatement(db, [JSON.stringify(rows)])).map((r) => [r.id, Number(r.cents ?? 0)] as const),
  );
  return items.map((item) => done.get(item.id));
}

async function writeFinishes(db: Database, items: Finish[]): Promise<boolean[]> {
  const rows = items.map((item) => ({
    id: item.id,
    created_at: item.createdAt.toISOString(),
    model: item.model ?? null,
    latency_ms: item.latencyMs ?? null,
    input_tokens: item.inputTokens ?? null,
    output_tokens: item.outputTokens ?? null,
    model_cost_micros: item.modelCostMicros ?? null,
  }));
  const [row] = await finishStatement(db, [JSON.stringify(rows)]);
  const done = new Set(row?.finished ? row.finished.split(",") : []);
  return items.map((item) => done.has(item.id));
}

async function writeVoids(db: Database, items: VoidCall[]): Promise<boolean[]> {
  const rows = items.map((item) => ({ id: item.id, created_at: item.createdAt.toISOString() }));
  const [row] = await voidStatement(db, [JSON.stringify(rows)]);
  const done = new Set(row?.voided ? row.voided.split(",") : []);
  return items.map((item) => done.has(item.id));
}

/**
 * Crash catch-up (run by the hold sweeper before it closes expired holds): pending calls past
 * their `void_after` were never answered and are voided; completed calls left unfinished are
 * finished (rollups; their model cost, known only to the crashed process, is lost). Answers how
 * many of each.
 */
export async function sweepCallIntents(
  db: Database,
  now: Date = new Date(),
): Promise<{ voided: number; finished: number }> {
  const stale = await queryRows<{ id: string; created_at: string | Date; status: string }>(
    db,
    sql`select id, created_at, status from invocations
        where unfinished and void_after < ${now.toISOString()}::timestamptz
        order by void_after limit 500`,
  );
  const at = (value: string | Date) => new Date(value);
  const pending = stale.filter((row) => row.status === "pending");
  const completed = stale.filter((row) => row.status !== "pending");
  let voided = 0;
  let finished = 0;
  if (pending.length > 0)
    voided = (
      await writeVoids(
        db,
        pending.map((row) => ({ id: row.id, createdAt: at(row.created_at) })),
      )
    ).filter(Boolean).length;
  if (completed.length > 0)
    finished = (
      await writeFinishes(
        db,
        completed.map((row) => ({ id: row.id, createdAt: at(row.created_at) })),
      )
    ).filter(Boolean).length;
  return { voided, finished };
}

const shard = `(pg_backend_pid() % ${ROLLUP_SHARDS})::smallint`;

/**
 * The intents of a batch in one statement, committed without waiting for the WAL flush (the
 * completion's synchronous commit flushes it). The money is the recorder's (recorder.ts): a plan's
 * included call while the pair's plan has one left (subscriptions locked in id order), else the
 * lower of the call's price and the app's price now spent from the hold if it is open, not
 * expired and has room. Each call is inserted `pending` and `unfinished`, charging nothing yet,
 * with the price its hold spent (`spent_micros`) and its fee (`fee_micros`, as the hold counts it);
 * a call its hold refused is inserted as failed (`payment_failed`), to be finished (rollups).
 */
const intentStatement = preparedStatement<{
  charged: string | null;
  covered: string | null;
  created: string | null;
}>(
  "pm_call_intent_v3",
  `with v as (
     select * from json_to_recordset($1::json) as v(
       id uuid, application_id uuid, caller_user_id uuid, api_key_id uuid, end_user text, mode text,
       model text, void_after timestamptz, hold_id uuid, amount bigint,
       fee_percent numeric)
   ), priced as (
     select v.id, p.amount, f.micros, f.fee
     from v join applications a on a.id = v.application_id
     cross join lateral (select least(v.amount,
       case when a.pending_price_at is not null and a.pending_price_at <= now()
            then a.pending_price_cents else a.price_cents end)::bigint as amount) p
     cross join lateral (select p.amount * ${MICROS_PER_CENT} as micros,
       round(p.amount * ${MICROS_PER_CENT} * v.fee_percent / 100)::bigint as fee) f
   ), pairs as (
     select caller_user_id as payer, application_id as app, count(*)::int as n
     from v group by caller_user_id, application_id
   ), open_plans as (
     select s.id, s.subscriber_id, s.application_id, s.current_period_start, s.current_period_end,
       s.calls_included - s.calls_used as room
     from subscriptions s join pairs p on s.subscriber_id = p.payer and s.application_id = p.app
     where s.status = 'active' and s.current_period_end > now() and s.calls_used < s.calls_included
     order by s.id
     for update of s
   ), plan as (
     select distinct on (o.subscriber_id, o.application_id) o.id, o.subscriber_id, o.application_id,
       o.current_period_start, least(p.n, o.room) as take
     from open_plans o join pairs p on p.payer = o.subscriber_id and p.app = o.application_id
     order by o.subscriber_id, o.application_id, o.current_period_end
   ), used as (
     update subscriptions set calls_used = subscriptions.calls_used + plan.take
     from plan where subscriptions.id = plan.id
     returning subscriptions.id
   ), covered as (
     select r.id, plan.id as subscription_id, plan.current_period_start
     from (select id, caller_user_id, application_id,
             row_number() over (partition by caller_user_id, application_id order by id) as rn
           from v) r
     join plan on plan.subscriber_id = r.caller_user_id and plan.application_id = r.application_id
     where r.rn <= plan.take
   ), s as (
     select v.hold_id, sum(p.micros)::bigint as added, sum(p.fee)::bigint as fee, count(*)::int as calls
     from v join priced p on p.id = v.id
     where v.id not in (select id from covered) group by v.hold_id
   ), lockh as (
     -- The holds locked in id order, after the plans (as every statement takes them), so batches
     -- of different steps running at once cannot deadlock.
     select id from holds where id in (select hold_id from v) and (select count(*) from used) >= 0
     order by id for update
   ), hold as (
     update holds set settled_micros = settled_micros + s.added, fee_micros = fee_micros + s.fee,
       calls = holds.calls + s.calls
     from s where holds.id = s.hold_id and holds.id in (select id from lockh)
       and status = 'held' and expires_at > now()
       and settled_micros + s.added <= amount_micros
     returning holds.id
   ), calls as (
     select v.*, c.subscription_id as covered_by, c.current_period_start as period,
       hold.id as paid_from, pr.amount as cents, pr.micros, pr.fee
     from v join priced pr on pr.id = v.id
     left join covered c on c.id = v.id
     left join hold on hold.id = v.hold_id and c.id is null
   ), recorded as (
     insert into invocations (id, application_id, caller_user_id, api_key_id, end_user, mode, status,
       error_type, model, latency_ms, input_tokens, output_tokens, charged_cents, fee_micros,
       model_cost_micros, model_cost_deducted_micros, hold_id, subscription_id, plan_period_start,
       created_at, spent_micros, void_after, unfinished)
     select id, application_id, caller_user_id, api_key_id, end_user, mode,
       case when covered_by is null and paid_from is null then 'error' else 'pending' end,
       case when covered_by is null and paid_from is null then 'payment_failed' end,
       model, 0, 0, 0, 0, case when paid_from is not null then fee else 0 end, 0, 0,
       paid_from, covered_by, period,
       -- When the payment was decided (after the locks above), as the recorder's rows said.
       date_trunc('milliseconds', clock_timestamp()),
       case when paid_from is not null then micros end, void_after, true
     from calls
     returning id, created_at
   )
   select (select string_agg(id::text || ':' || cents, ',') from calls where paid_from is not null) as charged,
     (select string_agg(id::text, ',') from covered) as covered,
     (select string_agg(id::text || '=' || (extract(epoch from created_at) * 1000)::bigint, ',')
      from recorded) as created,
     (select count(*) from used) as plans,
     set_config('synchronous_commit', 'off', true) as async`,
);

/**
 * The completions of a batch: each pending row (found by its primary key and `created_at`, so a
 * table partitioned by time prunes) becomes a successful call. Committed synchronously (the
 * server's default): its WAL flush also makes every earlier intent durable. A call pays the lower
 * of the price its intent spent and the app's price now (decision 025: a decrease applies at
 * once): when the price dropped while the call ran, the difference and its share of the fee go
 * back to the hold (locked first, as every statement locks holds before invocations). `charged`
 * is 0 for a call that charges nothing on its row (a plan's, or an embedded call its owner paid).
 * Answers the rows it completed, each with the cents its hold spent; a row no longer pending was
 * voided (never charged).
 */
const completeStatement = preparedStatement<{ id: string; cents: string | null }>(
  "pm_call_complete_v1",
  `with v as (
     select * from json_to_recordset($1::json) as v(id uuid, created_at timestamptz, charged bigint,
       fee_percent numeric, model text, latency_ms integer, input_tokens integer, output_tokens integer)
   ), dropped as (
     select i.id, i.hold_id, i.spent_micros, i.fee_micros, n.cents, n.cents * ${MICROS_PER_CENT} as micros,
       round(n.cents * ${MICROS_PER_CENT} * v.fee_percent / 100)::bigint as fee
     from v join invocations i on i.id = v.id and i.created_at = v.created_at
     join applications a on a.id = i.application_id
     cross join lateral (select case when a.pending_price_at is not null and a.pending_price_at <= now()
                                     then a.pending_price_cents else a.price_cents end::bigint as cents) n
     where i.status = 'pending' and i.hold_id is not null and n.cents * ${MICROS_PER_CENT} < i.spent_micros
   ), lockh as (
     select id from holds where id in (select hold_id from dropped) order by id for update
   ), done as (
     update invocations i set status = 'success',
       charged_cents = case when v.charged > 0 then coalesce(d.cents, i.spent_micros / ${MICROS_PER_CENT}) else 0 end,
       spent_micros = coalesce(d.micros, i.spent_micros), fee_micros = coalesce(d.fee, i.fee_micros),
       model = v.model, latency_ms = v.latency_ms, input_tokens = v.input_tokens, output_tokens = v.output_tokens
     from v left join dropped d on d.id = v.id
     where i.id = v.id and i.created_at = v.created_at and i.status = 'pending'
       and (select count(*) from lockh) >= 0
     returning i.id, i.spent_micros
   ), back as (
     update holds h set settled_micros = h.settled_micros - g.micros, fee_micros = h.fee_micros - g.fee
     from (select d.hold_id, sum(d.spent_micros - d.micros)::bigint as micros, sum(d.fee_micros - d.fee)::bigint as fee
           from dropped d join done on done.id = d.id group by d.hold_id) g
     where h.id = g.hold_id
     returning h.id
   )
   select id::text as id, (spent_micros / ${MICROS_PER_CENT})::text as cents from done
   where (select count(*) from back) >= 0`,
);

/**
 * The finishes of a batch, committed asynchronously: each completed (or refused) call not yet
 * finished gets what is given of its model, latency, tokens and model cost, and is marked
 * finished; the model cost its creator's share pays (at most that share) goes on its hold while
 * the hold is open (locked first, in id order, so a close either sees it or the call deducts
 * nothing: the model cost sweep takes it from the creator's earnings instead); then the app and
 * owner rollups, as the recorder adds them (recorder.ts).
 */
const finishStatement = preparedStatement<{ finished: string | null }>(
  "pm_call_finish_v1",
  `with v as (
     select * from json_to_recordset($1::json) as v(id uuid, created_at timestamptz, model text,
       latency_ms integer, input_tokens integer, output_tokens integer, model_cost_micros bigint)
   ), target as (
     select i.hold_id from invocations i join v on i.id = v.id and i.created_at = v.created_at
     where i.unfinished and i.status <> 'pending' and i.hold_id is not null
   ), lockh as (
     select id from holds where id in (select hold_id from target) and status = 'held'
     order by id for update
   ), done as (
     update invocations i set unfinished = false,
       model = coalesce(v.model, i.model), latency_ms = coalesce(v.latency_ms, i.latency_ms),
       input_tokens = coalesce(v.input_tokens, i.input_tokens),
       output_tokens = coalesce(v.output_tokens, i.output_tokens),
       model_cost_micros = coalesce(v.model_cost_micros, 0),
       model_cost_deducted_micros = case
         when i.status = 'success' and i.hold_id in (select id from lockh)
         then greatest(least(coalesce(v.model_cost_micros, 0), coalesce(i.spent_micros, 0) - i.fee_micros), 0)
         else 0 end
     from v where i.id = v.id and i.created_at = v.created_at and i.unfinished and i.status <> 'pending'
     returning i.id, i.application_id, i.caller_user_id, i.end_user, i.status, i.error_type,
       i.latency_ms, i.input_tokens, i.output_tokens, i.created_at, i.charged_cents, i.fee_micros,
       i.model_cost_micros, i.model_cost_deducted_micros, i.hold_id
   ), hold as (
     update holds h set model_cost_micros = h.model_cost_micros + d.micros
     from (select hold_id, sum(model_cost_deducted_micros)::bigint as micros from done
           where hold_id is not null group by hold_id) d
     where h.id = d.hold_id and d.micros > 0
     returning h.id
   ), calls as (
     select d.id, d.application_id, d.status, d.error_type, d.latency_ms, d.input_tokens,
       d.output_tokens, d.created_at, (d.created_at at time zone 'UTC')::date as day,
       coalesce(d.end_user, 'account:' || d.caller_user_id::text) as user_key, a.owner_id,
       d.charged_cents as charged, d.fee_micros as fee, d.model_cost_micros as model_cost
     from done d left join applications a on a.id = d.application_id
   ), stats as (
     insert into app_daily_stats as s (application_id, day, shard, invocations, successes, errors,
       latency_ms_sum, input_tokens, output_tokens, revenue_cents, fee_micros, model_cost_micros,
       last_invocation_at)
     select application_id, day, ${shard}, count(*), count(*) filter (where status = 'success'),
       count(*) filter (where status <> 'success'), sum(latency_ms), sum(input_tokens),
       sum(output_tokens), coalesce(sum(charged) filter (where status = 'success'), 0),
       coalesce(sum(fee) filter (where status = 'success' and charged > 0), 0), sum(model_cost),
       max(created_at)
     from calls group by application_id, day
     on conflict (application_id, day, shard) do update set ${APP_STATS_ADDED}
   ), owner_stats as (
     insert into owner_daily_stats as s (owner_id, day, shard, invocations, successes, errors,
       latency_ms_sum, input_tokens, output_tokens)
     select owner_id, day, ${shard}, count(*), count(*) filter (where status = 'success'),
       count(*) filter (where status <> 'success'), sum(latency_ms), sum(input_tokens), sum(output_tokens)
     from calls group by owner_id, day
     on conflict (owner_id, day, shard) do update set ${OWNER_STATS_ADDED}
   ), app_user as (
     insert into app_users as u (application_id, end_user, last_day)
     select c.application_id, c.user_key, max(c.day) from calls c
     where not exists (select 1 from app_users x
                       where x.application_id = c.application_id and x.end_user = c.user_key and x.last_day >= c.day)
     group by c.application_id, c.user_key
     on conflict (application_id, end_user) do update set last_day = excluded.last_day
       where u.last_day < excluded.last_day
   ), owner_user as (
     insert into owner_users as o (owner_id, end_user, last_day)
     select c.owner_id, c.user_key, max(c.day) from calls c
     where not exists (select 1 from owner_users x
                       where x.owner_id = c.owner_id and x.end_user = c.user_key and x.last_day >= c.day)
     group by c.owner_id, c.user_key
     on conflict (owner_id, end_user) do update set last_day = excluded.last_day
       where o.last_day < excluded.last_day
   ), app_error as (
     insert into app_daily_errors as e (application_id, day, error_type, count)
     select application_id, day, coalesce(error_type, ''), count(*) from calls where status = 'error'
     group by application_id, day, coalesce(error_type, '')
     on conflict (application_id, day, error_type) do update set count = e.count + excluded.count
   ), owner_error as (
     insert into owner_daily_errors as e (owner_id, day, error_type, shard, count)
     select owner_id, day, coalesce(error_type, ''), ${shard}, count(*) from calls where status = 'error'
     group by owner_id, day, coalesce(error_type, '')
     on conflict (owner_id, day, error_type, shard) do update set count = e.count + excluded.count
   )
   select (select string_agg(id::text, ',') from calls) as finished,
     (select count(*) from hold) as holds,
     set_config('synchronous_commit', 'off', true) as async`,
);

/**
 * The voids of a batch, committed asynchronously (a lost void leaves the row pending, and the
 * sweeper voids it once past `void_after`; until then it charges nothing). Locks in the order every
 * money statement takes them: the calls' subscriptions, then their holds (id order), then the rows.
 * Each row still pending is deleted, its price and fee given back to its hold (only while the hold
 * is open: a close voids its pending rows itself) and its included call to its plan's period.
 */
const voidStatement = preparedStatement<{ voided: string | null }>(
  "pm_call_void_v1",
  `with v as (
     select * from json_to_recordset($1::json) as v(id uuid, created_at timestamptz)
   ), target as (
     select i.id, i.hold_id, i.subscription_id from invocations i
     join v on i.id = v.id and i.created_at = v.created_at where i.status = 'pending'
   ), locks as (
     select id from subscriptions where id in (select subscription_id from target) order by id for update
   ), lockh as (
     select id from holds where id in (select hold_id from target) and status = 'held'
       and (select count(*) from locks) >= 0
     order by id for update
   ), gone as (
     delete from invocations i using v
     where i.id = v.id and i.created_at = v.created_at and i.status = 'pending'
       and (i.hold_id is null or i.hold_id in (select id from lockh))
     returning i.id, i.hold_id, i.spent_micros, i.fee_micros, i.subscription_id, i.plan_period_start
   ), back as (
     update holds h set settled_micros = h.settled_micros - g.micros, fee_micros = h.fee_micros - g.fee,
       calls = h.calls - g.n
     from (select hold_id, sum(coalesce(spent_micros, 0))::bigint as micros, sum(fee_micros)::bigint as fee,
             count(*)::int as n
           from gone where hold_id is not null group by hold_id) g
     where h.id = g.hold_id
     returning h.id
   ), plans as (
     update subscriptions s set calls_used = greatest(s.calls_used - g.n, 0)
     from (select subscription_id, plan_period_start, count(*)::int as n from gone
           where subscription_id is not null group by subscription_id, plan_period_start) g
     where s.id = g.subscription_id and s.current_period_start = g.plan_period_start
     returning s.id
   )
   select (select string_agg(id::text, ',') from gone) as voided,
     (select count(*) from back) as holds, (select count(*) from plans) as plans,
     set_config('synchronous_commit', 'off', true) as async`,
);
