import { AsyncLocalStorage } from "node:async_hooks";
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
import { attachChangeFeed, feedListening, pgliteChangeFeed, postgresChangeFeed } from "./change-feed.ts";
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
    // Up to `min` connections are kept open while idle (not closed after 10 s): those the start-up
    // warm-up opened and prepared the paid path's statements on stay ready for the first call
    // however late it comes (warmConnections).
    const pool = newPool(options.databaseUrl, 20, WARM_CONNECTIONS);
    const db = drizzlePg(routed(pool), { schema }) as unknown as Database;
    pools.set(db, pool);
    // The paid path's settlements get connections of their own (modules/billing/call-payment/record.ts): a
    // call that has been answered upstream must never queue for a connection behind new calls.
    const writerPool = newPool(options.databaseUrl, 2, 2);
    const writer = drizzlePg(routed(writerPool), { schema }) as unknown as Database;
    pools.set(writer, writerPool);
    writers.set(db, writer);
    // Background relays (the event log's webhooks and exports, decision 068) run every few seconds:
    // on connections of their own they never take one from a paid call or the warm ones.
    const backgroundPool = newPool(options.databaseUrl, 2, 0);
    backgrounds.set(db, drizzlePg(routed(backgroundPool), { schema }) as unknown as Database);
    const client = await pool.connect();
    try {
      // Several nodes may start together; one migrates, the others wait for it.
      await client.query("select pg_advisory_lock(727274)");
      await migratePg(drizzlePg(client, { schema }), { migrationsFolder });
    } finally {
      await client.query("select pg_advisory_unlock(727274)").catch(() => {});
      client.release();
    }
    // Changes to the rows the paid path keeps copies of, from every process (lib/lookup-cache.ts).
    // Start-up waits briefly for it: until it listens, those copies are kept only seconds.
    const feed = postgresChangeFeed(options.databaseUrl);
    attachChangeFeed(db, feed);
    await feedListening(feed, FEED_WAIT_MS).catch(() => {});
    return {
      db,
      kind: "postgres",
      close: async () => {
        await feed.close();
        await Promise.all([pool.end(), writerPool.end(), backgroundPool.end()]);
      },
    };
  }
  // A fresh DATA_DIR (a new volume, say) is created rather than refused.
  if (!options.pgliteDir.includes("://")) mkdirSync(options.pgliteDir, { recursive: true });
  const client = new PGlite(options.pgliteDir);
  const pgliteDb = drizzlePglite(client, { schema });
  await migratePglite(pgliteDb, { migrationsFolder });
  const feed = await pgliteChangeFeed(client);
  attachChangeFeed(pgliteDb as unknown as Database, feed);
  return {
    db: pgliteDb as unknown as Database,
    kind: "pglite",
    close: async () => {
      await feed.close();
      await client.close();
    },
  };
}

/** How long start-up waits for the change feed to listen before it goes on without (short copies). */
const FEED_WAIT_MS = 2_000;

/**
 * A pool whose requests fail fast (503) while the server is away, but wait out a burst: a
 * connection attempt gives up after 5 s, while waiting for a pooled connection under load may take
 * up to 30 s (thousands of calls arriving at once queue here rather than being refused).
 */
function newPool(connectionString: string, max: number, min: number): pg.Pool {
  class Client extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    }
  }
  const pool = new pg.Pool({ connectionString, max, min, Client, connectionTimeoutMillis: POOL_WAIT_MS });
  // An idle connection dropped by the server (restart, failover, pg_terminate_backend) emits
  // 'error' on the pool; unhandled, that would crash the process. The pool replaces it, and
  // the next query that fails reports the outage.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

/**
 * A rehearsal (`rehearse`): one connection inside a transaction that is only ever rolled back.
 * `open` turns false when it ends; `savepoints` counts the transactions opened inside it.
 */
interface Rehearsal {
  client: pg.PoolClient;
  open: boolean;
  savepoints: number;
  /** The last query sent: the next waits for it (one connection answers one query at a time). */
  tail: Promise<unknown>;
}
const rehearsals = new AsyncLocalStorage<Rehearsal>();

/**
 * The pool as the handle's drizzle sees it: the pool itself, except in a rehearsal, where every
 * query and every connection taken for a transaction is the rehearsal's own connection.
 */
