import type { Database } from "../../db/client.ts";
import { RECONCILE_CHECKS, type ReconcileOptions, type ReconcileReport, reconcile } from "./reconcile.ts";

/** Rows named in a FAIL line before "and N more": enough to start looking, short enough to read. */
export const ROWS_PER_LINE = 5;

/**
 * What `npm run reconcile` prints: the ledger's counts, one `FAIL <name>: <differs> (<rows>)` line
 * per failing check, and a verdict. `failed` counts the FAIL lines, so the exit status follows the
 * lines printed rather than a separate flag that could disagree with them.
 */
export function reconcileLines(report: ReconcileReport): { lines: string[]; failed: number } {
  const lines = [
    `Ledger: ${report.accounts} accounts, ${report.transactions} transactions, entries sum to ${report.ledgerTotal} micros`,
  ];
  let failed = 0;
  for (const entry of RECONCILE_CHECKS) {
    const rows = report[entry.name] as unknown[];
    if (rows.length === 0) continue;
    const describe = entry.describe as (row: unknown) => string;
    const shown = rows.slice(0, ROWS_PER_LINE).map(describe).join("; ");
    const more = rows.length > ROWS_PER_LINE ? `; and ${rows.length - ROWS_PER_LINE} more` : "";
    lines.push(`FAIL ${entry.name}: ${entry.differs} (${rows.length} rows: ${shown}${more})`);
    failed++;
  }
  lines.push(
    failed === 0
      ? "Reconciled: zero difference."
      : `NOT reconciled: ${failed} checks failed (see the FAIL lines).`,
  );
  return { lines, failed };
}

/** Reconciles `db`, prints the lines and returns the exit status: 1 if and only if a FAIL line was printed. */
export async function printReconcile(
  db: Database,
  print: (line: string) => void,
  options: ReconcileOptions = {},
): Promise<0 | 1> {
  const { lines, failed } = reconcileLines(await reconcile(db, options));
  for (const line of lines) print(line);
  return failed > 0 ? 1 : 0;
}
