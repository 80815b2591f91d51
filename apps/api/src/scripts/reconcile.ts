import path from "node:path";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { createX402Rail } from "../modules/billing/agent-payments/x402-rail.ts";
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
  // The chain's account of what reached the x402 receiving address, when it can be asked
  // (X402_RPC_URL, decision 064): compared with x402_clearing payment by payment.
  const x402Transfers = config.x402?.rpcUrl
    ? await createX402Rail(config.x402).transfersToPayTo()
    : undefined;
  if (config.x402 && !x402Transfers)
    console.log("(x402: no X402_RPC_URL, so the receiving address's transfers were not compared)");
  process.exitCode = await printReconcile(database.db, (line) => console.log(line), { x402Transfers });
} finally {
  await database.close();
}