function routed(pool: pg.Pool): pg.Pool {
  return new Proxy(pool, {
    get(target, property) {
      if (property === "query")
        return (...args: unknown[]) => {
          const rehearsal = rehearsals.getStore();
          return rehearsal
            ? rehearsalConnection(rehearsal).query(...(args as [string]))
            : (target.query as (...a: unknown[]) => unknown)(...args);
        };
      if (property === "connect")
        return () => {
          const rehearsal = rehearsals.getStore();
          return rehearsal ? Promise.resolve(rehearsalConnection(rehearsal)) : target.connect();
        };
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The rehearsal's connection as a pooled client: a transaction opened on it (drizzle's `begin`,
 * `commit`, `rollback`) becomes a savepoint of the rehearsal's transaction, so nothing can commit;
 * releasing it keeps it. Once the rehearsal is over, every query is refused: work it left behind
 * (a promise that settles late) can never reach the database outside it.
 */
function rehearsalConnection(rehearsal: Rehearsal) {
  const run = (text: string) => rehearsal.client.query(text);
  const send = async (config: string | { text: string }, values?: unknown[]) => {
    if (!rehearsal.open) throw new Error("the start-up rehearsal is over; its work is rolled back");
    const text = (typeof config === "string" ? config : config.text).trim().toLowerCase();
    if (/^(begin|start transaction)\b/.test(text)) {
      rehearsal.savepoints += 1;
      return run(`savepoint pm_rehearsal_${rehearsal.savepoints}`);
    }
    if (text === "commit" || text === "end") {
      return run(`release savepoint pm_rehearsal_${rehearsal.savepoints--}`);
    }
    if (text === "rollback") {
      const savepoint = `pm_rehearsal_${rehearsal.savepoints--}`;
      await run(`rollback to savepoint ${savepoint}`);
      return run(`release savepoint ${savepoint}`);
    }
    return rehearsal.client.query(config as string, values);
  };
  return {
    query(config: string | { text: string }, values?: unknown[]) {
      // In order, one at a time, as separate connections would have run them side by side.
      const result = rehearsal.tail.then(() => send(config, values));
      rehearsal.tail = result.catch(() => {});
      return result;
    },
    release() {},
  } as unknown as pg.PoolClient;
}

/**
 * Runs `run` in a rehearsal (the start-up warm-up's paid calls, warm-up.ts) on each of the
 * connections the warm-up keeps, main pool and writer pool, one after another: every query the
 * handle and its writer make meanwhile goes to that one connection, in a transaction that is rolled
 * back when `run` ends, whatever happens; a transaction opened inside it is a savepoint, so no
 * COMMIT is ever sent. Each connection's backend thus runs every statement of a paid call once
 * (its catalog caches, partition routing and foreign-key checks warmed), not only the one a pool
 * happened to hand out. A crash meanwhile leaves nothing either (an open transaction dies with
 * its connection). Answers `run`'s results by connection; PGlite has no pool: undefined, `run`
 * is not run. A failing run stops the rehearsal with its error.
 */
export async function rehearse<T>(
  db: Database,
  run: (connection: number) => Promise<T>,
  connections = WARM_CONNECTIONS,
): Promise<T[] | undefined> {
  const main = pools.get(db);
  if (!main) return undefined;
  const clients: pg.PoolClient[] = [];
  const results: T[] = [];
  try {
    for (const [pool, count] of [
      [main, connections],
      [pools.get(writerFor(db)), 2],
    ] as const) {
      if (pool) await takeDistinct(pool, count, clients);
    }
    for (const [index, client] of clients.entries()) results.push(await rehearseOn(client, () => run(index)));
    return results;
  } finally {
    for (const client of clients) client.release((client as { broken?: Error }).broken ?? false);
  }
}

async function rehearseOn<T>(client: pg.PoolClient, run: () => Promise<T>): Promise<T> {
  const rehearsal: Rehearsal = { client, open: true, savepoints: 0, tail: Promise.resolve() };
  try {
    await client.query("begin");
    return await rehearsals.run(rehearsal, run);
  } finally {
    rehearsal.open = false;
    // The query on the wire finishes; those queued after it are refused.
    await rehearsal.tail;
    await client.query("rollback").catch((error: Error) => {
      // A connection that could not roll back is closed on release, which rolls it back.
      (client as { broken?: Error }).broken = error;
    });
  }
}

const CONNECT_TIMEOUT_MS = 5_000;
const POOL_WAIT_MS = 30_000;

/** Connections of the main pool the start-up warm-up opens and the pool keeps open while idle. */
export const WARM_CONNECTIONS = 4;

// The pool behind each PostgreSQL handle (the main one and its writer), for the warm-up.
const pools = new WeakMap<Database, pg.Pool>();

// Handles with a separate pool for writes that must not wait behind others (see writerFor).
const writers = new WeakMap<Database, Database>();

// Handles with a separate pool for background jobs that run every few seconds (see backgroundFor).
const backgrounds = new WeakMap<Database, Database>();

/** The handle for frequent background work: two connections of its own on PostgreSQL, the same handle on PGlite. */
export function backgroundFor(db: Database): Database {
  return backgrounds.get(db) ?? db;
}

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
export function preparedStatement<Row>(name: string, text: string, warmUp: { params: () => unknown[] }) {
  if (namedStatements.has(name) && namedStatements.get(name)?.text !== text)
    throw new Error(`two prepared statements are named ${name}`);
  namedStatements.set(name, { text, warmUpParams: warmUp.params });
  const query = { sql: text, params: [] as unknown[] };
  return async (db: Database, params: unknown[]): Promise<Row[]> => {
    const { session } = db as unknown as SessionInternals;
    const result = (await session.prepareQuery({ ...query, params }, undefined, name, false).execute()) as {
      rows: Row[];
    };
    return result.rows;
  };
}

/** An id no row has: the warm-up runs of the named statements use it, so they match nothing. */
export const NO_ROW = "00000000-0000-4000-8000-000000000000";

/**
 * Every statement made by preparedStatement, by name: what the warm-up prepares and plans on each
 * connection, with parameters that match no row (its runs are rolled back anyway).
 */
const namedStatements = new Map<string, { text: string; warmUpParams: () => unknown[] }>();

/** The names of the statements the warm-up prepares (those of preparedStatement). */
export function namedStatementNames(): string[] {
  return [...namedStatements.keys()];
}

/**
 * Parses a named statement on a connection without running it (Parse, Describe, Sync) and marks it
 * parsed the way node-postgres does for its own named queries, so the first real run of the
 * statement on this connection skips the parse. Nothing is executed: no row is read or written.
 */
class PrepareOnly {
  readonly name: string;
  readonly text: string;
  readonly promise: Promise<void>;
  private settle!: (error?: Error) => void;
  private failure: Error | undefined;

  constructor(name: string, text: string) {
    this.name = name;
    this.text = text;
    this.promise = new Promise<void>((resolve, reject) => {
      this.settle = (error) => (error ? reject(error) : resolve());
    });
  }

  submit(connection: {
    parse(query: { name: string; text: string; types: unknown[] }): void;
    describe(message: { type: "S"; name: string }): void;
    sync(): void;
    submittedNamedStatements: Record<string, string>;
  }): void {
    connection.submittedNamedStatements[this.name] = this.text;
    connection.parse({ name: this.name, text: this.text, types: [] });
    connection.describe({ type: "S", name: this.name });
    connection.sync();
  }

  handleRowDescription(): void {}

  handleError(error: Error): void {
    // The server still answers ReadyForQuery after the Sync, but the client no longer routes it here.
    this.failure = error;
    this.settle(error);
  }

  handleReadyForQuery(): void {
    this.settle(this.failure);
  }
}

/**
 * Opens up to `connections` connections of the handle's pool and of its writer pool (PostgreSQL
 * only) and prepares every named statement of the paid path on each (start-up warm-up, see
 * warm-up.ts), then gets each past its custom plans (`planOn`). The pools keep them open while
 * idle. Answers how many connections were warmed, how many statements were prepared and how many
 * were planned; PGlite has no pool and answers zeros.
 */
export async function warmConnections(
  db: Database,
  connections = WARM_CONNECTIONS,
): Promise<{ connections: number; statements: number; plans: number }> {
  const texts = [...namedStatements];
  let warmed = 0;
  let statements = 0;
  let plans = 0;
  for (const [handle, count] of [
    [db, connections],
    [writerFor(db), 2],
  ] as const) {
    const pool = pools.get(handle);
    if (!pool) continue;
    const clients: pg.PoolClient[] = [];
    try {
      await takeDistinct(pool, count, clients);
      await Promise.all(
        clients.map(async (client) => {
          const parsed = (client as unknown as { connection: { parsedStatements: Record<string, string> } })
            .connection.parsedStatements;
          for (const [name, { text }] of texts) {
            if (parsed[name] === text) continue;
            await (client.query(new PrepareOnly(name, text) as never) as unknown as PrepareOnly).promise;
            statements += 1;
          }
          const planned = await planOn(client, texts);
          plans += planned;
        }),
      );
      warmed += clients.length;
    } finally {
      for (const client of clients) client.release();
    }
  }
  return { connections: warmed, statements, plans };
}

/**
 * Takes up to `count` of the pool's connections at once, so each is a different one (one released
 * early would be handed out again), into `clients`, which the caller releases; throws the first
 * refusal after taking the rest.
 */
async function takeDistinct(pool: pg.Pool, count: number, clients: pg.PoolClient[]): Promise<void> {
  const opened = await Promise.allSettled(
    Array.from({ length: Math.min(count, pool.options.max ?? count) }, () => pool.connect()),
  );
  for (const result of opened) if (result.status === "fulfilled") clients.push(result.value);
  const refused = opened.find((result) => result.status === "rejected");
  if (refused) throw refused.reason;
}

/**
 * PostgreSQL plans a prepared statement afresh for each of its first five runs on a connection
 * (custom plans; the record statement's takes ~1.5–5 ms) before it settles on a reusable plan
 * or keeps planning: the first calls after start paid that on every connection. This runs each
 * named statement that many times on the connection, with parameters that match no row, in a
 * transaction that is rolled back: the plan cache keeps its plans and counts, the database
 * keeps nothing. Answers how many statements are past their custom plans.
 */
async function planOn(
  client: pg.PoolClient,
  texts: [string, { text: string; warmUpParams: () => unknown[] }][],
): Promise<number> {
  let planned = 0;
  await client.query("begin");
  try {
    for (const [name, { text, warmUpParams }] of texts) {
      for (let run = 0; run < CUSTOM_PLAN_RUNS; run++)
        await client.query({ name, text, values: warmUpParams() });
      planned += 1;
    }
  } finally {
    await client.query("rollback");
  }
  return planned;
}

/** PostgreSQL's plan cache: custom plans for the first five runs, then the choice (plancache.c). */
const CUSTOM_PLAN_RUNS = 6;

export async function pingDatabase(db: Database): Promise<void> {
  await db.execute(sql`select 1`);
}
