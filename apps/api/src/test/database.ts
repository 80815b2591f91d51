import { createHash, randomBytes } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
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
 * A fresh database for one test file, already migrated: PGlite in a temp directory, or, when the
 * vitest project sets TEST_DB=postgres, a new database on the server named by TEST_DATABASE_URL.
 *
 * Each starts as a copy of a template that the real migrations built once for this set of
 * migrations (`migrationsKey`): a copied PGlite directory, or `CREATE DATABASE … TEMPLATE`. A new
 * PGlite's initdb and 45 migrations took 22–50 s per file on a loaded two-core machine (opening a
 * copy: about 1 s), and most of the suite's files open one. `open()` still runs the migrator, which
 * finds everything applied. The migrations themselves are tested from empty by db/client.test.ts
 * and from older schemas by test/upgrade-database.ts, which do not use the template.
 */
export async function createTestDatabase(options: { memory?: boolean } = {}): Promise<TestDatabase> {
  if (process.env.TEST_DB === "postgres") {
    const adminUrl = process.env.TEST_DATABASE_URL;
    if (!adminUrl) throw new Error("TEST_DB=postgres needs TEST_DATABASE_URL");
    return createPostgresDatabase(adminUrl);
  }
  const template = await pgliteTemplate();
  // `memory`: on a memory-backed file system where there is one (the fuzzers' tens of thousands of
  // requests should not wait on a disk); PGlite's own memory:// would start with initdb again.
  const parent = options.memory && existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();
  const dir = mkdtempSync(path.join(parent, "pm-test-"));
  cpSync(path.join(template, "pgdata"), path.join(dir, "pgdata"), { recursive: true });
  return {
    kind: "pglite",
    serverEnv: { DATA_DIR: dir },
    open: () => openDatabase({ pgliteDir: path.join(dir, "pgdata") }),
    async destroy() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A new database, already migrated, on the PostgreSQL server that `adminUrl` reaches. */
export async function createPostgresDatabase(adminUrl: string): Promise<TestDatabase> {
  const template = await postgresTemplate(adminUrl);
  const name = `pm_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${template}`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(adminUrl, name);
  return {
    kind: "postgres",
    serverEnv: { DATABASE_URL: url },
    open: () => openDatabase({ databaseUrl: url, pgliteDir: "" }),
    async destroy() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), "../db/migrations");

/**
 * Names one set of migrations on one PGlite release: any change to a migration file, the journal
 * or PGlite's version (its data directory format) makes a new template.
 */
function migrationsKey(): string {
  const hash = createHash("sha256");
  hash.update(`pglite ${pgliteVersion()}\n`);
  const files = readdirSync(migrationsFolder, { recursive: true, encoding: "utf8" }).sort();
  for (const file of files) {
    const full = path.join(migrationsFolder, file);
    if (!file.endsWith(".sql") && !file.endsWith(".json")) continue;
    hash.update(`${file}\n`).update(readFileSync(full));
  }
  return hash.digest("hex").slice(0, 16);
}

/** PGlite's version, from its package.json (which its `exports` do not expose). */
function pgliteVersion(): string {
  let dir = path.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
  for (;;) {
    const file = path.join(dir, "package.json");
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version: string };
      if (manifest.name === "@electric-sql/pglite") return manifest.version;
    }
    if (path.dirname(dir) === dir) throw new Error("@electric-sql/pglite's package.json not found");
    dir = path.dirname(dir);
  }
}

let pgliteTemplateDir: Promise<string> | undefined;

/**
 * The migrated PGlite directory every test database is copied from, built once per machine and
 * set of migrations. Test files run in parallel processes: each builder builds in a directory of
 * its own and renames it into place; a builder that loses the race throws its copy away.
 */
function pgliteTemplate(): Promise<string> {
  pgliteTemplateDir ??= (async () => {
    const dir = path.join(os.tmpdir(), `pm-pglite-template-${migrationsKey()}`);
    if (existsSync(path.join(dir, "READY"))) return dir;
    const building = mkdtempSync(`${dir}.building-`);
    const handle = await openDatabase({ pgliteDir: path.join(building, "pgdata") });
    await handle.close();
    writeFileSync(path.join(building, "READY"), "");
    try {
      renameSync(building, dir);
    } catch {
      rmSync(building, { recursive: true, force: true });
      if (!existsSync(path.join(dir, "READY"))) throw new Error(`PGlite template ${dir} is incomplete`);
    }
    return dir;
  })();
  return pgliteTemplateDir;
}

const postgresTemplates = new Map<string, Promise<string>>();

/**
 * The migrated PostgreSQL database every test database is created from, built once per server and
 * set of migrations. Runs in parallel (test files, two vitest runs) take turns on an advisory lock;
 * the template is built under another name and renamed when complete, so a template that exists is
 * whole.
 */
function postgresTemplate(adminUrl: string): Promise<string> {
  const name = `pm_template_${migrationsKey()}`;
  let template = postgresTemplates.get(name);
  if (!template) {
    template = (async () => {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        await admin.query("select pg_advisory_lock(727275)");
        const exists = await admin.query("select 1 from pg_database where datname = $1", [name]);
        if (exists.rowCount === 0) {
          const building = `${name}_building`;
          await admin.query(`drop database if exists ${building} with (force)`);
          await admin.query(`create database ${building}`);
          const handle = await openDatabase({ databaseUrl: databaseUrl(adminUrl, building), pgliteDir: "" });
          await handle.close();
          await admin.query(`alter database ${building} rename to ${name}`);
        }
        return name;
      } finally {
        await admin.query("select pg_advisory_unlock(727275)").catch(() => {});
        await admin.end();
      }
    })();
    postgresTemplates.set(name, template);
  }
  return template;
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
