import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { eq, sql } from "drizzle-orm";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Database, queryRows } from "../../db/client.ts";
import * as schema from "../../db/schema/index.ts";
import { holds } from "../../db/schema/index.ts";
import { balancesOf } from "./balances.ts";
import { closeHold } from "./holds.ts";
import { accountFor, creditTopUp, postTransaction } from "./postings.ts";
import { reconcile } from "./reconcile.ts";

// Migration 0015 (decision 020) on a database written by the previous version: a lease still open
// at the upgrade had its calls posted one by one already, so its close must not post them again.

const migrations = path.join(import.meta.dirname, "../../db/migrations");
const PRICE = 10;
const FEE = 1;

let folder: string;
let db: Database;
let migrateAll: (migrationsFolder: string) => Promise<void>;
let close: () => Promise<void>;

beforeAll(async () => {
  // The migrations as the previous version shipped them: up to 0014.
  folder = mkdtempSync(path.join(os.tmpdir(), "pm-migrations-"));
  cpSync(migrations, folder, { recursive: true });
  const journalFile = path.join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { tag: string }[] };
  const upTo = journal.entries.findIndex((entry) => entry.tag === "0014_subscription_closes_leases");
  expect(upTo).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, upTo + 1);
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

it("shrinks a lease open at the upgrade to its unspent rest, so its close posts no call twice", async () => {
  // The previous version's state: a lease of 10 calls, 3 of them settled one by one.
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
        values (${creator.id}, 'Old', 'old', 'prompt', ${PRICE}) returning id`,
  );
  if (!app) throw new Error("expected an app");
  await creditTopUp(db, {
    userId: payer.id,
    amountCents: 1_000,
    reference: "upgrade",
    description: "Top-up",
  });
  const wallet = await accountFor(db, "wallet", payer.id);
  const held = await accountFor(db, "held", payer.id);
  const earnings = await accountFor(db, "earnings", creator.id);
  const platform = await accountFor(db, "platform_fee", null);
  const [lease] = await queryRows<{ id: string }>(
    db,
    sql`insert into holds (payer_id, application_id, creator_id, amount_micros, settled_micros, expires_at)
        values (${payer.id}, ${app.id}, ${creator.id}, ${10 * PRICE}, ${3 * PRICE}, now() + interval '1 hour')
        returning id`,
  );
  if (!lease) throw new Error("expected a hold");
  await db.transaction(async (tx) => {
    const t = tx as unknown as Database;
    await postTransaction(t, {
      kind: "hold",
      reference: lease.id,
      description: "Held for paid calls",
      entries: [
        { accountId: wallet, amountMicros: -10 * PRICE },
        { accountId: held, amountMicros: 10 * PRICE },
      ],
    });
    for (let call = 0; call < 3; call++)
      await postTransaction(t, {
        kind: "settle",
        reference: `invocation-${call}`,
        description: "Paid call",
        entries: [
          { accountId: held, amountMicros: -PRICE },
          { accountId: earnings, amountMicros: PRICE - FEE },
          { accountId: platform, amountMicros: FEE },
        ],
      });
  });
  expect(await balancesOf(db, payer.id)).toMatchObject({ wallet: 900, held: 70 });

  await migrateAll(migrations);

  const [migrated] = await db.select().from(holds).where(eq(holds.id, lease.id));
  expect(migrated).toMatchObject({
    amountCents: 7 * PRICE,
    settledCents: 0,
    feeCents: 0,
    calls: 0,
    status: "held",
  });
  expect((await reconcile(db)).ok).toBe(true);
  // Closed with nothing more spent: the 7 unspent prices go back, the 3 settled calls stay paid once.
  expect(await closeHold(db, lease.id)).toBe(true);
  expect(await balancesOf(db, payer.id)).toMatchObject({ wallet: 970, held: 0 });
  expect((await balancesOf(db, creator.id)).earnings).toBe(3 * (PRICE - FEE));
  const report = await reconcile(db);
  expect(report.mismatchedHolds).toEqual([]);
  expect(report.ok).toBe(true);
});
