import path from "node:path";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { printReconcile } from "../modules/billing/reconcile-report.ts";

/**
 * `npm run reconcile`: runs every check of modules/billing/reconcile.ts (balances, transactions,
 * holds, held money, chargebacks, x402 payments, debts, calls against charges, plan periods) and
 * prints one `FAIL <check>: <what differs> (<rows>)` line per failing check; exits 1 if and only
 * if it printed such a line. The plan-period counts are exact only when no call is in flight
 * (stop the servers first).
 */
const config = loadConfig();
const database = await openDatabase({
  databaseUrl: config.databaseUrl,
  pgliteDir: path.join(config.dataDir, "pgdata"),
});
try {
  process.exitCode = await printReconcile(database.db, (line) => console.log(line));
} finally {
  await database.close();
}
