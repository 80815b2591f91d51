import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { type DatabaseHandle, openDatabase } from "../db/client.ts";

export interface TestDatabase {
  kind: "pglite" | "postgres";
  /** Opens (and migrates) a connection; call again to simulate a restart on the same data. */
  open(): Promise<DatabaseHandle>;
  /**
   * How a separate server process (`node src/main.ts`) reaches the same data: DATABASE_URL on
   * PostgreSQL, DATA_DIR on PGlite (which only one process at a time may open).
   */
  serverEnv: Record<string, string>;
  /** Drops the database / removes the directory. */
  destroy(): Promise<void>;
}

/**
 * A fresh, empty database for one test file: PGlite in a temp directory, or, when the vitest
 * project sets TEST_DB=postgres, a new database on the server named by TEST_DATABASE_URL.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (process.env.TEST_DB === "postgres") {
    const adminUrl = process.env.TEST_DATABASE_URL;
    if (!adminUrl) throw new Error("TEST_DB=postgres needs TEST_DATABASE_URL");
    return createPostgresDatabase(adminUrl);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), "pm-test-"));
  return {
    kind: "pglite",
    serverEnv: { DATA_DIR: dir },
    open: () => openDatabase({ pgliteDir: path.join(dir, "pgdata") }),
    async destroy() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A new, empty database on the PostgreSQL server that `adminUrl` reaches. */
export async function createPostgresDatabase(adminUrl: string): Promise<TestDatabase> {
  const name = `pm_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    kind: "postgres",
    serverEnv: { DATABASE_URL: url.toString() },
    open: () => openDatabase({ databaseUrl: url.toString(), pgliteDir: "" }),
    async destroy() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
