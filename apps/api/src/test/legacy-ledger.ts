import { sql } from "drizzle-orm";
import { type Database, queryRows } from "../db/client.ts";

/**
 * The ledger as versions before migration 0020 wrote it (integer cents: `balance_cents`,
 * `amount_cents`), for the tests that migrate a database written by a previous version. Today's
 * ledger code writes micro-dollar columns that such a database does not have yet.
 */
export async function legacyAccount(db: Database, kind: string, ownerId: string | null): Promise<string> {
  const [existing] = await queryRows<{ id: string }>(
    db,
    sql`select id from ledger_accounts where kind = ${kind}
        and owner_id is not distinct from ${ownerId}::uuid`,
  );
  if (existing) return existing.id;
  const [created] = await queryRows<{ id: string }>(
    db,
    sql`insert into ledger_accounts (kind, owner_id) values (${kind}, ${ownerId}::uuid) returning id`,
  );
  if (!created) throw new Error(`could not create a legacy ${kind} account`);
  return created.id;
}

/** One balanced transaction in cents, its entries and balances, as the previous versions posted it. */
export async function legacyPost(
  db: Database,
  posting: {
    kind: string;
    reference: string;
    description: string;
    entries: { accountId: string; cents: number }[];
  },
): Promise<string> {
  const [transaction] = await queryRows<{ id: string }>(
    db,
    sql`insert into ledger_transactions (kind, reference, description)
        values (${posting.kind}, ${posting.reference}, ${posting.description}) returning id`,
  );
  if (!transaction) throw new Error("could not post a legacy transaction");
  for (const entry of posting.entries) {
    await queryRows(
      db,
      sql`insert into ledger_entries (transaction_id, account_id, amount_cents)
          values (${transaction.id}::uuid, ${entry.accountId}::uuid, ${entry.cents})`,
    );
    await queryRows(
      db,
      sql`update ledger_accounts set balance_cents = balance_cents + ${entry.cents} where id = ${entry.accountId}::uuid`,
    );
  }
  return transaction.id;
}

/** A top-up in cents from the clearing account, as the previous versions posted it. */
export async function legacyTopUp(
  db: Database,
  userId: string,
  cents: number,
  reference: string,
): Promise<void> {
  await legacyPost(db, {
    kind: "top_up",
    reference,
    description: "Top-up",
    entries: [
      { accountId: await legacyAccount(db, "clearing", null), cents: -cents },
      { accountId: await legacyAccount(db, "wallet", userId), cents },
    ],
  });
}

/** A payer, a creator and the creator's prompt app at `priceCents`, as any version wrote them. */
export async function legacyPayerCreatorApp(
  db: Database,
  priceCents: number,
): Promise<{ payer: { id: string }; creator: { id: string }; app: { id: string } }> {
  const [payer, creator] = await queryRows<{ id: string }>(
    db,
    sql`insert into users (issuer, subject, username, email)
        values ('test', 'payer', 'payer', 'payer@example.test'), ('test', 'creator', 'creator', 'creator@example.test')
        returning id`,
  );
  if (!payer || !creator) throw new Error("expected two users");
  const [app] = await queryRows<{ id: string }>(
    db,
    sql`insert into applications (owner_id, name, slug, type, price_cents)
        values (${creator.id}, 'Old', 'old', 'prompt', ${priceCents}) returning id`,
  );
  if (!app) throw new Error("expected an app");
  return { payer, creator, app };
}
