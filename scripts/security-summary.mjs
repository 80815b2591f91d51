// The one table `npm run test:security` (and `npm test`) ends with: the figures the security
// suite recorded in .tmp/security/figures.jsonl (apps/api/src/security/report.ts). Counts of the
// same name are summed, `*_pct` figures take the maximum. Exits 1 when a must-be-zero figure is not.
import { existsSync, readFileSync } from "node:fs";

const file = ".tmp/security/figures.jsonl";

/** [label, figure name(s), must be zero] in the order the table shows them. */
const rows = [
  ["Routes × roles checked", "routes_roles_checked", false],
  ["Unauthorized 2xx", "unauthorized_2xx", true],
  ["Mass-assignment cases", "mass_assignment_cases", false],
  ["Fuzz cases run", "fuzz_cases", false],
  ["5xx seen while fuzzing", "fuzz_5xx", true],
  ["SSRF URLs tried", "ssrf_urls_tried", false],
  ["SSRF connections seen", "ssrf_connections_seen", true],
  ["Rate-limit overshoot %", "ratelimit_overshoot_pct", false],
  ["Failure-mode checks", "failure_mode_checks", false],
  ["Secrets found in DB", "secrets_found_db", true],
  ["Secrets found in logs", "secrets_found_logs", true],
];

const figures = new Map();
if (existsSync(file)) {
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const { name, value } = JSON.parse(line);
    if (typeof name !== "string" || typeof value !== "number") continue;
    const previous = figures.get(name);
    if (previous === undefined) figures.set(name, value);
    else figures.set(name, name.endsWith("_pct") ? Math.max(previous, value) : previous + value);
  }
}

const failures = [];
const table = rows.map(([label, name, mustBeZero]) => {
  const value = figures.get(name);
  let shown = value === undefined ? "—" : String(Math.round(value * 10) / 10);
  if (mustBeZero && value !== undefined && value !== 0) {
    failures.push(label);
    shown += "  ✗ must be 0";
  }
  return [label, shown];
});

const width = Math.max(...table.map(([label]) => label.length));
const valueWidth = Math.max(...table.map(([, value]) => value.length), 5);
const rule = `+${"-".repeat(width + 2)}+${"-".repeat(valueWidth + 2)}+`;
console.log("\nSecurity summary");
console.log(rule);
for (const [label, value] of table) console.log(`| ${label.padEnd(width)} | ${value.padStart(valueWidth)} |`);
console.log(rule);
if (failures.length > 0) {
  console.log(`security: ${failures.join(", ")} must be 0`);
  process.exit(1);
}
