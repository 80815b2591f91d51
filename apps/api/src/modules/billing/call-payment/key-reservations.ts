import { inArray, sql } from "drizzle-orm";
import { type Database, NO_ROW, preparedStatement, queryRows } from "../../../db/client.ts";
import { apiKeys } from "../../../db/schema/index.ts";
import { AppError } from "../../../lib/errors.ts";
import { paymentRefusal } from "../../../lib/payment-remedy.ts";
import { centsToMicros, dollars, formatMicros, MICROS_PER_CENT } from "../money.ts";

/**
 * Spend limits of API keys (docs/decisions/035-key-spend-limits.md). A call paid from the wallet
 * with a limited key reserves its price against the key's spend in the current period before the
 * upstream is called, in one conditional statement: two calls (in any process) cannot both take
 * the last room under the limit. A call that ends unpaid gives its reservation back at once; the
 * reservations of calls that were charged stay in the spend, and their rows are cleared by the
 * sweeper (`sweepKeyReservations`), which also gives back those of calls a crashed process never
 * recorded. A crash can therefore only leave the spend too high, and only until the sweep.
 */

/** A key's limit as the caller's request carries it (the key lookup is cached, lib/lookup-cache.ts). */
export interface KeyLimit {
  keyId: string;
  spendLimitCents: number | null;
}

/**
 * The first moment of a key's current period: UTC calendar days, ISO weeks (from Monday) and
 * months; one period since the epoch for `never`. `reset` names the key's `limit_reset` column.
 */
function periodStart(reset: string): string {
  return `(case ${reset}
    when 'daily' then date_trunc('day', now(), 'UTC')
    when 'weekly' then date_trunc('week', now(), 'UTC')
    when 'monthly' then date_trunc('month', now(), 'UTC')
    else 'epoch'::timestamptz end)`;
}

/** When the period starting at `start` ends; null for `never`. */
function periodEnd(reset: string, start: string): string {
  return `(case ${reset}
    when 'daily' then ${start} + interval '1 day'
    when 'weekly' then ${start} + interval '7 days'
    when 'monthly' then ${start} + interval '1 month' end)`;
}

/**
 * The reservation: the key's spend in its current period grows by the price only if it stays
 * within the limit as the key row has it now (so a limit lowered in another process applies at
 * once), and the call's reservation is written in the same statement. Answers whether it was
 * reserved, and the figures a refusal names.
 */
const reserveStatement = preparedStatement<{
  reserved: boolean;
  limit_cents: string | null;
  limit_reset: string;
  spent_micros: string;
  resets_at: Date | string | null;
}>(
  "pm_reserve_key_spend_v1",
  `with k as (
     select id, spend_limit_cents, limit_reset, ${periodStart("limit_reset")} as period_start
     from api_keys where id = $1::uuid
   ), spent as (
     insert into api_key_spend as s (key_id, period_start, spent_micros)
     select k.id, k.period_start, $2::bigint from k
     where k.spend_limit_cents is null or $2::bigint <= k.spend_limit_cents * ${MICROS_PER_CENT}
     on conflict (key_id, period_start) do update set spent_micros = s.spent_micros + excluded.spent_micros
     where s.spent_micros + excluded.spent_micros <= coalesce(
       (select a.spend_limit_cents * ${MICROS_PER_CENT} from api_keys a where a.id = s.key_id),
       s.spent_micros + excluded.spent_micros)
     returning s.key_id, s.period_start
   ), reserved as (
     insert into api_key_reservations (call_id, key_id, period_start, micros, expires_at)
     select $3::uuid, key_id, period_start, $2::bigint, now() + $4::int * interval '1 second' from spent
     returning 1
   )
   select exists (select 1 from reserved) as reserved, k.spend_limit_cents::text as limit_cents,
     k.limit_reset, coalesce(s.spent_micros, 0)::text as spent_micros,
     ${periodEnd("k.limit_reset", "k.period_start")} as resets_at
   from k left join api_key_spend s on s.key_id = k.id and s.period_start = k.period_start`,
  { params: () => [NO_ROW, 1, NO_ROW, 60] },
);

/** A limited key's price reserved for one call: `settle` once, with what the call was charged. */
export interface KeyReservation {
  /**
   * The call ended: `keptCents` of the reservation stay spent (what its record charged), the rest
   * goes back now. A charged call's row is left to the sweeper (no round trip on its path).
   */
  settle(keptCents: number): Promise<void>;
}

/**
 * Reserves a call's price against its key's spend limit before the upstream is called; 402
 * `key_limit_reached` naming the limit, the period's spend and when it resets when it does not fit.
 */
