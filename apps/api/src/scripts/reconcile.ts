import path from "node:path";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { reconcile } from "../modules/billing/ledger.service.ts";

/**
 * `npm run reconcile`: every balance equals the sum of its entries, every transaction sums to zero,
 * and every hold's calls are the invocations charged to it and what its close posted.
 */
const config = loadConfig();
const database = await openDatabase({
  databaseUrl: config.databaseUrl,
  pgliteDir: path.join(config.dataDir, "pgdata"),
});
try {
  const report = await reconcile(database.db);
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
  console.log(report.ok ? "Reconciled: zero difference." : "NOT reconciled: see the lines above.");
  process.exitCode = report.ok ? 0 : 1;
} finally {
  await database.close();
}
