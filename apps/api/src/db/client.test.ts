import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, expect, it } from "vitest";
import { openDatabase, queryRows } from "./client.ts";

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
