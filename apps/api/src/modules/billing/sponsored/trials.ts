import type { SponsoredCredit, TrialOffer } from "@promptmint/contracts";
import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../../../db/client.ts";
import type { ApplicationRow } from "../../../db/schema/index.ts";
import { isUniqueViolation } from "../../../lib/database-errors.ts";
import { AppError } from "../../../lib/errors.ts";
import type { LocalUser } from "../../auth/auth.service.ts";
import { effectivePriceCents } from "../price-changes.ts";
import { findCredit } from "./credits.ts";

/**
 * Free trials (issue 42, docs/decisions/080): an app's owner offers N calls per consumer, paid from
 * the owner's wallet. One person takes an app's trial once: who took it is claimed by account, by
 * the fingerprint of every card the account ever saved and, for an x402 payer, by its address,
 * each a primary key of `trial_claims`, so two starts at once (in any process) cannot both pass.
 */

/** The x402 issuer of account-less payers: their subject is the payer's address (decision 052). */
const X402_ISSUER = "x402";

/** An app's trial offer and, for `viewer`, whether they took it and what is left of it. */
export async function getTrialOffer(
  db: Database,
  app: ApplicationRow,
  viewer: LocalUser,
): Promise<TrialOffer> {
  const identities = await identitiesOf(db, viewer);
  const [row] = await queryRows<{
    trial_calls: number | null;
    used: boolean;
    calls_left: number | null;
    started: number;
  }>(
    db,
    sql`select (select trial_calls from trial_offers where application_id = ${app.id}::uuid) as trial_calls,
          exists (select 1 from trial_claims where application_id = ${app.id}::uuid
                  and identity = any(${textArray(identities)}::text[]))
            or ${usedByCardSql(app.id, viewer.id)} as used,
          (select calls_left from sponsored_grants where kind = 'trial' and application_id = ${app.id}::uuid
             and consumer_id = ${viewer.id}::uuid) as calls_left,
          (select count(*)::int from sponsored_grants where kind = 'trial' and application_id = ${app.id}::uuid) as started`,
  );
  return {
    trial_calls: row?.trial_calls ?? 0,
    used: row?.used ?? false,
    calls_left: row?.calls_left ?? null,
    trials_started: app.ownerId === viewer.id ? (row?.started ?? 0) : null,
  };
}

/** The free calls an app offers each new consumer: 0 when none (or the app is free). */
export async function offeredTrialCalls(db: Database, app: ApplicationRow): Promise<number> {
  if (effectivePriceCents(app) <= 0) return 0;
  const [row] = await queryRows<{ trial_calls: number }>(
    db,
    sql`select trial_calls from trial_offers where application_id = ${app.id}::uuid`,
  );
  return row?.trial_calls ?? 0;
}

/** The owner sets how many free calls each consumer may try (0 ends the offer; trials taken stay). */
export async function setTrialOffer(db: Database, app: ApplicationRow, trialCalls: number): Promise<void> {
  if (trialCalls > 0 && effectivePriceCents(app) <= 0)
    throw new AppError("bad_request", "A free app needs no trial: set a price first", {
      fields: { trial_calls: "must be 0 for a free app" },
    });
  await queryRows(
    db,
    sql`insert into trial_offers (application_id, trial_calls) values (${app.id}::uuid, ${trialCalls})
        on conflict (application_id) do update set trial_calls = excluded.trial_calls, updated_at = now()`,
  );
}

/**
 * Starts `consumer`'s trial of `app`: a grant of the offer's calls, its claims written in the same
 * transaction; 409 when the app offers none, or this person (account, card or payer address) took
 * it already.
 */
export async function startTrial(
  db: Database,
  app: ApplicationRow,
  consumer: LocalUser,
): Promise<SponsoredCredit> {
  if (app.ownerId === consumer.id)
    throw new AppError("conflict", "This is your own app: your calls of it are free already");
  const identities = await identitiesOf(db, consumer);
  let grantId: string;
  try {
    grantId = await db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      const [offer] = await queryRows<{ trial_calls: number }>(
        t,
        sql`select trial_calls from trial_offers where application_id = ${app.id}::uuid for share`,
      );
      if (!offer || offer.trial_calls <= 0 || effectivePriceCents(app) <= 0)
        throw new AppError("conflict", "This app offers no free trial");
      // A card saved since by an account that took the trial: the same person on another account.
      const [byCard] = await queryRows<{ used: boolean }>(
        t,
        sql`select ${usedByCardSql(app.id, consumer.id)} as used`,
      );
      if (byCard?.used) throw alreadyTaken("card:");
      const [grant] = await queryRows<{ id: string }>(
        t,
        sql`insert into sponsored_grants (kind, consumer_id, creator_id, application_id, calls_left)
            values ('trial', ${consumer.id}::uuid, ${app.ownerId}::uuid, ${app.id}::uuid, ${offer.trial_calls})
            returning id`,
      );
      const id = grant?.id ?? "";
      const claimed = await queryRows<{ identity: string }>(
        t,
        sql`insert into trial_claims (application_id, identity, grant_id)
            select ${app.id}::uuid, identity, ${id}::uuid
            from unnest(${textArray(identities)}::text[]) as identity
            on conflict do nothing
            returning identity`,
      );
      const taken = identities.find((identity) => !claimed.some((row) => row.identity === identity));
      if (taken) throw alreadyTaken(taken);
      return id;
    });
  } catch (error) {
    // The same person's start racing this one took a claim first (its statement waited for ours).
    if (isUniqueViolation(error)) throw alreadyTaken("account:");
    throw error;
  }
  return findCredit(db, consumer.id, grantId);
}

/** A text[] literal of identities (uuids, hex fingerprints, addresses: nothing to escape but quotes). */
function textArray(values: string[]): string {
  return `{${values.map((value) => `"${value.replace(/["\\]/g, "")}"`).join(",")}}`;
}

function alreadyTaken(identity: string): AppError {
  const by = identity.startsWith("card:")
    ? "with one of your saved cards"
    : identity.startsWith("payer:")
      ? "from this payer address"
      : "on your account";
  return new AppError(
    "conflict",
    `This app's free trial was already taken ${by}: it is offered once per person`,
  );
}

/** Whether another account that took the app's trial has saved one of `userId`'s cards since. */
function usedByCardSql(applicationId: string, userId: string) {
  return sql`exists (
    select 1 from sponsored_grants g
    join payment_methods other on other.user_id = g.consumer_id and other.fingerprint is not null
    join payment_methods mine on mine.fingerprint = other.fingerprint and mine.user_id = ${userId}::uuid
    where g.kind = 'trial' and g.application_id = ${applicationId}::uuid and g.consumer_id <> ${userId}::uuid)`;
}

/** The identities one person is known by: their account, every card they ever saved, their x402 address. */
async function identitiesOf(db: Database, user: LocalUser): Promise<string[]> {
  const cards = await queryRows<{ fingerprint: string }>(
    db,
    sql`select distinct fingerprint from payment_methods
        where user_id = ${user.id}::uuid and fingerprint is not null order by fingerprint`,
  );
  return [
    `account:${user.id}`,
    ...cards.map((card) => `card:${card.fingerprint}`),
    ...(user.issuer === X402_ISSUER ? [`payer:${user.subject.toLowerCase()}`] : []),
  ];
}
