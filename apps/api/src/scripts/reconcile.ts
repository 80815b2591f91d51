import path from "node:path";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { createX402Rail } from "../modules/billing/agent-payments/x402-rail.ts";
import { reconcile } from "../modules/billing/reconcile.ts";

/**
 * `npm run reconcile`: every balance equals the sum of its entries, every transaction sums to zero,
 * every hold's calls are the invocations charged to it and what its close posted, and every
 * answered call was charged exactly once or was free. Names every row that differs and exits 1.
 * The plan-period counts are exact only when no call is in flight (stop the servers first).
 */
const config = loadConfig();
const database = await openDatabase({
  databaseUrl: config.databaseUrl,
  pgliteDir: path.join(config.dataDir, "pgdata"),
});
try {
  // The chain's account of what reached the x402 receiving address, when it can be asked
  // (X402_RPC_URL, decision 064): compared with x402_clearing payment by payment.
  const x402Transfers = config.x402?.rpcUrl
    ? await createX402Rail(config.x402).transfersToPayTo()
    : undefined;
  if (config.x402 && !x402Transfers)
    console.log("  (x402: no X402_RPC_URL, so the receiving address's transfers were not compared)");
  const report = await reconcile(database.db, { x402Transfers });
  console.log(
    `Ledger: ${report.accounts} accounts, ${report.transactions} transactions, entries sum to ${report.ledgerTotal} cents`,
  );
  for (const m of report.mismatches)
    console.log(`  MISMATCH ${m.kind} account ${m.accountId}: balance ${m.balance} ≠ entries ${m.entries}`);
  for (const id of report.unbalancedTransactions) console.log(`  UNBALANCED transaction ${id}`);
  for (const id of report.mismatchedHolds)
    console.log(
      `  HOLD ${id}: its calls differ from the invocations charged to it, or from what its close posted`,
    );
  for (const id of report.mismatchedHeld)
    console.log(`  HELD account ${id}: its balance is not what its payer's open holds set aside`);
  for (const id of report.unchargedSuccesses)
    console.log(`  UNCHARGED invocation ${id}: a successful, non-free call nothing paid for`);
  for (const id of report.doubleCovered)
    console.log(`  DOUBLE-COVERED invocation ${id}: paid by a hold and a plan, or its price disagrees`);
  for (const p of report.overusedPeriods)
    console.log(
      `  OVERUSED subscription ${p.subscriptionId} period ${p.periodStart}: ${p.counted} included calls, ${p.expected} allowed`,
    );
  for (const p of report.mischargedPeriods)
    console.log(
      `  MISCHARGED subscription ${p.subscriptionId} period ${p.periodStart}: charged ${p.counted} cents, its terms' price is ${p.expected}`,
    );
  for (const p of report.miscountedPeriods)
    console.log(
      `  MISCOUNTED subscription ${p.subscriptionId} period ${p.periodStart}: ${p.counted} calls recorded, calls_used ${p.expected}`,
    );
  for (const id of report.overdueHolds)
    console.log(`  OVERDUE hold ${id}: still open more than a sweep interval after it expired`);
  for (const id of report.unconsumedPayments)
    console.log(
      `  UNCONSUMED payment ${id}: succeeded, but not turned into one subscription or wallet credit`,
    );
  for (const id of report.mismatchedX402Payments)
    console.log(
      `  X402 payment ${id}: its settlement, its answered call, its charge and its posting disagree (or it is unpaid)`,
    );
  for (const line of report.x402TransfersDiffer) console.log(`  X402 TRANSFER ${line}`);
  console.log(report.ok ? "Reconciled: zero difference." : "NOT reconciled: see the lines above.");
  process.exitCode = report.ok ? 0 : 1;
} finally {
  await database.close();
}
