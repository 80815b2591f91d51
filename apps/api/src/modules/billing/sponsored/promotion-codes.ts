import type { CreatePromotionCodeSchema, PromotionCode, SponsoredCredit } from "@promptmint/contracts";
import { isUuid } from "@promptmint/contracts";
import { type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import { type Database, queryRows } from "../../../db/client.ts";
import { isUniqueViolation } from "../../../lib/database-errors.ts";
import { AppError, notFound } from "../../../lib/errors.ts";
import type { LocalUser } from "../../auth/auth.service.ts";
import { centsToMicros } from "../money.ts";
import { findCredit } from "./credits.ts";

/**
 * Promotion codes (issue 42, docs/decisions/080): a creator's code gives its redeemer credit on the
 * creator's apps (or one app), an amount at once or a percentage of their next top-up (capped),
 * paid by the creator call by call. At most `max_redemptions` redemptions: counted by one
 * conditional UPDATE (two redemptions of the last place cannot both pass; a CHECK stands behind
 * it), once per person (a unique index), only between `starts_at` and `expires_at`.
 */

interface CodeRow {
  id: string;
  creator_id: string;
  application_id: string | null;
  code: string;
  kind: "amount" | "percent";
  amount_micros: string | null;
  percent: number | null;
  cap_micros: string | null;
  max_redemptions: number;
  redemptions: number;
  starts_at: Date | string;
  expires_at: Date | string | null;
  ended_at: Date | string | null;
  created_at: Date | string;
  app_slug: string | null;
  app_name: string | null;
}

const iso = (moment: Date | string) => new Date(moment).toISOString();
const toNumber = (value: string | null) => (value === null ? null : Number(value));

function statusOf(row: CodeRow, now = Date.now()): PromotionCode["status"] {
  if (row.ended_at) return "ended";
  if (row.expires_at && new Date(row.expires_at).getTime() <= now) return "expired";
  if (row.redemptions >= row.max_redemptions) return "used_up";
  if (new Date(row.starts_at).getTime() > now) return "scheduled";
  return "active";
}

function toPromotionCode(row: CodeRow): PromotionCode {
  return {
    id: row.id,
    code: row.code,
    kind: row.kind,
    amount_micros: toNumber(row.amount_micros),
    percent: row.percent,
    cap_micros: toNumber(row.cap_micros),
    max_redemptions: row.max_redemptions,
    redemptions: row.redemptions,
    app: row.app_slug && row.app_name ? { slug: row.app_slug, name: row.app_name } : null,
    starts_at: iso(row.starts_at),
    expires_at: row.expires_at ? iso(row.expires_at) : null,
    ended_at: row.ended_at ? iso(row.ended_at) : null,
    status: statusOf(row),
    created_at: iso(row.created_at),
  };
}

function selectCodes(db: Database, where: SQL): Promise<CodeRow[]> {
  return queryRows<CodeRow>(
    db,
    sql`select c.id, c.creator_id, c.application_id, c.code, c.kind, c.amount_micros::text, c.percent,
          c.cap_micros::text, c.max_redemptions, c.redemptions, c.starts_at, c.expires_at, c.ended_at,
          c.created_at, a.slug as app_slug, a.name as app_name
        from promotion_codes c left join applications a on a.id = c.application_id
        where ${where}
        order by c.created_at desc
        limit 200`,
  );
}

/** The creator's codes, newest first. */
export async function listPromotionCodes(db: Database, creatorId: string): Promise<PromotionCode[]> {
  return (await selectCodes(db, sql`c.creator_id = ${creatorId}::uuid`)).map(toPromotionCode);
}

/** Creates a code of the creator's, for one of their apps (`appId`) or all of them; 409 if the code is taken. */
export async function createPromotionCode(
  db: Database,
  creator: LocalUser,
  input: z.output<typeof CreatePromotionCodeSchema>,
  appId: string | null,
): Promise<PromotionCode> {
  let id: string;
  try {
    const [row] = await queryRows<{ id: string }>(
      db,
      sql`insert into promotion_codes (creator_id, application_id, code, kind, amount_micros, percent,
            cap_micros, max_redemptions, starts_at, expires_at)
          values (${creator.id}::uuid, ${appId}::uuid, ${input.code}, ${input.kind},
            ${input.amount_cents === undefined ? null : centsToMicros(input.amount_cents)}::bigint,
            ${input.percent ?? null}::int,
            ${input.cap_cents === undefined ? null : centsToMicros(input.cap_cents)}::bigint,
            ${input.max_redemptions}, coalesce(${input.starts_at ?? null}::timestamptz, now()),
            ${input.expires_at ?? null}::timestamptz)
          returning id`,
    );
    id = row?.id ?? "";
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("conflict", `The code ${input.code} is taken: choose another`, {
        fields: { code: "is taken" },
      });
    throw error;
  }
  const [created] = await selectCodes(db, sql`c.id = ${id}::uuid`);
  if (!created) throw notFound("Promotion code");
  return toPromotionCode(created);
}

/** Ends one of the creator's codes: no more redemptions; credit already given stays. 404 if not theirs. */
export async function endPromotionCode(db: Database, creatorId: string, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound("Promotion code");
  const [row] = await queryRows<{ id: string }>(
    db,
    sql`update promotion_codes set ended_at = coalesce(ended_at, now())
        where id = ${id}::uuid and creator_id = ${creatorId}::uuid returning id`,
  );
  if (!row) throw notFound("Promotion code");
}

/**
 * Redeems a code for `consumer`: their grant (the amount, or a pending bonus on their next top-up)
 * and the code's count grow in one transaction; 404 for an unknown code, 409 when it is not valid
 * now, used up, their own, or already redeemed by them.
 */
export async function redeemPromotionCode(
  db: Database,
  consumer: LocalUser,
  code: string,
): Promise<SponsoredCredit> {
  const [found] = await selectCodes(db, sql`lower(c.code) = lower(${code})`);
  if (!found) throw notFound("Promotion code");
  if (found.creator_id === consumer.id)
    throw new AppError("conflict", "This is your own promotion code: give it to your customers");
  refuseUnavailable(found);
  let grantId: string;
  try {
    grantId = await db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      const [grant] = await queryRows<{ id: string }>(
        t,
        sql`insert into sponsored_grants (kind, consumer_id, creator_id, application_id, promotion_code_id,
              credit_left_micros, bonus_percent, bonus_cap_micros, expires_at)
            values ('promotion', ${consumer.id}::uuid, ${found.creator_id}::uuid, ${found.application_id}::uuid,
              ${found.id}::uuid, ${found.kind === "amount" ? Number(found.amount_micros) : 0}::bigint,
              ${found.percent}::int, ${toNumber(found.cap_micros)}::bigint, ${found.expires_at}::timestamptz)
            returning id`,
      );
      const [counted] = await queryRows<{ id: string }>(
        t,
        sql`update promotion_codes set redemptions = redemptions + 1
            where id = ${found.id}::uuid and redemptions < max_redemptions and ended_at is null
              and starts_at <= now() and (expires_at is null or expires_at > now())
            returning id`,
      );
      if (!counted) {
        const [now] = await selectCodes(t, sql`c.id = ${found.id}::uuid`);
        refuseUnavailable(now ?? found);
        throw usedUp(found);
      }
      return grant?.id ?? "";
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw new AppError("conflict", "You have already redeemed this promotion code");
    throw error;
  }
  return findCredit(db, consumer.id, grantId);
}

function usedUp(row: CodeRow): AppError {
  return new AppError(
    "conflict",
    `This promotion code has been redeemed the most times it allows (${row.max_redemptions})`,
  );
}

function refuseUnavailable(row: CodeRow): void {
  const status = statusOf(row);
  if (status === "ended") throw new AppError("conflict", "This promotion code has ended");
  if (status === "expired" && row.expires_at)
    throw new AppError("conflict", `This promotion code expired on ${iso(row.expires_at)}`);
  if (status === "scheduled")
    throw new AppError("conflict", `This promotion code is valid from ${iso(row.starts_at)}`);
  if (status === "used_up") throw usedUp(row);
}

/**
 * A wallet top-up pays the bonus of each percent code its payer redeemed and has not used yet:
 * `percent` of the top-up, at most the code's cap, as credit on its creator's apps. Inside the
 * top-up's transaction, so a top-up pays each bonus once.
 */
export async function payTopUpBonuses(tx: Database, userId: string, amountCents: number): Promise<void> {
  await queryRows(
    tx,
    sql`update sponsored_grants
        set credit_left_micros = credit_left_micros
              + least(bonus_cap_micros, (${centsToMicros(amountCents)}::bigint * bonus_percent) / 100),
            bonus_applied_at = now()
        where consumer_id = ${userId}::uuid and kind = 'promotion' and bonus_percent is not null
          and bonus_applied_at is null and (expires_at is null or expires_at > now())`,
  );
}
