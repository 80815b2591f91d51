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
import { afterAll, beforeAll } from "vitest";
import type { Database } from "../db/client.ts";
import * as schema from "../db/schema/index.ts";

const migrations = path.join(import.meta.dirname, "../db/migrations");

export interface DatabaseBefore {
  db: Database;
  upgrade(): Promise<void>;
  close(): Promise<void>;
}

/**
 * databaseBefore for a whole test file: made before its first test, closed after its last. Filled
 * in when made (as useTestServer), so read it inside tests.
 */
export function useDatabaseBefore(before: string): DatabaseBefore {
  const upgraded = {} as DatabaseBefore;
  beforeAll(async () => {
    Object.assign(upgraded, await databaseBefore(before));
  });
  afterAll(() => upgraded.close?.());
  return upgraded;
}

/**
 * A fresh database (PGlite, or a new database on TEST_DATABASE_URL when TEST_DB=postgres) migrated
 * up to, not including, the migration tagged `before`: the state a previous version left, for a
 * test to write in and then `upgrade()` with every migration.
 */
export async function databaseBefore(before: string): Promise<DatabaseBefore> {
  const folder = mkdtempSync(path.join(os.tmpdir(), "pm-migrations-"));
  cpSync(migrations, folder, { recursive: true });
  const journalFile = path.join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalFile, "utf8")) as { entries: { tag: string }[] };
  const upTo = journal.entries.findIndex((entry) => entry.tag === before);
  if (upTo < 1) throw new Error(`no migration tagged ${before}`);
  journal.entries = journal.entries.slice(0, upTo);
  writeFileSync(journalFile, JSON.stringify(journal));
  const opened = process.env.TEST_DB === "postgres" ? await openPostgres() : openPglite();
  await opened.migrate(folder);
  return {
    db: opened.db,
    upgrade: () => opened.migrate(migrations),
    async close() {
      await opened.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

interface OpenedDatabase {
  db: Database;
  /** Applies the migrations in `folder` that have not run yet. */
  migrate(folder: string): Promise<void>;
  close(): Promise<void>;
}

/** A new database on TEST_DATABASE_URL's server, dropped on close. */
async function openPostgres(): Promise<OpenedDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL ?? "";
  const name = `pm_upgrade_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  const db = drizzlePg(pool, { schema });
  return {
    db: db as unknown as Database,
    migrate: (folder) => migratePg(db, { migrationsFolder: folder }),
    async close() {
      await pool.end();
      await admin.query(`drop database if exists ${name}`);
      await admin.end();
    },
  };
}

/** An in-memory PGlite. */
function openPglite(): OpenedDatabase {
  const client = new PGlite();
  const db = drizzlePglite(client, { schema });
  return {
    db: db as unknown as Database,
    migrate: (folder) => migratePglite(db, { migrationsFolder: folder }),
    close: () => client.close(),
  };
}
