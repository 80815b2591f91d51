import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../../db/client.ts";

/**
 * What the reconcile checks of trials and promotion codes (docs/decisions/080), each row naming
 * what is wrong: a sponsored call spent but not paid by its creator for its consumer (an answered
 * call, charged 0 to its caller, paid from a hold of the grant's creator), a code counted past its
 * limit or unlike its redemptions, a grant below zero, an app's trial taken twice by one account.
 */
export async function sponsoredMisfits(db: Database): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`select 'call ' || sc.call_id::text as id
        from sponsored_calls sc
        join sponsored_grants g on g.id = sc.grant_id
        left join invocations i on i.id = sc.call_id
        left join holds h on h.id = i.hold_id
        where sc.state = 'spent'
          -- A spent call's invocation may be dropped with its day (decision 038) only days later.
          and ((i.id is null and sc.created_at > now() - interval '1 day')
               or (i.id is not null and (i.status <> 'success' or i.charged_cents <> 0
                   or h.payer_id is distinct from g.creator_id or i.caller_user_id is distinct from g.consumer_id)))
        union all
        select 'code ' || c.id::text from promotion_codes c
        where c.redemptions > c.max_redemptions
           or c.redemptions <> (select count(*) from sponsored_grants g where g.promotion_code_id = c.id)
        union all
        select 'grant ' || id::text from sponsored_grants where calls_left < 0 or credit_left_micros < 0
        union all
        select 'trial ' || application_id::text || ' ' || consumer_id::text from sponsored_grants
        where kind = 'trial' group by application_id, consumer_id having count(*) > 1
        order by 1`,
  );
  return rows.map((row) => row.id);
}
