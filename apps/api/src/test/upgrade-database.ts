import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import type { Database } from "../db/client.ts";
import * as schema from "../db/schema/index.ts";

const migrations = path.join(import.meta.dirname, "../db/migrations");

/**
 * A fresh database (PGlite, or a new database on TEST_DATABASE_URL when TEST_DB=postgres) migrated
 * up to, not including, the migration tagged `before`: the state a previous version left, for a
 * test to write in and then `upgrade()` with every migration.
 */
export async function databaseBefore(before: string): Promise<{
  db: Database;
  upgrade(): Promise<void>;
  close(): Promise<void>;
}> {
  const folder = mkdtempSync(path.join(os.tmpdir(), "pm-migrations-"));
  cpSync(migrations, folder, { recursive: true });
  const journalFile = path.join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { tag: string }[] };
  const upTo = journal.entries.findIndex((entry) => entry.tag === before);
  if (upTo < 1) throw new Error(`no migration tagged ${before}`);
  journal.entries = journal.entries.slice(0, upTo);
  writeFileSync(journalFile, JSON.stringify(journal));
  const removeFolder = () => rmSync(folder, { recursive: true, force: true });

  if (process.env.TEST_DB === "postgres") {
    const adminUrl = process.env.TEST_DATABASE_URL ?? "";
    const name = `pm_upgrade_${randomBytes(6).toString("hex")}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
    const db = drizzlePg(pool, { schema });
    await migratePg(db, { migrationsFolder: folder });
    return {
      db: db as unknown as Database,
      upgrade: () => migratePg(db, { migrationsFolder: migrations }),
      async close() {
        await pool.end();
        await admin.query(`drop database if exists ${name}`);
        await admin.end();
        removeFolder();
      },
    };
  }
  const client = new PGlite();
  const db = drizzlePglite(client, { schema });
  await migratePglite(db, { migrationsFolder: folder });
  return {
    db: db as unknown as Database,
    upgrade: () => migratePglite(db, { migrationsFolder: migrations }),
    async close() {
      await client.close();
      removeFolder();
    },
  };
}
