// docs/compatibility.md from a vitest JSON report (apps/api/src/scripts/compat-table.ts renders it).
//   node scripts/compat-table.mjs [--report .tmp/test-results/vitest.json] [--out docs/compatibility.md]
//                                 [--check docs/compatibility.md] [--pglite-only]
// Writes the table to --out. Exits 1 when a compat test failed, or with --check when the table
// differs from the committed one (npm test's "compatibility table" step). With --pglite-only (a run
// without TEST_DATABASE_URL) the check compares only what such a run can show: the same features
// and outcomes, each passing on PGlite, where the committed table says they passed on both.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import {
  anyFailed,
  asIfBothDatabases,
  compatRows,
  packagesOf,
  renderCompatibilityTable,
} from "../apps/api/src/scripts/compat-table.ts";

const { values } = parseArgs({
  options: {
    report: { type: "string", default: ".tmp/test-results/vitest.json" },
    out: { type: "string", default: "docs/compatibility.md" },
    check: { type: "string" },
    "pglite-only": { type: "boolean", default: false },
  },
});

if (!existsSync(values.report)) {
  console.error(`compat-table: no vitest JSON report at ${values.report}`);
  process.exit(1);
}
const rows = compatRows(JSON.parse(readFileSync(values.report, "utf8")));

/** The installed version of each client package, as its own package.json says. */
function installedVersion(name) {
  const file = path.join("node_modules", name, "package.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : undefined;
}
const versions = Object.fromEntries(
  rows.flatMap((row) => packagesOf(row.client)).map((name) => [name, installedVersion(name)]),
);

const table = renderCompatibilityTable(rows, versions);
mkdirSync(path.dirname(values.out), { recursive: true });
writeFileSync(values.out, table);
console.log(`compat-table: ${rows.length} features written to ${values.out}`);

let ok = true;
if (anyFailed(rows)) {
  for (const row of rows.filter((r) => r.status === "failed"))
    console.error(`  FAILED ${row.client}: ${row.feature} → ${row.outcome}`);
  ok = false;
}
if (values.check) {
  const committed = existsSync(values.check) ? readFileSync(values.check, "utf8") : "";
  // PostgreSQL did not run: a PGlite pass stands for the committed "passed on both".
  const comparable = values["pglite-only"]
    ? renderCompatibilityTable(asIfBothDatabases(rows), versions)
    : table;
  if (values["pglite-only"])
    console.log("compat-table: PostgreSQL was not run; compared the PGlite results only");
  if (committed !== comparable) {
    console.error(
      `compat-table: ${values.check} differs from what the tests show (${values.out}): run \`npm run compat:table\` and commit`,
    );
    ok = false;
  }
}
process.exit(ok ? 0 : 1);
