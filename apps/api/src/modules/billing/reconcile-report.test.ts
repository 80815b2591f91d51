import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, type DatabaseHandle, queryRows } from "../../db/client.ts";
import { applications, payments, users } from "../../db/schema/index.ts";
import { createTestDatabase, type TestDatabase } from "../../test/database.ts";
import { closeHold, placeHold } from "./call-payment/holds.ts";
import { accountFor, creditTopUp, postTransaction } from "./postings.ts";
import { cleanReconcileReport } from "./reconcile.ts";
import { printReconcile, reconcileLines } from "./reconcile-report.ts";

/**
 * `npm run reconcile` on a real database: each kind of difference, written by hand the way no
 * money path writes it, prints its own FAIL line naming the rows, and the status is 1 exactly
 * when a FAIL line was printed (a failing check once exited 1 and printed nothing, issue 37).
 */

const CENT = 10_000;
let testDb: TestDatabase;
let handle: DatabaseHandle;
let db: Database;
let owner: string;
let consumer: string;
let appId: string;
let closedHold: string;

async function user(name: string): Promise<string> {
  const [row] = await db
    .insert(users)
    .values({ issuer: "test", subject: name, username: name, email: `${name}@example.com` })
    .returning({ id: users.id });
  return row?.id ?? "";
}

