import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { type SQL, sql } from "drizzle-orm";
import { drizzle as drizzlePg } from "drizzle-orm/node-postgres";
import { migrate as migratePg } from "drizzle-orm/node-postgres/migrator";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import * as schema from "./schema/index.ts";

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseHandle {
  db: Database;
  kind: "pglite" | "postgres";
  close(): Promise<void>;
}

const migrationsFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");

/**
 * Opens PostgreSQL: a real server when `databaseUrl` is given, otherwise embedded PGlite
 * stored in `pgliteDir` (or in memory when that is "memory://"). Migrations run before return.
 */
export async function openDatabase(options: {
  databaseUrl?: string;
  pgliteDir: string;
}): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = newPool(options.databaseUrl, 20);
    const db = drizzlePg(pool, { schema }) as unknown as Database;
    // The paid path's settlements get connections of their own (modules/gateway/recorder.ts): a
    // call that has been answered upstream must never queue for a connection behind new calls.
    const writerPool = newPool(options.databaseUrl, 2);
    writers.set(db, drizzlePg(writerPool, { schema }) as unknown as Database);
    const client = await pool.connect();
    try {
      // Several nodes may start together; one migrates, the others wait for it.
      await client.query("select pg_advisory_lock(727274)");
      await migratePg(drizzlePg(client, { schema }), { migrationsFolder });
    } finally {
      await client.query("select pg_advisory_unlock(727274)").catch(() => {});
      client.release();
    }
    return {
      db,
      kind: "postgres",
      close: async () => {
        await Promise.all([pool.end(), writerPool.end()]);
      },
    };
  }
  // A fresh DATA_DIR (a new volume, say) is created rather than refused.
  if (!options.pgliteDir.includes("://")) mkdirSync(options.pgliteDir, { recursive: true });
  const client = new PGlite(options.pgliteDir);
  const pgliteDb = drizzlePglite(client, { schema });
  await migratePglite(pgliteDb, { migrationsFolder });
  return { db: pgliteDb as unknown as Database, kind: "pglite", close: () => client.close() };
}

/**
 * A pool whose requests fail fast (503) while the server is away, but wait out a burst: a
 * connection attempt gives up after 5 s, while waiting for a pooled connection under load may take
 * up to 30 s (thousands of calls arriving at once queue here rather than being refused).
 */
function newPool(connectionString: string, max: number): pg.Pool {
  class Client extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    }
  }
  const pool = new pg.Pool({ connectionString, max, Client, connectionTimeoutMillis: POOL_WAIT_MS });
  // An idle connection dropped by the server (restart, failover, pg_terminate_backend) emits
  // 'error' on the pool; unhandled, that would crash the process. The pool replaces it, and
  // the next query that fails reports the outage.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

const CONNECT_TIMEOUT_MS = 5_000;
const POOL_WAIT_MS = 30_000;

// Handles with a separate pool for writes that must not wait behind others (see writerFor).
const writers = new WeakMap<Database, Database>();

/** The handle for the paid path's settlement writes: its own connections on PostgreSQL, the same handle on PGlite. */
export function writerFor(db: Database): Database {
  return writers.get(db) ?? db;
}

/** Rows of a raw `db.execute(sql\`…\`)`: node-postgres and PGlite both answer `{ rows }`. */
export async function queryRows<T>(db: Database, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}

interface SessionInternals {
  dialect: { sqlToQuery(query: SQL): { sql: string; params: unknown[] } };
  session: {
    prepareQuery(
      query: { sql: string; params: unknown[] },
      fields: undefined,
      name: string,
      isResponseInArrayMode: boolean,
    ): { execute(): Promise<unknown> };
  };
}

/**
 * `db.execute(query)` as a named prepared statement: PostgreSQL parses and plans the text once
 * per connection instead of on every call, which matters for the statements of the hot path
 * (recording an invocation is one large statement). The name is the text's hash, so two texts
 * never share a name. PGlite runs it as usual. Works on transactions as well as the pool.
 */
export async function executePrepared(db: Database, query: SQL): Promise<void> {
  const { dialect, session } = db as unknown as SessionInternals;
  const compiled = dialect.sqlToQuery(query);
  const name = `pm_${createHash("sha1").update(compiled.sql).digest("hex").slice(0, 24)}`;
  await session.prepareQuery(compiled, undefined, name, false).execute();
}

/**
 * A statement of fixed text, run as a named prepared statement with positional parameters and no
 * query building per call: for the few statements every paid call runs (docs/decisions/012).
 * PostgreSQL parses it once per connection and, after a few runs, reuses a generic plan.
 */
export function preparedStatement<Row>(name: string, text: string) {
  const query = { sql: text, params: [] as unknown[] };
  return async (db: Database, params: unknown[]): Promise<Row[]> => {
    const { session } = db as unknown as SessionInternals;
    const result = (await session.prepareQuery({ ...query, params }, undefined, name, false).execute()) as {
      rows: Row[];
    };
    return result.rows;
  };
}

export async function pingDatabase(db: Database): Promise<void> {
  await db.execute(sql`select 1`);
}
