import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { type Caller, createCaller } from "../../test/caller.ts";
import { useTestServer } from "../../test/use-test-server.ts";
import { earnedFrom } from "./earnings-history.ts";
import { accountFor, postTransaction } from "./postings.ts";

/**
 * A creator's earnings history (issue 32): one line per UTC day and kind, a day's paid calls
 * counted in one line whoever paid them, paged by whole days. The earnings are posted straight to
 * the ledger, on the days a busy creator would have earned them.
 */
const server = useTestServer();

async function creatorWithEarnings(): Promise<{ caller: Caller; earn: Earn }> {
  const caller = await createCaller(server.baseUrl, "Busy Creator");
  const userId = (await caller.api("GET", "/api/auth/profile/")).body.user.id as string;
  const db = server.database.db;
  const earnings = await accountFor(db, "earnings", userId);
  const clearing = await accountFor(db, "x402_clearing", null);
  const earn: Earn = async (day, kind, description, micros) => {
    const id = await postTransaction(db, {
      kind,
      reference: randomUUID(),
      description,
      entries: [
        { accountId: clearing, amountMicros: -micros },
        { accountId: earnings, amountMicros: micros },
      ],
    });
    // The ledger is append-only (a trigger): the entries are dated back with triggers off.
    await db.transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`);
      await tx.execute(
        sql`update ledger_entries set created_at = ${`${day}T12:00:00Z`}::timestamptz where transaction_id = ${id}::uuid`,
      );
    });
  };
  return { caller, earn };
}
type Earn = (
  day: string,
  kind: "settle" | "x402_payment" | "payout_return",
  description: string,
  micros: number,
) => Promise<void>;

describe("the earnings history", () => {
  it("is one line per day and kind, counting the day's paid calls and those x402 paid", async () => {
    const { caller, earn } = await creatorWithEarnings();
    await earn("2026-03-03", "settle", "12 paid calls", 108_000);
    await earn("2026-03-03", "settle", "25 paid calls", 225_000);
    await earn("2026-03-03", "x402_payment", "1 paid call, paid by x402 (0xabc)", 9_000);
    await earn("2026-03-03", "x402_payment", "1 paid call, paid by x402 (0xdef)", 9_000);
    await earn("2026-03-02", "settle", "1 paid call", 9_000);
    await earn("2026-03-02", "payout_return", "Payout returned by the bank", 500_000);
    await earn("2026-03-01", "x402_payment", "1 paid call, paid by x402 (0xabc)", 9_001);

    const page = await caller.api("GET", "/api/wallet/earnings/?days=2");
    expect(page.status).toBe(200);
    expect(page.body.lines).toEqual([
      expect.objectContaining({
        day: "2026-03-03",
        kind: "calls",
        description: "Earned from 39 paid calls (2 paid by x402)",
        calls: 39,
        x402_calls: 2,
        amount_micros: 351_000,
      }),
      expect.objectContaining({
        day: "2026-03-02",
        kind: "calls",
        description: "Earned from 1 paid call",
        calls: 1,
        x402_calls: 0,
        amount_micros: 9_000,
      }),
      expect.objectContaining({
        day: "2026-03-02",
        kind: "payout_return",
        description: "Payout returned by the bank",
        calls: null,
        amount_micros: 500_000,
      }),
    ]);
    expect(page.body.next_cursor).toBe("2026-03-02");

    const older = await caller.api("GET", `/api/wallet/earnings/?days=2&cursor=${page.body.next_cursor}`);
    expect(older.body).toEqual({
      lines: [
        expect.objectContaining({
          day: "2026-03-01",
          description: "Earned from 1 paid call (paid by x402)",
          amount_micros: 9_001,
        }),
      ],
      next_cursor: null,
    });
  });

  it("shows nobody else's earnings, and refuses a bad cursor or page size naming it", async () => {
    const { earn } = await creatorWithEarnings();
    await earn("2026-04-01", "settle", "3 paid calls", 27_000);
    const other = await createCaller(server.baseUrl, "Someone Else");
    expect((await other.api("GET", "/api/wallet/earnings/")).body).toEqual({ lines: [], next_cursor: null });
    const badCursor = await other.api("GET", "/api/wallet/earnings/?cursor=yesterday");
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.fields).toEqual({ cursor: "is not a cursor this history gave" });
    const badDays = await other.api("GET", "/api/wallet/earnings/?days=0");
    expect(badDays.status).toBe(400);
    expect(Object.keys(badDays.body.fields)).toEqual(["days"]);
  });

  it("reads naturally for one call, many, and calls all paid by x402", () => {
    expect(earnedFrom(1, 0)).toBe("Earned from 1 paid call");
    expect(earnedFrom(37, 0)).toBe("Earned from 37 paid calls");
    expect(earnedFrom(37, 12)).toBe("Earned from 37 paid calls (12 paid by x402)");
    expect(earnedFrom(4, 4)).toBe("Earned from 4 paid calls (all paid by x402)");
  });
});
