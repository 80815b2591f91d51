import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type DatabaseHandle, queryRows } from "../../db/client.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { checkAppHealth, HEALTH_WINDOW_MS } from "./app-health.ts";

// An app's error rate jumping in a 15-minute window is an event for its creator (decision 068):
// judged against the app's own baseline, never for errors the caller caused, once per window.

let testDb: TestDatabase;
let handle: DatabaseHandle;
let owner: string;
const now = new Date();
const windowEnd = new Date(Math.floor(now.getTime() / HEALTH_WINDOW_MS) * HEALTH_WINDOW_MS);
const inWindow = new Date(windowEnd.getTime() - HEALTH_WINDOW_MS / 2);

beforeAll(async () => {
  testDb = await createTestDatabase();
  handle = await testDb.open();
  const [row] = await queryRows<{ id: string }>(
    handle.db,
    sql`insert into users (issuer, subject, username, email) values ('t', 'health', 'health', 'health@example.test') returning id`,
  );
  owner = row?.id as string;
});
afterAll(async () => {
  await handle?.close();
  await testDb?.destroy();
});

/** An app with `calls` calls in the window, `errors` of them of `errorType`, and a day of `dayCalls`/`dayErrors` around them. */
async function app(
  name: string,
  window: { calls: number; errors: number; errorType: string },
  day: { calls: number; errors: number },
) {
  const { db } = handle;
  const [row] = await queryRows<{ id: string }>(
    db,
    sql`insert into applications (owner_id, name, slug, type, status) values (${owner}, ${name}, ${name}, 'prompt', 'live') returning id`,
  );
  const id = row?.id as string;
  for (let i = 0; i < window.calls; i += 1) {
    const failed = i < window.errors;
    await db.execute(
      sql`insert into invocations (id, application_id, mode, status, error_type, latency_ms, created_at)
          values (${randomUUID()}, ${id}, 'completion', ${failed ? "error" : "success"}, ${failed ? window.errorType : null}, 5,
            ${inWindow.toISOString()}::timestamptz)`,
    );
  }
  await db.execute(
    sql`insert into app_daily_stats (application_id, day, shard, invocations, successes, errors, last_invocation_at)
        values (${id}, (${inWindow.toISOString()}::timestamptz at time zone 'UTC')::date, 0,
          ${day.calls + window.calls}, ${day.calls - day.errors + window.calls - window.errors}, ${day.errors + window.errors},
          ${inWindow.toISOString()}::timestamptz)`,
  );
  return id;
}

it("writes one event per window for an app whose own errors jumped, none for a steady rate or the caller's errors", async () => {
  const jumped = await app(
    "jumped",
    { calls: 30, errors: 12, errorType: "upstream_failed" },
    { calls: 1_000, errors: 10 },
  );
  await app("steady", { calls: 30, errors: 12, errorType: "upstream_failed" }, { calls: 1_000, errors: 400 });
  await app("callers", { calls: 30, errors: 12, errorType: "payment_failed" }, { calls: 1_000, errors: 10 });
  await app("quiet", { calls: 10, errors: 9, errorType: "upstream_failed" }, { calls: 100, errors: 0 });

  expect(await checkAppHealth(handle.db, now)).toBe(1);
  // Another process, or the next run, in the same window: nothing more.
  expect(await checkAppHealth(handle.db, now)).toBe(0);
  const events = await queryRows<{ type: string; application_id: string; user_ids: string; rate: number }>(
    handle.db,
    sql`select type, application_id, user_ids::text, (data->>'error_rate')::float8 as rate from events where type = 'app.error_rate_jumped'`,
  );
  expect(events).toHaveLength(1);
  expect(events[0]?.application_id).toBe(jumped);
  expect(events[0]?.user_ids).toContain(owner);
  expect(events[0]?.rate).toBeCloseTo(0.4, 5);
});
