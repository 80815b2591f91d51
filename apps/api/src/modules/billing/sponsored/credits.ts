import type { SponsoredCredit } from "@promptmint/contracts";
import { type SQL, sql } from "drizzle-orm";
import { type Database, queryRows } from "../../../db/client.ts";
import { notFound } from "../../../lib/errors.ts";

/** A consumer's trials and promotional credit as the wallet lists them (docs/decisions/080). */

interface CreditRow {
  id: string;
  kind: "trial" | "promotion";
  app_slug: string | null;
  app_name: string | null;
  creator: string;
  code: string | null;
  calls_left: number | null;
  credit_left_micros: string | null;
  bonus_percent: number | null;
  bonus_cap_micros: string | null;
  bonus_applied_at: Date | string | null;
  expires_at: Date | string | null;
  created_at: Date | string;
}

const iso = (moment: Date | string) => new Date(moment).toISOString();

function toCredit(row: CreditRow): SponsoredCredit {
  const pendingBonus = row.bonus_percent !== null && row.bonus_applied_at === null;
  return {
    id: row.id,
    kind: row.kind,
    app: row.app_slug && row.app_name ? { slug: row.app_slug, name: row.app_name } : null,
    creator: row.creator,
    code: row.code,
    calls_left: row.kind === "trial" ? row.calls_left : null,
    credit_left_micros: row.kind === "promotion" ? Number(row.credit_left_micros ?? 0) : null,
    bonus: pendingBonus
      ? { percent: row.bonus_percent ?? 0, cap_micros: Number(row.bonus_cap_micros ?? 0) }
      : null,
    expires_at: row.expires_at ? iso(row.expires_at) : null,
    created_at: iso(row.created_at),
  };
}

function selectCredits(db: Database, where: SQL): Promise<CreditRow[]> {
  return queryRows<CreditRow>(
    db,
    sql`select g.id, g.kind, a.slug as app_slug, a.name as app_name,
          coalesce(nullif(u.display_name, ''), u.username) as creator, pc.code,
          g.calls_left, g.credit_left_micros::text, g.bonus_percent, g.bonus_cap_micros::text,
          g.bonus_applied_at, g.expires_at, g.created_at
        from sponsored_grants g
        join users u on u.id = g.creator_id
        left join applications a on a.id = g.application_id
        left join promotion_codes pc on pc.id = g.promotion_code_id
        where ${where}
        order by g.created_at desc
        limit 200`,
  );
}

/** Every trial and promotional credit of `consumerId`, newest first (spent ones too). */
export async function listCredits(db: Database, consumerId: string): Promise<SponsoredCredit[]> {
  const rows = await selectCredits(db, sql`g.consumer_id = ${consumerId}::uuid and a.archived_at is null`);
  return rows.map(toCredit);
}

/** One credit of `consumerId`'s. */
export async function findCredit(db: Database, consumerId: string, id: string): Promise<SponsoredCredit> {
  const [row] = await selectCredits(db, sql`g.consumer_id = ${consumerId}::uuid and g.id = ${id}::uuid`);
  if (!row) throw notFound("Credit");
  return toCredit(row);
}