/** The reconcile's lines and status with `corrupt` applied, then rolled back. */
async function reconcileWith(
  corrupt: (tx: Database) => Promise<void>,
): Promise<{ lines: string[]; status: number }> {
  const lines: string[] = [];
  let status = -1;
  await db
    .transaction(async (tx) => {
      await corrupt(tx);
      status = await printReconcile(tx, (line) => lines.push(line));
      throw new RolledBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  return { lines, status };
}
class RolledBack extends Error {}

const failLines = (lines: string[]) => lines.filter((line) => line.startsWith("FAIL "));

beforeAll(async () => {
  testDb = await createTestDatabase();
  handle = await testDb.open();
  db = handle.db;
  owner = await user("owner");
  consumer = await user("consumer");
  const [app] = await db
    .insert(applications)
    .values({ ownerId: owner, name: "Checked", slug: "checked", type: "prompt", priceCents: 25 })
    .returning({ id: applications.id });
  appId = app?.id ?? "";
  await creditTopUp(db, { userId: consumer, amountCents: 1000, reference: "top-up-1", description: "" });
  closedHold = await placeHold(db, {
    payerId: consumer,
    applicationId: appId,
    creatorId: owner,
    amountCents: 25,
    ttlSeconds: 60,
    topUpUrl: "",
  });
  await closeHold(db, closedHold);
});

afterAll(async () => {
  await handle?.close();
  await testDb?.destroy();
});

describe("npm run reconcile", () => {
  it("prints no FAIL line and exits 0 on a clean ledger", async () => {
    const { lines, status } = await reconcileWith(async () => {});
    expect(failLines(lines)).toEqual([]);
    expect(lines.at(-1)).toBe("Reconciled: zero difference.");
    expect(status).toBe(0);
  });

  it.each([
    {
      check: "mismatches",
      corrupt: async (tx: Database) => {
        const wallet = await accountFor(tx, "wallet", consumer);
        await tx.execute(
          sql`update ledger_accounts set balance_micros = balance_micros + 7 where id = ${wallet}`,
        );
        return [wallet, `balance ${1000 * CENT + 7} ≠ entries ${1000 * CENT} micros`];
      },
    },
    {
      check: "unbalancedTransactions",
      // The top-up's event (decision 068) no longer says the money its transaction moved.
      also: ["mismatches", "unbalancedLedger", "ledgerWithoutEvents"],
      corrupt: async (tx: Database) => {
        const wallet = await accountFor(tx, "wallet", consumer);
        const [row] = await queryRows<{ id: string }>(
          tx,
          sql`insert into ledger_entries (transaction_id, account_id, amount_micros)
              select id, ${wallet}, 3 from ledger_transactions where kind = 'top_up' limit 1 returning transaction_id::text as id`,
        );
        return [String(row?.id)];
      },
    },
    {
      check: "walletsBesideDebts",
      corrupt: async (tx: Database) => {
        const [debt, clearing] = [
          await accountFor(tx, "debt", consumer),
          await accountFor(tx, "clearing", null),
        ];
        await postTransaction(tx, {
          kind: "reversal",
          reference: "test-debt",
          description: "test",
          entries: [
            { accountId: debt, amountMicros: -10 * CENT },
            { accountId: clearing, amountMicros: 10 * CENT },
          ],
        });
        // Its event is written at commit (decision 068); this transaction is read before it ends.
        await tx.execute(sql`set constraints all immediate`);
        return [`user ${consumer}: wallet ${1000 * CENT} micros, debt ${-10 * CENT} micros`];
      },
    },
    {
      check: "mismatchedChargebacks",
      corrupt: async (tx: Database) => {
        const [credit] = await queryRows<{ id: string }>(
          tx,
          sql`select id::text as id from ledger_transactions where kind = 'top_up' limit 1`,
        );
        const [payment] = await tx
          .insert(payments)
          .values({
            userId: consumer,
            gateway: "sandbox",
            externalId: "pi_refunded",
            amountCents: 100,
            status: "succeeded",
            purpose: "top_up",
            consumedKind: "wallet",
            consumedRef: credit?.id,
            consumedAt: new Date(),
          })
          .returning({ id: payments.id });
        await tx.execute(
          sql`insert into reversed_payments (payment_id, reversed_cents) values (${payment?.id}, 100)`,
        );
        return [`payment ${payment?.id}: took back ${100 * CENT} micros, its parts 0`];
      },
    },
    {
      check: "mismatchedHolds",
      corrupt: async (tx: Database) => {
        await tx.execute(sql`update holds set calls = calls + 1 where id = ${closedHold}`);
        return [closedHold];
      },
    },
    {
      check: "mismatchedHeld",
      corrupt: async (tx: Database) => {
        const open = await placeHold(tx, {
          payerId: consumer,
          applicationId: appId,
          creatorId: owner,
          amountCents: 25,
          ttlSeconds: 60,
          topUpUrl: "",
        });
        await tx.execute(sql`update holds set amount_micros = amount_micros + 1 where id = ${open}`);
        return [await accountFor(tx, "held", consumer)];
      },
    },
    {
      check: "overdueHolds",
      corrupt: async (tx: Database) => {
        const open = await placeHold(tx, {
          payerId: consumer,
          applicationId: appId,
          creatorId: owner,
          amountCents: 25,
          ttlSeconds: 60,
          topUpUrl: "",
        });
        await tx.execute(sql`update holds set expires_at = now() - interval '1 hour' where id = ${open}`);
        return [open];
      },
    },
    {
      check: "unchargedSuccesses",
      corrupt: async (tx: Database) => {
        const id = randomUUID();
        await tx.execute(
          sql`insert into invocations (id, application_id, caller_user_id, mode, model, status, latency_ms)
              values (${id}, ${appId}, ${consumer}, 'completion', 'gpt-4-turbo', 'success', 5)`,
        );
        return [id];
      },
    },
    {
      check: "unconsumedPayments",
      corrupt: async (tx: Database) => {
        const [row] = await tx
          .insert(payments)
          .values({
            userId: consumer,
            gateway: "sandbox",
            externalId: "pi_uncredited",
            amountCents: 500,
            status: "succeeded",
            purpose: "top_up",
          })
          .returning({ id: payments.id });
        return [row?.id ?? ""];
      },
    },
    // The event log (decision 068): a call event without its charge, a movement without its event,
    // an event twice, a sink whose exports are not the log's.
    {
      check: "callsWithoutEvents",
      corrupt: async (tx: Database) => {
        const id = randomUUID();
        await tx.execute(
          sql`insert into invocations (id, application_id, caller_user_id, mode, model, status, latency_ms)
              values (${id}, ${appId}, ${consumer}, 'completion', 'gpt-4-turbo', 'error', 5)`,
        );
        await tx.execute(
          sql`insert into events (id, type, occurred_at, application_id, amount_micros, data)
              values (${`call_${id}`}, 'call.charged', now(), ${appId}, 250000,
                jsonb_build_object('invocation_id', ${id}::text, 'charged', true))`,
        );
        return [id];
      },
    },
    {
      check: "ledgerWithoutEvents",
      corrupt: async (tx: Database) => {
        const [row] = await queryRows<{ id: string }>(
          tx,
          sql`delete from events where type = 'wallet.topped_up' returning substr(id, 8) as id`,
        );
        return [String(row?.id)];
      },
    },
    {
      check: "duplicateEvents",
      corrupt: async (tx: Database) => {
        const [row] = await queryRows<{ id: string }>(
          tx,
          sql`insert into events (id, type, occurred_at, user_ids, application_id, amount_micros, data)
              select id, type, occurred_at, user_ids, application_id, amount_micros, data
              from events where type = 'wallet.topped_up' limit 1 returning id`,
        );
        return [String(row?.id)];
      },
    },
    {
      check: "exportsUnlikeLog",
      corrupt: async (tx: Database) => {
        await tx.execute(
          sql`insert into event_cursors (sink, txid, seq)
              select 'a-sink-that-counted-nothing', txid, seq from events order by txid desc, seq desc limit 1`,
        );
        return ["a-sink-that-counted-nothing", "wallet.topped_up"];
      },
    },
    // Trials and promotion codes (decision 080): a trial call spent from its grant though it failed
    // (its creator paid nothing for it).
    {
      check: "sponsoredMisfits",
      corrupt: async (tx: Database) => {
        const id = randomUUID();
        await tx.execute(
          sql`insert into invocations (id, application_id, caller_user_id, mode, model, status, latency_ms)
              values (${id}, ${appId}, ${consumer}, 'completion', 'gpt-4-turbo', 'error', 5)`,
        );
        await tx.execute(
          sql`with g as (insert into sponsored_grants (kind, consumer_id, creator_id, application_id, calls_left)
                         values ('trial', ${consumer}, ${owner}, ${appId}, 0) returning id)
              insert into sponsored_calls (call_id, grant_id, calls, micros, state, expires_at)
              select ${id}::uuid, id, 1, 0, 'spent', now() from g`,
        );
        return [`call ${id}`];
      },
    },
  ])("prints FAIL $check naming the rows, and exits 1", async ({ check, also = [], corrupt }) => {
    let named: string[] = [];
    const { lines, status } = await reconcileWith(async (tx) => {
      named = await corrupt(tx);
    });
    const failed = failLines(lines);
    expect(failed.map((line) => line.split(":")[0])).toEqual(
      expect.arrayContaining([`FAIL ${check}`, ...also.map((name) => `FAIL ${name}`)]),
    );
    expect(failed).toHaveLength(1 + also.length);
    const line = failed.find((candidate) => candidate.startsWith(`FAIL ${check}:`)) ?? "";
    for (const part of named) expect(line).toContain(part);
    expect(lines.at(-1)).toBe(`NOT reconciled: ${failed.length} checks failed (see the FAIL lines).`);
    expect(status).toBe(1);
  });

  it("names the first rows of a long list and says how many more", () => {
    const report = { ...cleanReconcileReport(), ok: false };
    report.overdueHolds = ["h1", "h2", "h3", "h4", "h5", "h6", "h7"];
    const { lines, failed } = reconcileLines(report);
    expect(failed).toBe(1);
    expect(lines).toContain(
      "FAIL overdueHolds: holds still open more than a sweep interval after they expired (7 rows: h1; h2; h3; h4; h5; and 2 more)",
    );
  });

  it("the command prints the FAIL line and exits 1, and exits 0 once the ledger is clean", async () => {
    const run = async () => {
      await handle.close();
      try {
        const command = await promisify(execFile)(process.execPath, [script], {
          env: {
            PATH: process.env.PATH ?? "",
            HOME: process.env.HOME ?? "",
            SECRET_KEY: "reconcile-test-secret-key-that-is-long-enough",
            ...testDb.serverEnv,
          },
          timeout: 120_000,
        }).then(
          (done) => ({ status: 0, stdout: done.stdout }),
          (error: { code: number; stdout: string }) => ({ status: error.code, stdout: error.stdout }),
        );
        return command;
      } finally {
        handle = await testDb.open();
        db = handle.db;
      }
    };
    const script = fileURLToPath(new URL("../../scripts/reconcile.ts", import.meta.url));
    const clean = await run();
    expect(clean.stdout).toContain("Reconciled: zero difference.");
    expect(clean.status).toBe(0);
    const [debt, clearing] = [await accountFor(db, "debt", consumer), await accountFor(db, "clearing", null)];
    await postTransaction(db, {
      kind: "reversal",
      reference: "test-debt-committed",
      description: "test",
      entries: [
        { accountId: debt, amountMicros: -10 * CENT },
        { accountId: clearing, amountMicros: 10 * CENT },
      ],
    });
    const failing = await run();
    expect(failing.stdout).toMatch(new RegExp(`^FAIL walletsBesideDebts: .*${consumer}`, "m"));
    expect(failing.status).toBe(1);
    // Two processes started and a database opened four times: minutes on a loaded two-core machine.
  }, 300_000);
});
