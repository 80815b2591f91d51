import { sql } from "drizzle-orm";
import { type Database, NO_ROW, preparedStatement, queryRows } from "../../../db/client.ts";
import { AppError, notFound } from "../../../lib/errors.ts";
import { paymentRefusal } from "../../../lib/payment-remedy.ts";
import { centsToMicros, dollars, formatMicros, MICROS_PER_CENT } from "../money.ts";

/**
 * Members' monthly budgets (issue 43, decision 084), the scheme of keys' spend limits (decision
 * 035, key-reservations.ts): a call an organization pays from its wallet, made by one of its
 * members (with their token and the organization header, or with a key they made), reserves its
 * price against the member's spend in the current UTC month before the upstream is called, in one
 * conditional statement that reads the member's row as it is now: a budget lowered, a role lowered
 * or a member removed by any process applies to the next call. Every member call reserves, budget
 * or not, so `member_spend` always holds the month's spend (a budget set mid-month counts it). A
 * call that ends unpaid gives its reservation back at once; a charged call's stays, its row
 * cleared by `sweepMemberReservations`, which also gives back those of calls a crashed process
 * never recorded. The reservation names the member, not the membership: a member removed while
 * their call runs still has it settled.
 */

/** The organization paying for a call and the member who made it (plain fields: billing imports no organization code). */
export interface CallingMember {
  organizationId: string;
  userId: string;
}

/** The roles whose members may call for an organization (organizations/membership.ts `call`). */
const CALLING_ROLES = "('owner', 'admin', 'developer')";

/** The first moment of the current UTC month, and of the next. */
const MONTH_START = "date_trunc('month', now(), 'UTC')";

const reserveStatement = preparedStatement<{
  member: boolean;
  reserved: boolean;
  role: string | null;
  organization: string | null;
  budget_cents: string | null;
  spent_micros: string;
  resets_at: Date | string;
}>(
  "pm_reserve_member_spend_v1",
  `with m as (
     select om.organization_id, om.user_id, om.role, om.monthly_budget_cents, ${MONTH_START} as period_start
     from organization_members om
     where om.organization_id = $1::uuid and om.user_id = $2::uuid and om.role in ${CALLING_ROLES}
   ), spent as (
     insert into member_spend as s (organization_id, user_id, period_start, spent_micros)
     select m.organization_id, m.user_id, m.period_start, $3::bigint from m
     where m.monthly_budget_cents is null or $3::bigint <= m.monthly_budget_cents * ${MICROS_PER_CENT}
     on conflict (organization_id, user_id, period_start) do update set spent_micros = s.spent_micros + excluded.spent_micros
     where s.spent_micros + excluded.spent_micros <= coalesce(
       (select om.monthly_budget_cents * ${MICROS_PER_CENT} from organization_members om
        where om.organization_id = s.organization_id and om.user_id = s.user_id),
       s.spent_micros + excluded.spent_micros)
     returning s.organization_id, s.user_id, s.period_start
   ), reserved as (
     insert into member_spend_reservations (call_id, organization_id, user_id, period_start, micros, expires_at)
     select $4::uuid, organization_id, user_id, period_start, $3::bigint, now() + $5::int * interval '1 second' from spent
     returning 1
   )
   select exists (select 1 from m) as member, exists (select 1 from reserved) as reserved,
     (select role from organization_members where organization_id = $1::uuid and user_id = $2::uuid) as role,
     (select display_name from users where id = $1::uuid) as organization,
     m.monthly_budget_cents::text as budget_cents, coalesce(s.spent_micros, 0)::text as spent_micros,
     ${MONTH_START} + interval '1 month' as resets_at
   from (select 1) one left join m on true
   left join member_spend s on s.organization_id = m.organization_id and s.user_id = m.user_id
     and s.period_start = m.period_start`,
  { params: () => [NO_ROW, NO_ROW, 1, NO_ROW, 60] },
);

/** A member's call's price reserved against their month's spend: `settle` once, with what the call was charged. */
export interface MemberReservation {
  /** The call ended: `keptCents` stay spent, the rest goes back now (a charged call's row is left to the sweeper). */
  settle(keptCents: number): Promise<void>;
}

/**
 * Reserves a member's call's price against their monthly budget before the upstream is called:
 * 402 `member_budget_reached` naming the budget, the month's spend, the price and when it resets
 * when it does not fit. A member removed since their credentials were read is refused as their
 * key or header would now be (401, or 404 for the header), and one whose role may no longer call
 * with 403 `organization_role`.
 */
