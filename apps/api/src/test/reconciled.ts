import { expect } from "vitest";
import type { Database } from "../db/client.ts";
import { type ReconcileReport, reconcile, reconcileLists } from "../modules/billing/reconcile.ts";

/**
 * The extended reconcile after a money test: each list is compared with [] on its own, so a
 * failure names the rows (accounts, transactions, holds, invocations, plan periods) that differ.
 * Call it once no call is in flight: the plan-period counts are exact only then.
 */
export async function expectReconciled(db: Database, context = ""): Promise<ReconcileReport> {
  const report = await reconcile(db);
  const lists = reconcileLists(report);
  for (const [name, rows] of Object.entries(lists)) expect(rows, `${name} ${context}`).toEqual([]);
  expect(report.ledgerTotal, context).toBe(0);
  expect(report.ok, context).toBe(true);
  return report;
}
