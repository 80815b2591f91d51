import { type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { type Database, executePrepared, queryRows } from "../../db/client.ts";

/**
 * Today's stats of one app (and of one owner) are spread over this many rows. The shard is the
 * database connection's backend pid modulo this, so the calls of one process's pool (20
 * connections) never wait on each other's shard row, whose lock lasts until the commit's WAL flush.
 */
export const ROLLUP_SHARDS = 32;
const SUMMED_STATS = [
  "invocations",
  "successes",
  "errors",
  "latency_ms_sum",
  "input_tokens",
  "output_tokens",
];
/** The connection's shard of today's rollup rows. */
const SHARD_SQL = `(pg_backend_pid() % ${ROLLUP_SHARDS})::smallint`;

/** The `do update set` of a rollup upsert (alias `s`): each summed column adds the new row's value. */
const addedTogether = (columns: string[]) => columns.map((c) => `${c} = s.${c} + excluded.${c}`).join(", ");
/** For `app_daily_stats` (one call per insert, or a batch's sums: ROLLUPS_FROM_CALLS). */
export const APP_STATS_ADDED = `${addedTogether([...SUMMED_STATS, "revenue_cents", "fee_micros", "model_cost_micros"])}, last_invocation_at = greatest(s.last_invocation_at, excluded.last_invocation_at)`;
/** For `app_version_daily_stats`. */
export const VERSION_STATS_ADDED = addedTogether([
  ...SUMMED_STATS,
  "revenue_cents",
  "fee_micros",
  "model_cost_micros",
  "model_cost_deducted_micros",
]);
/** For `owner_daily_stats`. */
export const OWNER_STATS_ADDED = addedTogether(SUMMED_STATS);

export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/**
 * Adds one invocation to its app's and its owner's rollups, inside the transaction that records it,
 * in one round trip, into the connection's shard. A user's rows are written only on their first
 * call of the day (the `not exists` guard reads without locking), so a busy end user
 * does not make every call to the app wait on one row lock until commit. `alongside` is another
 * write (the invocation itself) that joins the same statement, which is then atomic on its own.
 */
export async function addToRollups(
  db: Database,
  call: {
    applicationId: string;
    at: Date;
    status: "success" | "error";
    errorType: string | null;
    latencyMs: number;
    inputTokens: number;
    outputTokens: number;
    revenueCents: number;
    feeMicros: number;
    modelCostMicros: number;
    /** What the creator's share paid of the model cost (0 unless a hold charged the call). */
    modelCostDeductedMicros?: number;
    /** The prompt version that answered (decision 057); null for workflows and unversioned calls. */
    appVersion?: number | null;
    userKey: string;
    /** Why the call was made (docs/decisions/078): only `customer` calls are added (default). */
    purpose?: string;
  },
  alongside?: SQLWrapper,
): Promise<void> {
  // Drizzle embeds a query builder in parentheses already.
  const first: SQL = alongside ? sql`recorded as ${alongside}, ` : sql``;
  // The call as a one-row `calls` relation, added by the same CTEs as a batch (ROLLUPS_FROM_CALLS):
  // one definition of what a call adds to the figures. Prepared: the same text every call, so
  // PostgreSQL plans it once per connection.
  await executePrepared(
    db,
    sql`
    with ${first}calls as (
      select a.id as application_id, a.owner_id, ${utcDay(call.at)}::date as day,
        ${call.userKey}::text as user_key, ${call.status}::text as status,
        ${call.errorType}::text as error_type, ${call.latencyMs}::integer as latency_ms,
        ${call.inputTokens}::integer as input_tokens, ${call.outputTokens}::integer as output_tokens,
        ${call.revenueCents}::bigint as charged, ${call.feeMicros}::bigint as fee,
        ${call.modelCostMicros}::bigint as model_cost,
        ${call.modelCostDeductedMicros ?? 0}::bigint as model_cost_deducted,
        ${call.appVersion ?? null}::integer as app_version, ${call.at.toISOString()}::timestamptz as created_at,
        ${call.purpose ?? "customer"}::text as purpose
      from applications a where a.id = ${call.applicationId}::uuid
    ), ${sql.raw(ROLLUPS_FROM_CALLS)}
    select 1`,
  );
}

/**
 * The day an end user last called, per app (`app_users`) or per owner (`owner_users`), for the
 * `counted` relation (the customer calls of `calls`): written only on a user's first call of the day (the `not exists` guard reads
 * without locking), so a busy end user does not make every call wait on one row lock until commit.
 */
function lastDayOfUsers(table: string, by: string): string {
  return `
     insert into ${table} as u (${by}, end_user, last_day)
     select c.${by}, c.user_key, max(c.day) from counted c
     where not exists (select 1 from ${table} x
                       where x.${by} = c.${by} and x.end_user = c.user_key and x.last_day >= c.day)
     group by c.${by}, c.user_key
     on conflict (${by}, end_user) do update set last_day = excluded.last_day
       where u.last_day < excluded.last_day`;
}

/**
 * A call's latency bucket in `app_daily_latency`: floored to three significant digits, so exact
 * below a second and within 1% above (1234 ms → 1230). Migration 0059 backfilled with the same rule.
 */
export const LATENCY_BUCKET_SQL =
  "(latency_ms / power(10, greatest(length(latency_ms::text) - 3, 0))::int) * power(10, greatest(length(latency_ms::text) - 3, 0))::int";

/**
 * A batch of calls added to the rollups, as CTEs of one statement (billing/call-payment/record.ts,
 * the batch record): the relation `calls` gives one row per call with `application_id`,
 * `owner_id`, `day`, `user_key`, `status`, `error_type`, `latency_ms`, `input_tokens`,
 * `output_tokens`, `charged` (cents), `fee`, `model_cost` and `model_cost_deducted` (micros),
 * `app_version` (null when the call names none), `created_at` and `purpose` (only `customer`
 * calls are counted, decision 078). One row per
 * (app, day), (app, day, version) and (owner, day) in this connection's shard; a user's rows only on their first call
 * of the day (the `not exists` guard reads without locking), as `addToRollups` does for one call.
 */
export const ROLLUPS_FROM_CALLS = `counted as (
     -- Analytics leave out eval traffic (docs/decisions/078): an eval run's case and judge calls
     -- and online-eval judges are recorded (invocations) but add to no rollup.
     select * from calls where purpose not in ('eval', 'online_eval')
   ), stats as (
     insert into app_daily_stats as s (application_id, day, shard, invocations, successes, errors,
       latency_ms_sum, input_tokens, output_tokens, revenue_cents, fee_micros, model_cost_micros,
       last_invocation_at)
     select application_id, day, ${SHARD_SQL}, count(*), count(*) filter (where status = 'success'),
       count(*) filter (where status <> 'success'), sum(latency_ms), sum(input_tokens),
       sum(output_tokens), coalesce(sum(charged) filter (where status = 'success'), 0),
       coalesce(sum(fee) filter (where status = 'success' and charged > 0), 0), sum(model_cost),
       max(created_at)
     from counted group by application_id, day
     on conflict (application_id, day, shard) do update set ${APP_STATS_ADDED}
   ), version_stats as (
     insert into app_version_daily_stats as s (application_id, day, version, shard, invocations,
       successes, errors, latency_ms_sum, input_tokens, output_tokens, revenue_cents, fee_micros,
       model_cost_micros, model_cost_deducted_micros)
     select application_id, day, app_version, ${SHARD_SQL}, count(*),
       count(*) filter (where status = 'success'), count(*) filter (where status <> 'success'),
       sum(latency_ms), sum(input_tokens), sum(output_tokens),
       coalesce(sum(charged) filter (where status = 'success'), 0),
       coalesce(sum(fee) filter (where status = 'success' and charged > 0), 0), sum(model_cost),
       sum(model_cost_deducted)
     from counted where app_version is not null group by application_id, day, app_version
     on conflict (application_id, day, version, shard) do update set ${VERSION_STATS_ADDED}
   ), owner_stats as (
     insert into owner_daily_stats as s (owner_id, day, shard, invocations, successes, errors,
       latency_ms_sum, input_tokens, output_tokens)
     select owner_id, day, ${SHARD_SQL}, count(*), count(*) filter (where status = 'success'),
       count(*) filter (where status <> 'success'), sum(latency_ms), sum(input_tokens), sum(output_tokens)
     from counted group by owner_id, day
     on conflict (owner_id, day, shard) do update set ${OWNER_STATS_ADDED}
   ), latency as (
     -- The answered calls' latency histogram (docs/decisions/081): Explore's median latency.
     insert into app_daily_latency as s (application_id, day, latency_ms, shard, calls)
     select application_id, day, ${LATENCY_BUCKET_SQL}, ${SHARD_SQL}, count(*)
     from counted where status = 'success' group by 1, 2, 3
     on conflict (application_id, day, latency_ms, shard) do update set calls = s.calls + excluded.calls
   ), app_user as (${lastDayOfUsers("app_users", "application_id")}
   ), owner_user as (${lastDayOfUsers("owner_users", "owner_id")}
   ), app_error as (
     insert into app_daily_errors as e (application_id, day, error_type, count)
     select application_id, day, coalesce(error_type, ''), count(*) from counted where status = 'error'
     group by application_id, day, coalesce(error_type, '')
     on conflict (application_id, day, error_type) do update set count = e.count + excluded.count
   ), owner_error as (
     insert into owner_daily_errors as e (owner_id, day, error_type, shard, count)
     select owner_id, day, coalesce(error_type, ''), ${SHARD_SQL}, count(*) from counted where status = 'error'
     group by owner_id, day, coalesce(error_type, '')
     on conflict (owner_id, day, error_type, shard) do update set count = e.count + excluded.count
   )`;

/** The sharded rollups: key columns, summed columns, and columns kept by their maximum. */
const SHARDED = [
  {
    table: "app_daily_stats",
    key: ["application_id", "day"],
    sums: SUMMED_STATS.concat("revenue_cents", "fee_micros", "model_cost_micros"),
    maxima: ["last_invocation_at"],
  },
  {
    table: "app_version_daily_stats",
    key: ["application_id", "day", "version"],
    sums: SUMMED_STATS.concat(
      "revenue_cents",
      "fee_micros",
      "model_cost_micros",
      "model_cost_deducted_micros",
    ),
    maxima: [],
  },
  { table: "app_daily_latency", key: ["application_id", "day", "latency_ms"], sums: ["calls"], maxima: [] },
  { table: "owner_daily_stats", key: ["owner_id", "day"], sums: SUMMED_STATS, maxima: [] },
  { table: "owner_daily_errors", key: ["owner_id", "day", "error_type"], sums: ["count"], maxima: [] },
];

/**
 * Folds the shards of finished days into shard 0, so a 90-day window reads one row per app (or
 * owner) and day instead of up to 32. Readers sum shards anyway, so the figures are the same
 * before and after; a late write to a folded day simply starts a new shard row, which the next run
 * folds. Each table is one statement (delete the shards, add them to shard 0), atomic on its own.
 * Answers the number of shard rows folded.
 */
export async function compactRollups(db: Database, today: string = utcDay(new Date())): Promise<number> {
  let folded = 0;
  for (const { table, key, sums, maxima } of SHARDED) {
    const keys = key.join(", ");
    const columns = [...key, "shard", ...sums, ...maxima].join(", ");
    const values = [...key, "0", ...sums.map((c) => `sum(${c})`), ...maxima.map((c) => `max(${c})`)].join(
      ", ",
    );
    const updates = [
      ...sums.map((c) => `${c} = t.${c} + excluded.${c}`),
      ...maxima.map((c) => `${c} = greatest(t.${c}, excluded.${c})`),
    ].join(", ");
    const [row] = await queryRows<{ n: number }>(
      db,
      sql`with folded as (
            delete from ${sql.raw(table)} where day < ${today}::date and shard <> 0 returning *
          ), added as (
            insert into ${sql.raw(table)} as t (${sql.raw(columns)})
            select ${sql.raw(values)} from folded group by ${sql.raw(keys)}
            on conflict (${sql.raw(keys)}, shard) do update set ${sql.raw(updates)}
          )
          select count(*)::int as n from folded`,
    );
    folded += row?.n ?? 0;
  }
  return folded;
}

/**
 * Takes a deleted app's calls out of its owner's rollups; call it in the deleting transaction,
 * before the delete (which cascades to the app's own rollups). Locking the app row first waits for
 * calls being recorded into it and keeps new ones out, so what is subtracted is all there is.
 * The differences go into shard 0 and may leave it negative; readers sum the shards.
 */
export async function forgetApplication(db: Database, app: { id: string; ownerId: string }): Promise<void> {
  await db.execute(sql`select 1 from applications where id = ${app.id} for update`);
  await db.execute(sql`
    insert into owner_daily_stats as s (owner_id, day, shard, invocations, successes, errors,
      latency_ms_sum, input_tokens, output_tokens)
    select ${app.ownerId}::uuid, day, 0, -sum(invocations), -sum(successes), -sum(errors),
           -sum(latency_ms_sum), -sum(input_tokens), -sum(output_tokens)
    from app_daily_stats where application_id = ${app.id} group by day
    on conflict (owner_id, day, shard) do update set
      invocations = s.invocations + excluded.invocations,
      successes = s.successes + excluded.successes,
      errors = s.errors + excluded.errors,
      latency_ms_sum = s.latency_ms_sum + excluded.latency_ms_sum,
      input_tokens = s.input_tokens + excluded.input_tokens,
      output_tokens = s.output_tokens + excluded.output_tokens`);
  await db.execute(sql`
    insert into owner_daily_errors as e (owner_id, day, error_type, shard, count)
    select ${app.ownerId}::uuid, day, error_type, 0, -count
    from app_daily_errors where application_id = ${app.id}
    on conflict (owner_id, day, error_type, shard) do update set count = e.count + excluded.count`);
}

/**
 * Recomputes an owner's distinct-user rows from their remaining apps, after one of them was
 * deleted (its users may not have called any other of the owner's apps). A call recorded meanwhile
 * into another of the owner's apps may have written its row already: the later day wins.
 */
export async function rebuildOwnerUsers(db: Database, ownerId: string): Promise<void> {
  await db.execute(sql`delete from owner_users where owner_id = ${ownerId}`);
  await db.execute(sql`
    insert into owner_users (owner_id, end_user, last_day)
    select ${ownerId}::uuid, u.end_user, max(u.last_day)
    from app_users u join applications a on a.id = u.application_id
    where a.owner_id = ${ownerId}::uuid
    group by u.end_user
    on conflict (owner_id, end_user) do update set last_day = greatest(owner_users.last_day, excluded.last_day)`);
}
