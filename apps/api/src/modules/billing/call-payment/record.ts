import { and, eq } from "drizzle-orm";
import { type Database, preparedStatement, writerFor } from "../../../db/client.ts";
import { invocations } from "../../../db/schema/index.ts";
import {
  INVOCATIONS_FROM_CALLS,
  type InvocationRecord,
  invocationRow,
  recordInvocation,
  userKeyOf,
} from "../../analytics/call-records.ts";
import { ROLLUPS_FROM_CALLS, utcDay } from "../../analytics/rollups.ts";
import { spendFromHold, spendFromHoldsSql } from "./holds.ts";
import { useIncludedCall } from "./included-calls.ts";
import { spendModelCostHold } from "./model-cost-holds.ts";
import { chargedCentsSql, currentPriceSql, feeMicrosSql, microsSql, modelCostDeductedSql } from "./rules.ts";

/** What a successful paid call spends: its price from its hold, of which the platform keeps `feePercent`. */
export interface Settlement {
  holdId: string;
  amountCents: number;
  feePercent: number;
}

/**
 * How a recorded call was paid (decision 025): `plan` when the pair's plan had an included call
 * left when it was recorded (a plan always comes before the wallet), `hold` when its price was
 * spent from its hold, `refused` when the hold could not pay (closed or expired: the call is
 * recorded as failed, and must not be answered), `none` for calls with nothing to pay.
 */
export type RecordOutcome = "plan" | "hold" | "refused" | "none";

/**
 * How a recorded call was paid and what it took from the payer's wallet, in cents: the price the
 * hold spent for `hold` (the lower of the price the call started at and the app's price at the
 * record, as the statement decides), 0 otherwise. What the answer tells the caller it cost.
 */
export interface RecordedCall {
  outcome: RecordOutcome;
  chargedCents: number;
}

/** The most calls one statement records; more wait for the next. */
const MAX_BATCH = 256;

/**
 * Records calls and spends their prices from their holds. A chat turn (conversation rows) is
 * written on its own (`recordOne`); other calls are written in batches: one statement and one
 * synchronous commit for every call that finished while the previous batch was being written. A
 * call alone is written at once, so batching adds no wait; under load, N calls share one round trip
 * and one WAL flush. Every promise resolves only after its batch is committed: a charge (the
 * invocation and the price added to its hold's `settled_micros`) is on disk before its caller
 * hears of it. The ledger moves the money when the hold closes (`closeHold`, decision 020), so a
 * call writes no ledger row and takes no lock on a hot ledger account. A call paid from a hold is
 * counted against the pair's plan instead when the plan has an included call left at that moment
 * (decision 025). Answers how the call was paid (`RecordOutcome`). On PostgreSQL the batches use
 * connections of their own (`writerFor`), so an answered call never waits for a connection behind
 * calls that have not started. See docs/decisions/012-paid-path-latency.md and
 * 020-lease-capture.md. One per server (index.ts `createCallPayments`; tests make their own).
 */
export class CallRecorder {
  private readonly db: Database;
  private batches: BatchRecorder | undefined;

  constructor(db: Database) {
    this.db = db;
  }

  /**
   * Records the call; with a settlement, spends its price (or a plan's included call); with a
   * model cost hold (decision 062), spends the call's model cost from it in the same transaction.
   */
  record(record: InvocationRecord, settlement?: Settlement, modelCostHoldId?: string): Promise<RecordedCall> {
    // The call's time is fixed on the record the first time it is recorded: it is half of the
    // invocation's key (partitioned by day, decision 038), so the same call recorded again (a batch
    // written again call by call, a record submitted twice) meets its own row, never adds a second.
    record.createdAt ??= new Date();
    // A prepaid model cost is spent by its own statements: such calls (owners', tests', evals',
    // widgets') are written one by one, not batched.
    if (record.conversation || modelCostHoldId)
      return recordOne(this.db, { record, settlement, modelCostHoldId });
    this.batches ??= new BatchRecorder(writerFor(this.db));
    return this.batches.submit({ record, settlement });
  }

