import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { sql } from "drizzle-orm";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, queryRows } from "../../db/client.ts";
import * as schema from "../../db/schema/index.ts";
import { balancesOf } from "./balances.ts";
import { accountFor, postTransaction } from "./postings.ts";
import { reconcile } from "./reconcile.ts";

// Migration 0018 (decision 023) on a database written by the previous version: concurrent
// subscribes left two live subscriptions of one consumer to one app (paid twice), and a plan
// payment was stranded by a plan withdrawn after it was paid.

const migrations = path.join(import.meta.dirname, "../../db/migrations");

let folder: string;
let db: Database;
let migrateAll: (migrationsFolder: string) => Promise<void>;
let close: () => Promise<void>;

beforeAll(async () => {
  folder = mkdtempSync(path.join(os.tmpdir(), "pm-migrations-"));
  cpSync(migrations, folder, { recursive: true });
  const journalFile = path.join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { tag: string }[] };
  const mine = journal.entries.findIndex((entry) => entry.tag === "0018_subscription_payment_integrity");
  expect(mine).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, mine);
  writeFileSync(journalFile, JSON.stringify(journal));

  if (process.env.TEST_DB === "postgres") {
    const adminUrl = process.env.TEST_DATABASE_URL ?? "";
    const name = `pm_upgrade_${randomBytes(6).toString("hex")}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
    const pgDb = drizzlePg(pool, { schema });
    db = pgDb as unknown as Database;
    migrateAll = (migrationsFolder) => migratePg(pgDb, { migrationsFolder });
    close = async () => {
      await pool.end();
      await admin.query(`drop database if exists ${name}`);
      await admin.end();
    };
  } else {
    const client = new PGlite();
    const pgliteDb = drizzlePglite(client, { schema });
    db = pgliteDb as unknown as Database;
    migrateAll = (migrationsFolder) => migratePglite(pgliteDb, { migrationsFolder });
    close = () => client.close();
  }
  await migrateAll(folder);
});
afterAll(async () => {
  await close?.();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

it("ends duplicate subscriptions with a refund, credits stranded plan payments, then enforces one per app", async () => {
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
        values (${creator.id}, 'Old', 'old', 'prompt', 10) returning id`,
  );
  const [plan, withdrawn] = await queryRows<{ id: string }>(
    db,
    sql`insert into packages (application_id, name, price_cents, included_calls, is_active)
        values (${app?.id}, 'Basic', 300, 5, true), (${app?.id}, 'Gone', 300, 5, false) returning id`,
  );
  const [wallet, clearing, earnings, platform] = await Promise.all([
    accountFor(db, "wallet", payer.id),
    accountFor(db, "clearing", null),
    accountFor(db, "earnings", creator.id),
    accountFor(db, "platform_fee", null),
  ]);
  await db.transaction((tx) =>
    postTransaction(tx as unknown as Database, {
      kind: "top_up",
      reference: "seed",
      description: "seed",
      entries: [
        { accountId: clearing, amountMicros: -600 },
        { accountId: wallet, amountMicros: 600 },
      ],
    }),
  );
  // The race: two subscribes, each paying from the wallet in the transaction creating its row.
  const subscribeOnce = () =>
    db.transaction(async (tx) => {
      const t = tx as unknown as Database;
      await postTransaction(t, {
        kind: "subscription",
        reference: crypto.randomUUID(),
        description: "Plan 'Basic' for Old",
        entries: [
          { accountId: wallet, amountMicros: -300 },
          { accountId: earnings, amountMicros: 270 },
          { accountId: platform, amountMicros: 30 },
        ],
      });
      const [row] = await queryRows<{ id: string }>(
        t,
        sql`insert into subscriptions (package_id, application_id, subscriber_id, status, current_period_start,
              current_period_end, calls_included)
            values (${plan?.id}, ${app?.id}, ${payer.id}, 'active', now(), now() + interval '30 days', 5) returning id`,
      );
      return row?.id as string;
    });
  const older = await subscribeOnce();
  const newer = await subscribeOnce();
  await queryRows(
    db,
    sql`insert into payments (user_id, gateway, external_id, amount_cents, status, purpose, package_id)
        values (${payer.id}, 'sandbox', 'pi_stranded', 300, 'succeeded', 'subscription', ${withdrawn?.id})`,
  );

  await migrateAll(migrations);

  const rows = await queryRows<{ id: string; status: string; period_transaction_id: string | null }>(
    db,
    sql`select id, status, period_transaction_id from subscriptions order by created_at`,
  );
  expect(rows.map((row) => [row.id, row.status])).toEqual([
    [older, "canceled"],
    [newer, "active"],
  ]);
  expect(rows.every((row) => row.period_transaction_id !== null)).toBe(true);
  // The duplicate's 300 and the stranded 300 are back in the wallet; the creator keeps one period.
  expect(await balancesOf(db, payer.id)).toMatchObject({ wallet: 600 });
  expect(await balancesOf(db, creator.id)).toMatchObject({ earnings: 270 });
  const [stranded] = await queryRows<{ consumed_kind: string }>(
    db,
    sql`select consumed_kind from payments where external_id = 'pi_stranded'`,
  );
  expect(stranded?.consumed_kind).toBe("wallet");
  expect((await reconcile(db)).ok).toBe(true);
  await expect(
    queryRows(db, sql`update subscriptions set status = 'active' where id = ${older}`),
  ).rejects.toThrow();
});