export async function reserveKeySpend(
  db: Database,
  key: KeyLimit,
  call: { callId: string; priceCents: number; ttlSeconds: number },
): Promise<KeyReservation> {
  const micros = centsToMicros(call.priceCents);
  const [row] = await reserveStatement(db, [key.keyId, micros, call.callId, call.ttlSeconds]);
  if (!row) throw new AppError("unauthorized", "API key is invalid or has been revoked");
  if (!row.reserved) throw keyLimitReached(row, call.priceCents);
  let settled = false;
  return {
    async settle(keptCents) {
      if (settled || keptCents >= call.priceCents) return;
      settled = true;
      await giveBackKeySpend(db, call.callId, centsToMicros(keptCents));
    },
  };
}

/** How a refusal names the limit and the period's spend, by `limit_reset`. */
const PERIOD_WORDS: Record<string, { per: string; spent: string }> = {
  daily: { per: "per day (UTC)", spent: "today" },
  weekly: { per: "per week (UTC, from Monday)", spent: "this week" },
  monthly: { per: "per month (UTC)", spent: "this month" },
  never: { per: "in total", spent: "in total" },
};

function keyLimitReached(
  row: {
    limit_cents: string | null;
    limit_reset: string;
    spent_micros: string;
    resets_at: Date | string | null;
  },
  priceCents: number,
): AppError {
  const words = PERIOD_WORDS[row.limit_reset] ?? PERIOD_WORDS.never;
  const resets = row.resets_at
    ? `The limit resets at ${new Date(row.resets_at).toISOString()}.`
    : "The limit does not reset: raise it on the API keys page to continue.";
  return paymentRefusal(
    "key_limit_reached",
    `This API key's spend limit of ${dollars(Number(row.limit_cents))} ${words?.per} is reached: it has spent ${formatMicros(Number(row.spent_micros))} ${words?.spent}, and this call costs ${dollars(priceCents)}. You were not charged. ${resets}`,
    {
      missing: "spend_limit_reached",
      price_cents: priceCents,
      limit: {
        kind: "key_spend_limit",
        limit_cents: Number(row.limit_cents),
        spent_micros: Number(row.spent_micros),
        period: row.limit_reset,
        resets_at: row.resets_at ? new Date(row.resets_at).toISOString() : null,
      },
    },
  );
}

/** Gives back a reservation, once (its row is deleted), keeping `keptMicros` of it spent. */
async function giveBackKeySpend(db: Database, callId: string, keptMicros: number): Promise<void> {
  await queryRows(
    db,
    sql`with gone as (delete from api_key_reservations where call_id = ${callId}::uuid
                      returning key_id, period_start, micros)
        update api_key_spend s set spent_micros = greatest(s.spent_micros - (gone.micros - ${keptMicros}::bigint), 0)
        from gone where s.key_id = gone.key_id and s.period_start = gone.period_start
          and gone.micros > ${keptMicros}::bigint`,
  );
}

/**
 * Clears the reservations whose calls are over (expired: past the call's deadline and margin):
 * a call recorded as charged keeps what it was charged in the spend; one that was not (a crashed
 * process's call, or a record that failed) gives its reservation back.
 */
export async function sweepKeyReservations(db: Database): Promise<void> {
  await queryRows(
    db,
    sql`with gone as (delete from api_key_reservations where expires_at < now()
                      returning call_id, key_id, period_start, micros, expires_at),
        back as (select g.key_id, g.period_start,
                   sum(g.micros - least(g.micros, coalesce(i.charged_cents * ${MICROS_PER_CENT}, 0)))::bigint as micros
                 -- A call is recorded before its reservation expires, after it was taken: a day
                 -- either side bounds the partitions looked in (decision 038).
                 from gone g left join invocations i on i.id = g.call_id and i.hold_id is not null
                   and i.created_at > g.expires_at - interval '1 day' and i.created_at < g.expires_at + interval '1 day'
                 group by g.key_id, g.period_start)
        update api_key_spend s set spent_micros = greatest(s.spent_micros - back.micros, 0)
        from back where s.key_id = back.key_id and s.period_start = back.period_start and back.micros > 0`,
  );
}

/** Each key's spend in its current period, and when that period ends (for the keys screen). */
export async function currentKeySpend(
  db: Database,
  keyIds: string[],
): Promise<Map<string, { spentMicros: number; resetsAt: string | null }>> {
  if (keyIds.length === 0) return new Map();
  const rows = await queryRows<{ id: string; spent_micros: string; resets_at: Date | string | null }>(
    db,
    sql`select k.id, coalesce(s.spent_micros, 0)::text as spent_micros,
          ${sql.raw(periodEnd("k.limit_reset", "k.period_start"))} as resets_at
        from (select id, limit_reset, ${sql.raw(periodStart("limit_reset"))} as period_start
              from api_keys where ${inArray(apiKeys.id, keyIds)}) k
        left join api_key_spend s on s.key_id = k.id and s.period_start = k.period_start`,
  );
  return new Map(
    rows.map((row) => [
      row.id,
      {
        spentMicros: Number(row.spent_micros),
        resetsAt: row.resets_at ? new Date(row.resets_at).toISOString() : null,
      },
    ]),
  );
}
