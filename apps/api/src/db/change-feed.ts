import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import type { Database } from "./client.ts";

/**
 * The tables whose rows the paid path keeps copies of announce every change on this channel, with
 * the table's name, when the change commits (migration 0029, docs/decisions/040).
 */
export const LOOKUP_CHANNEL = "pm_lookups";

/**
 * Changes to the looked-up tables, from whichever process made them. `null` means the feed cannot
 * vouch for what happened: it was lost, or it came back after a gap in which notices may have been
 * missed; whoever keeps copies must drop them all.
 */
export type ChangeListener = (table: string | null) => void;

export interface ChangeFeed {
  /** Listening now: every committed change from here on will be heard. */
  readonly live: boolean;
  subscribe(listener: ChangeListener): () => void;
  close(): Promise<void>;
}

const feeds = new WeakMap<Database, ChangeFeed>();

/** The handle's change feed, if it has one (openDatabase gives each database handle one). */
export function changeFeedOf(db: Database): ChangeFeed | undefined {
  return feeds.get(db);
}

export function attachChangeFeed(db: Database, feed: ChangeFeed): void {
  feeds.set(db, feed);
}

function listeners() {
  const set = new Set<ChangeListener>();
  return {
    subscribe(listener: ChangeListener) {
      set.add(listener);
      return () => void set.delete(listener);
    },
    emit(table: string | null) {
      for (const listener of set) listener(table);
    },
  };
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * PostgreSQL: one connection of its own, outside the pools, LISTENing. When it drops (server
 * restart, failover, pg_terminate_backend, a network cut) the feed says so at once (`null`, not
 * live) and connects again with a growing pause; once LISTENing again it says `null` once more,
 * since whatever changed during the gap was not heard.
 */
export function postgresChangeFeed(connectionString: string): ChangeFeed {
  const { subscribe, emit } = listeners();
  let live = false;
  let closed = false;
  let client: pg.Client | undefined;
  let retryMs = RETRY_MIN_MS;
  let timer: NodeJS.Timeout | undefined;

  const lost = (from: pg.Client) => {
    if (client !== from) return;
    client = undefined;
    from.end().catch(() => {});
    if (live) {
      live = false;
      emit(null);
    }
    if (closed) return;
    timer = setTimeout(connect, retryMs);
    timer.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };

  const connect = async () => {
    if (closed) return;
    const next = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
    client = next;
    next.on("error", () => lost(next));
    next.on("end", () => lost(next));
    next.on("notification", (message) => {
      if (message.channel === LOOKUP_CHANNEL) emit(message.payload ?? null);
    });
    try {
      await next.connect();
      await next.query(`listen ${LOOKUP_CHANNEL}`);
    } catch {
      lost(next);
      return;
    }
    if (client !== next || closed) return;
    retryMs = RETRY_MIN_MS;
    live = true;
    emit(null);
  };

  const ready = connect();
  return {
    get live() {
      return live;
    },
    subscribe,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await ready;
      const last = client;
      client = undefined;
      live = false;
      await last?.end().catch(() => {});
    },
  };
}

/** PGlite: one process owns the database; its notices come on its own connection. */
export async function pgliteChangeFeed(client: PGlite): Promise<ChangeFeed> {
  const { subscribe, emit } = listeners();
  const unlisten = await client.listen(LOOKUP_CHANNEL, (payload) => emit(payload || null));
  let live = true;
  return {
    get live() {
      return live;
    },
    subscribe,
    async close() {
      live = false;
      await unlisten().catch(() => {});
    },
  };
}

/** Resolves once the feed listens (tests; start-up does not wait for it). */
export async function feedListening(feed: ChangeFeed, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!feed.live) {
    if (Date.now() > until) throw new Error(`the change feed is not listening after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
