import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, expect, it } from "vitest";
import { createTestDatabase } from "../test/database.ts";
import { type Database, openDatabase, queryRows, rehearse, WARM_CONNECTIONS, writerFor } from "./client.ts";

const root = mkdtempSync(path.join(os.tmpdir(), "pm-client-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it("creates an embedded database's directory when it does not exist yet", async () => {
  const handle = await openDatabase({ pgliteDir: path.join(root, "new", "volume", "pgdata") });
  try {
    const [row] = await queryRows<{ n: number }>(handle.db, sql`select count(*)::int as n from applications`);
    expect(row?.n).toBe(0);
  } finally {
    await handle.close();
  }
});

it("rolls back everything a rehearsal wrote, committed transactions included, and refuses its late queries", async () => {
  const testDb = await createTestDatabase();
  const handle = await testDb.open();
  const { db } = handle;
  const count = async (on: Database = db) =>
    (
      await queryRows<{ n: number }>(
        on,
        sql`select count(*)::int as n from identity_accounts where email like '%@rehearsal.invalid'`,
      )
    )[0]?.n;
  const insert = (on: Database, email: string) =>
    on.execute(
      sql`insert into identity_accounts (email, password_hash, display_name) values (${email}, 'x', 'Rehearsal')`,
    );
  try {
    if (testDb.kind === "pglite") {
      // No pool, no rehearsal: `run` is not run.
      let ran = false;
      expect(await rehearse(db, async () => (ran = true))).toBeUndefined();
      expect(ran).toBe(false);
      return;
    }
    const late: Promise<unknown>[] = [];
    const backends: number[] = [];
    // On each of the warm connections (4 of the main pool, 2 of the writer's), one after another.
    const seen = await rehearse(db, async () => {
      await db.transaction(async (tx) => {
        await insert(tx as unknown as Database, "committed@rehearsal.invalid");
        // A nested transaction (a savepoint inside the savepoint) that fails is undone alone.
        await tx
          .transaction(async (inner) => {
            await insert(inner as unknown as Database, "nested@rehearsal.invalid");
            throw new Error("undo the nested one");
          })
          .catch(() => {});
      });
      // A transaction that fails is undone, and the rehearsal goes on.
      await db
        .transaction(async (tx) => {
          await insert(tx as unknown as Database, "failed@rehearsal.invalid");
          throw new Error("undo this one");
        })
        .catch(() => {});
      await insert(writerFor(db), "writer@rehearsal.invalid");
      late.push(new Promise((resolve) => setTimeout(resolve, 50)).then(() => count()));
      const [backend] = await queryRows<{ pid: number }>(db, sql`select pg_backend_pid() as pid`);
      backends.push(backend?.pid ?? 0);
      // Inside, every handle sees the rehearsal's own rows: one connection, one transaction.
      return { main: await count(), writer: await count(writerFor(db)) };
    });
    expect(seen).toEqual(Array.from({ length: WARM_CONNECTIONS + 2 }, () => ({ main: 2, writer: 2 })));
    // Each rehearsal ran on a connection of its own: the pools' backends all took part.
    expect(new Set(backends).size).toBe(WARM_CONNECTIONS + 2);
    // Outside, nothing of it: the "commit" was a savepoint's release; the rehearsal rolled back.
    expect(await count()).toBe(0);
    expect(await count(writerFor(db))).toBe(0);
    // Work it left behind finds the rehearsal over (drizzle names the query; the cause is ours).
    for (const query of late) {
      const refused = (await query.then(
        () => undefined,
        (error: Error) => error,
      )) as (Error & { cause?: Error }) | undefined;
      expect(refused?.cause?.message).toBe("the start-up rehearsal is over; its work is rolled back");
    }
    // A rehearsal that throws rolls back too, and the error reaches its caller.
    await expect(
      rehearse(db, async () => {
        await insert(db, "thrown@rehearsal.invalid");
        throw new Error("the rehearsal failed");
      }),
    ).rejects.toThrow("the rehearsal failed");
    expect(await count()).toBe(0);
  } finally {
    await handle.close();
    await testDb.destroy();
  }
});