export async function reserveMemberSpend(
  db: Database,
  member: CallingMember & { viaKey: boolean },
  call: { callId: string; priceCents: number; ttlSeconds: number },
): Promise<MemberReservation> {
  const micros = centsToMicros(call.priceCents);
  const [row] = await reserveStatement(db, [
    member.organizationId,
    member.userId,
    micros,
    call.callId,
    call.ttlSeconds,
  ]);
  if (!row?.member) throw noLongerCalling(member.viaKey, row?.role ?? null, row?.organization ?? "");
  if (!row.reserved) throw memberBudgetReached(row, call.priceCents);
  let settled = false;
  return {
    async settle(keptCents) {
      if (settled || keptCents >= call.priceCents) return;
      settled = true;
      await giveBackMemberSpend(db, call.callId, centsToMicros(keptCents));
    },
  };
}

/** The member left the organization, or their role may no longer call, since their credentials were checked. */
function noLongerCalling(viaKey: boolean, role: string | null, organization: string): AppError {
  if (role)
    return new AppError(
      "organization_role",
      `${viaKey ? "This key's maker is now" : "Your role is now"} ${role} in ${organization}: a ${role} may not call apps or manage API keys for the organization. Ask an owner or admin of ${organization} for a role that may.`,
    );
  return viaKey
    ? new AppError("unauthorized", "API key is invalid or has been revoked")
    : notFound("Organization");
}

function memberBudgetReached(
  row: {
    budget_cents: string | null;
    spent_micros: string;
    resets_at: Date | string;
    organization: string | null;
  },
  priceCents: number,
): AppError {
  const resetsAt = new Date(row.resets_at).toISOString();
  return paymentRefusal(
    "member_budget_reached",
    `Your monthly budget in ${row.organization} of ${dollars(Number(row.budget_cents))} is reached: you have spent ${formatMicros(Number(row.spent_micros))} of it this month (UTC), and this call costs ${dollars(priceCents)}. You were not charged. The budget resets at ${resetsAt} (the first of next month, UTC); an owner or admin of ${row.organization} may raise it.`,
    {
      missing: "spend_limit_reached",
      price_cents: priceCents,
      limit: {
        kind: "member_budget",
        limit_cents: Number(row.budget_cents),
        spent_micros: Number(row.spent_micros),
        period: "monthly",
        resets_at: resetsAt,
      },
    },
  );
}

/** Gives back a reservation, once (its row is deleted), keeping `keptMicros` of it spent. */
async function giveBackMemberSpend(db: Database, callId: string, keptMicros: number): Promise<void> {
  await queryRows(
    db,
    sql`with gone as (delete from member_spend_reservations where call_id = ${callId}::uuid
                      returning organization_id, user_id, period_start, micros)
        update member_spend s set spent_micros = greatest(s.spent_micros - (gone.micros - ${keptMicros}::bigint), 0)
        from gone where s.organization_id = gone.organization_id and s.user_id = gone.user_id
          and s.period_start = gone.period_start and gone.micros > ${keptMicros}::bigint`,
  );
}

/**
 * Clears the reservations whose calls are over (past the call's deadline and margin): a call
 * recorded as charged keeps what it was charged in the member's spend; one that was not (a crashed
 * process's call, or a record that failed) gives its reservation back.
 */
export async function sweepMemberReservations(db: Database): Promise<void> {
  await queryRows(
    db,
    sql`with gone as (delete from member_spend_reservations where expires_at < now()
                      returning call_id, organization_id, user_id, period_start, micros, expires_at),
        back as (select g.organization_id, g.user_id, g.period_start,
                   sum(g.micros - least(g.micros, coalesce(i.charged_cents * ${MICROS_PER_CENT}, 0)))::bigint as micros
                 -- A day either side of the expiry bounds the partitions looked in (decision 038).
                 from gone g left join invocations i on i.id = g.call_id and i.hold_id is not null
                   and i.created_at > g.expires_at - interval '1 day' and i.created_at < g.expires_at + interval '1 day'
                 group by g.organization_id, g.user_id, g.period_start)
        update member_spend s set spent_micros = greatest(s.spent_micros - back.micros, 0)
        from back where s.organization_id = back.organization_id and s.user_id = back.user_id
          and s.period_start = back.period_start and back.micros > 0`,
  );
}
