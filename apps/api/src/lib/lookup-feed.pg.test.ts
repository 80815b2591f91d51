import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { changeFeedOf } from "../db/change-feed.ts";
import { type DatabaseHandle, queryRows } from "../db/client.ts";
import { findUserByApiKey, hashApiKey } from "../modules/keys/keys.service.ts";
import { type Caller, createCaller } from "../test/caller.ts";
import { useTestServer } from "../test/use-test-server.ts";
import { LOOKUP_TTL_MS, lookupCache, WATCHED_LOOKUP_TTL_MS } from "./lookup-cache.ts";

// Two API processes on one PostgreSQL (decision 040): a second database handle stands for the
// other process, with its own pools, caches and change feed. A key revoked through one is refused
// by the other as soon as the notice arrives, not after a TTL; and a lost feed drops every copy
// and keeps new ones only seconds until it listens again.

const server = useTestServer();
let other: DatabaseHandle;
let consumer: Caller;

beforeAll(async () => {
  other = await server.testDb.open();
  consumer = await createCaller(server.baseUrl, "Two-process Buyer");
});
afterAll(async () => {
  await other?.close();
});

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not true after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Date.now() - started;
}

/** When one of the other process's cached keys expires, measured from now. */
function expiresIn(hash: string): number {
  const now = Date.now();
  const cache = lookupCache<unknown>(other.db, "apiKeys");
  let low = 0;
  let high = WATCHED_LOOKUP_TTL_MS + 1_000;
  // peek with a moved clock: the largest offset at which it is still there.
  const realNow = Date.now;
  try {
    while (high - low > 100) {
      const mid = Math.floor((low + high) / 2);
      Date.now = () => now + mid;
      if (cache.peek(hash) !== undefined) low = mid;
      else high = mid;
    }
  } finally {
    Date.now = realNow;
  }
  return low;
}

it("a key revoked through one process is refused by the other within moments", async () => {
  const key = (await consumer.api("POST", "/api/keys/", { body: { name: "shared" } })).body;
  expect(changeFeedOf(other.db)?.live).toBe(true);
  expect(await findUserByApiKey(other.db, key.key)).toMatchObject({ scope: { keyId: key.id } });
  expect(expiresIn(hashApiKey(key.key))).toBeGreaterThan(LOOKUP_TTL_MS * 10);

  expect((await consumer.api("DELETE", `/api/keys/${key.id}/`)).status).toBeLessThan(300);
  // Its copy there lives ten minutes: gone sooner than even a short-lived copy would be, it was the
  // feed that dropped it (a bound in seconds, not milliseconds: two busy cores must not fail it).
  const ms = await eventually(async () => (await findUserByApiKey(other.db, key.key)) === undefined);
  expect(ms).toBeLessThan(LOOKUP_TTL_MS);
});

it("a lost feed drops every copy, keeps new ones only seconds, and listens again", async () => {
  const key = (await consumer.api("POST", "/api/keys/", { body: { name: "feed-loss" } })).body;
  const hash = hashApiKey(key.key);
  const feed = changeFeedOf(other.db);
  expect(await findUserByApiKey(other.db, key.key)).toBeDefined();
  expect(lookupCache(other.db, "apiKeys").peek(hash)).toBeDefined();

  // Cut every listening connection of this database (both processes'), as a failover would.
  await queryRows(
    server.database.db,
    sql`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and query ilike 'listen %'`,
  );
  await eventually(() => feed?.live === false || lookupCache(other.db, "apiKeys").peek(hash) === undefined);
  expect(lookupCache(other.db, "apiKeys").peek(hash)).toBeUndefined();

  // Back within its retry pause; copies made from then on are long-lived again.
  await eventually(() => feed?.live === true);
  expect(await findUserByApiKey(other.db, key.key)).toBeDefined();
  expect(expiresIn(hash)).toBeGreaterThan(LOOKUP_TTL_MS * 10);
  // And it hears changes again.
  expect((await consumer.api("DELETE", `/api/keys/${key.id}/`)).status).toBeLessThan(300);
  await eventually(() => lookupCache(other.db, "apiKeys").peek(hash) === undefined);
});

it("while the feed is down, a copy lives only the short TTL", async () => {
  const key = (await consumer.api("POST", "/api/keys/", { body: { name: "short" } })).body;
  const feed = changeFeedOf(other.db);
  await eventually(() => feed?.live === true);
  // Refuse new connections for this database's listener by cutting it and holding it down: the
  // feed reconnects in ≥100 ms, so a lookup made right after the cut is made while it is down.
  await queryRows(
    server.database.db,
    sql`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and query ilike 'listen %'`,
  );
  await eventually(() => feed?.live === false);
  expect(await findUserByApiKey(other.db, key.key)).toBeDefined();
  const left = expiresIn(hashApiKey(key.key));
  expect(left).toBeLessThanOrEqual(LOOKUP_TTL_MS);
  expect(left).toBeGreaterThan(LOOKUP_TTL_MS - 1_000);
});