  /** How the batches were written: statements, calls, and batches that failed and were written call by call. */
  stats(): { batches: number; calls: number; fallbacks: number } {
    return { batches: 0, calls: 0, fallbacks: 0, ...this.batches?.stats };
  }
}

interface Pending {
  record: InvocationRecord;
  settlement?: Settlement;
  resolve(recorded: RecordedCall): void;
  reject(error: unknown): void;
}

class BatchRecorder {
  private queue: Pending[] = [];
  private writing = false;
  readonly stats = { batches: 0, calls: 0, fallbacks: 0 };
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  submit(call: Pick<Pending, "record" | "settlement">): Promise<RecordedCall> {
    return new Promise<RecordedCall>((resolve, reject) => {
      this.queue.push({ ...call, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) await this.write(this.queue.splice(0, MAX_BATCH));
    } finally {
      this.writing = false;
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    let charged: Map<string, number>;
    let covered: Set<string>;
    this.stats.batches += 1;
    this.stats.calls += batch.length;
    try {
      const [row] = await recordBatchStatement(this.db, [JSON.stringify(batch.map(toRow))]);
      // "id:cents" for each call its hold paid.
      charged = new Map(
        (row?.charged ? row.charged.split(",") : []).map((pair) => {
          const [id = "", cents = "0"] = pair.split(":");
          return [id, Number(cents)] as const;
        }),
      );
      covered = new Set(row?.covered ? row.covered.split(",") : []);
    } catch {
      // The statement is atomic: nothing of the batch was written, unless it committed and only
      // its answer was lost (the connection dropped after the commit). One bad call (its app
      // deleted meanwhile, say) must not fail the others, so each is written again on its own and
      // gets its own outcome (a database outage fails them all, as it would have anyway).
      this.stats.fallbacks += 1;
      await Promise.all(
        batch.map((call) =>
          recordOne(this.db, call)
            .catch(async (error) => {
              // Already recorded: the batch did commit. Its outcome stands, charged or not.
              const recorded = await recordedOutcome(this.db, call).catch(() => undefined);
              if (recorded === undefined) throw error;
              return recorded;
            })
            .then(call.resolve, call.reject),
        ),
      );
      return;
    }
    for (const call of batch) {
      const spent = charged.get(call.record.id);
      call.resolve(
        covered.has(call.record.id)
          ? { outcome: "plan", chargedCents: 0 }
          : spent !== undefined
            ? { outcome: "hold", chargedCents: spent }
            : { outcome: call.settlement ? "refused" : "none", chargedCents: 0 },
      );
    }
  }
}

/**
 * One call in its own transaction: the invocation and, for a call paid from a hold, an included
 * call of the pair's plan if it has one left, else its price spent from the hold.
 */
export async function recordOne(
  db: Database,
  call: { record: InvocationRecord; settlement?: Settlement; modelCostHoldId?: string },
): Promise<RecordedCall> {
  const { record, settlement, modelCostHoldId } = call;
  let outcome: RecordOutcome = "none";
  let chargedCents = 0;
  record.createdAt ??= new Date();
  const at = record.createdAt;
  /** The model cost its price did not pay, from the call's model cost hold (decision 062). */
  const spendPrepaid = async (tx: Database, deductedMicros: number) => {
    if (modelCostHoldId)
      await spendModelCostHold(tx, {
        id: modelCostHoldId,
        invocationCreatedAt: at,
        costMicros: (record.modelCostMicros ?? 0) - deductedMicros,
      });
  };
  await recordInvocation(
    db,
    settlement
      ? {
          ...record,
          holdId: settlement.holdId,
          settle: async (tx) => {
            const included = await useIncludedCall(tx, record.applicationId, record.callerUserId);
            if (included) {
              outcome = "plan";
              await spendPrepaid(tx, 0);
              return { coveredBy: included };
            }
            const spent = await spendFromHold(tx, settlement.holdId, {
              ...settlement,
              modelCostMicros: record.modelCostMicros ?? 0,
              applicationId: record.applicationId,
            });
            outcome = spent === undefined ? "refused" : "hold";
            chargedCents = spent?.chargedCents ?? 0;
            await spendPrepaid(tx, spent?.modelCostDeductedMicros ?? 0);
            return spent ?? "refused";
          },
        }
      : modelCostHoldId
        ? {
            ...record,
            settle: async (tx) => {
              await spendPrepaid(tx, 0);
              return "charged" as const;
            },
          }
        : record,
  );
  return { outcome, chargedCents };
}

/**
 * How a recorded invocation was paid; undefined if it was not recorded. Its price spent from the
 * hold is not on the row for an embedded call the owner paid (not the app's revenue), so a call
 * its hold paid is answered with the price it was recorded at, or else the settlement's.
 */
async function recordedOutcome(
  db: Database,
  call: Pick<Pending, "record" | "settlement">,
): Promise<RecordedCall | undefined> {
  const [row] = await db
    .select({
      holdId: invocations.holdId,
      subscriptionId: invocations.subscriptionId,
      chargedCents: invocations.chargedCents,
    })
    .from(invocations)
    .where(
      and(
        eq(invocations.id, call.record.id),
        call.record.createdAt ? eq(invocations.createdAt, call.record.createdAt) : undefined,
      ),
    );
  if (!row) return undefined;
  if (!call.settlement) return { outcome: "none", chargedCents: 0 };
  if (row.holdId) return { outcome: "hold", chargedCents: row.chargedCents || call.settlement.amountCents };
  return { outcome: row.subscriptionId ? "plan" : "refused", chargedCents: 0 };
}

/** A call as a row of the batch statement's `v`: the invocation's columns (analytics) and what pays for it. */
/** The batch's column names: invocationRow's, in snake_case (worked out once per name, not per call). */
const snakeCase = new Map<string, string>();
function columnOf(field: string): string {
  let column = snakeCase.get(field);
  if (column === undefined) {
    column = field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
    snakeCase.set(field, column);
  }
  return column;
}

function toRow({ record, settlement }: Pending) {
  const at = record.createdAt ?? new Date();
  const row: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(invocationRow(record, at)))
    if (field !== "createdAt") row[columnOf(field)] = value;
  return {
    ...row,
    created_at: at.toISOString(),
    day: utcDay(at),
    user_key: userKeyOf(record),
    hold_id: settlement?.holdId ?? null,
    plan_period_start: record.coveredBy?.periodStart ?? null,
    amount: settlement?.amountCents ?? null,
    fee_percent: settlement?.feePercent ?? null,
  };
}

/**
 * The batch in one statement. First the plans: the calls paid from holds are counted against
 * their pair's active plan while it has included calls left (the subscription rows locked in id
 * order, never skipped: decision 025), those calls spend nothing from their holds. The other calls
 * of each hold still open (and not expired) spend their prices from it together (a lease pays for
 * many calls), each price added to `settled_micros`, its fee to `fee_micros`, the model cost its creator's
 * share pays to `model_cost_micros`, the count to `calls`.
 * Every invocation is recorded: paid from its hold (naming it), covered by a plan (naming the
 * subscription and period), or, when its hold could not pay, as failed (`payment_failed`); the
 * calls go to the app and owner rollups, one row per (app, day) and (owner, day) in this
 * connection's shard. No ledger row: the hold's close posts its calls (decision 020). Answers the
 * invocations charged from holds, each as "id:price spent", and the ids of those covered by plans.
 */
const recordBatchStatement = preparedStatement<{ charged: string | null; covered: string | null }>(
  "pm_record_batch_v12",
  `with v as (
     select * from json_to_recordset($1::json) as v(
       id uuid, application_id uuid, caller_user_id uuid, api_key_id uuid, member_id uuid, end_user text, mode text,
       status text, error_type text, error_message text, model text, app_version integer,
       experiment_id uuid, purpose text, latency_ms integer,
       input_tokens integer, output_tokens integer, charged_cents bigint, model_cost_micros bigint,
       created_at timestamptz,
       day date, user_key text, hold_id uuid, subscription_id uuid, plan_period_start timestamptz,
       amount bigint, fee_percent numeric)
   ), priced as (
     -- A call pays the lower of the price it started at and the app's price now: a decrease applies
     -- at once even where a process still held the old price (decision 025); an increase never
     -- applies before its notice ran out (decision 021), so it is never the lower one early.
     -- In micro-dollars: the price, the platform's fee (exactly fee_percent of it) and the model
     -- cost the creator's share pays (at most that share; issue 17).
     select v.id, p.amount, f.micros, f.fee, ${modelCostDeductedSql("v.model_cost_micros", "f.micros", "f.fee")} as model_cost
     from v join applications a on a.id = v.application_id
     cross join lateral (select ${chargedCentsSql("v.amount", currentPriceSql("a"))} as amount) p
     cross join lateral (select ${microsSql("p.amount")} as micros,
       ${feeMicrosSql(microsSql("p.amount"), "v.fee_percent")} as fee) f
     where v.hold_id is not null
   ), pairs as (
     select caller_user_id as payer, application_id as app, count(*)::int as n
     from v where hold_id is not null group by caller_user_id, application_id
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
           from v where hold_id is not null) r
     join plan on plan.subscriber_id = r.caller_user_id and plan.application_id = r.application_id
     where r.rn <= plan.take
   ), s as (
     select v.hold_id, sum(p.micros)::bigint as added, sum(p.fee)::bigint as fee,
       sum(p.model_cost)::bigint as model_cost, count(*)::int as calls
     from v join priced p on p.id = v.id
     where v.id not in (select id from covered) group by v.hold_id
   ), hold as (
     ${spendFromHoldsSql("s")}
     returning holds.id
   ), calls as (
     select v.id, v.application_id, v.caller_user_id, v.api_key_id, v.member_id, v.end_user, v.mode,
       v.error_message, v.model, v.app_version, v.experiment_id, v.purpose, v.latency_ms, v.input_tokens,
       v.output_tokens, v.created_at,
       v.day, v.user_key, a.owner_id, hold.id as paid_from,
       coalesce(c.subscription_id, v.subscription_id) as covered_by,
       coalesce(c.current_period_start, v.plan_period_start) as period,
       case when c.id is not null or (v.hold_id is not null and hold.id is null) then 0
            when v.charged_cents > 0 and pr.amount is not null then pr.amount
            else v.charged_cents end as charged,
       case when hold.id is not null and c.id is null then pr.fee else 0 end as fee,
       case when hold.id is not null and c.id is null then pr.model_cost else 0 end as model_cost_deducted,
       v.model_cost_micros as model_cost,
       case when v.hold_id is not null and c.id is null and hold.id is null then 'error'
            else v.status end as status,
       case when v.hold_id is not null and c.id is null and hold.id is null then 'payment_failed'
            else v.error_type end as error_type
     from v left join applications a on a.id = v.application_id
     left join covered c on c.id = v.id
     left join priced pr on pr.id = v.id
     left join hold on hold.id = v.hold_id and c.id is null
   ), recorded as (
     ${INVOCATIONS_FROM_CALLS}
   ), reservations as (
     -- The included calls taken for these calls before they ran are theirs now (decision 025).
     delete from included_calls where id in (select id from v where subscription_id is not null)
     returning 1
   ), ${ROLLUPS_FROM_CALLS}
   select (select string_agg(c.id::text || ':' || pr.amount, ',') from calls c join priced pr on pr.id = c.id
           where c.paid_from is not null) as charged,
     (select string_agg(id::text, ',') from covered) as covered,
     (select count(*) from used) as plans`,
  { params: () => ["[]"] },
);
