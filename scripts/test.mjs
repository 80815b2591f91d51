// `npm test`: typecheck, lint, unit + integration (PGlite; PostgreSQL too with TEST_DATABASE_URL;
// the security project among them), the security summary table, the compatibility table checked
// against docs/compatibility.md, then the end-to-end journeys in Chromium against the built app.
// Ends with one summary line.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";

const out = ".tmp/test-results";
rmSync(out, { recursive: true, force: true });
// The security project records its figures here during the vitest run (apps/api/src/security/report.ts).
rmSync(".tmp/security", { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const steps = [];
function run(name, command, args, env = {}) {
  console.log(`\n▶ ${name}: ${command} ${args.join(" ")}`);
  const started = Date.now();
  const result = spawnSync(command, args, { stdio: "inherit", env: { ...process.env, ...env } });
  const ok = result.status === 0;
  steps.push({
    name,
    ok,
    seconds: ((Date.now() - started) / 1000).toFixed(1),
    exit: result.signal ?? result.status ?? result.error?.message,
  });
  return ok;
}

const npx = "npx";
run("typecheck", "npm", ["run", "typecheck"]);
run("lint", "npm", ["run", "lint"]);
// The fuzzing's first 400 cases of each route here (the same seed's first 400 of `npm run
// test:security`'s thousand): the fuzz shards were most of the security suite's time, and the whole
// run must stay well inside CI's limit on two cores. FUZZ_CASES_PER_ROUTE set outside wins.
run(
  "unit + integration",
  npx,
  ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile=${out}/vitest.json`],
  { FUZZ_CASES_PER_ROUTE: process.env.FUZZ_CASES_PER_ROUTE ?? "400" },
);
run("security summary", "node", ["scripts/security-summary.mjs"]);
// The compatibility table from this run's compat tests must be the committed one, all passing.
run("compatibility table", "node", [
  "scripts/compat-table.mjs",
  "--report",
  `${out}/vitest.json`,
  "--out",
  `${out}/compatibility.md`,
  "--check",
  "docs/compatibility.md",
  ...(process.env.TEST_DATABASE_URL ? [] : ["--pglite-only"]),
]);
run("build web", "npm", ["run", "build"]);
run("end-to-end", npx, ["playwright", "test", "-c", "e2e/playwright.config.ts"], {
  PLAYWRIGHT_JSON_OUTPUT_NAME: path.resolve(out, "playwright.json"),
});

let passed = 0;
let failed = 0;
if (existsSync(`${out}/vitest.json`)) {
  const report = JSON.parse(readFileSync(`${out}/vitest.json`, "utf8"));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  console.log(
    `\nvitest: ${report.numPassedTests} passed, ${report.numFailedTests} failed (${report.numTotalTests} total)`,
  );
  // CI keeps only the end of the output: name every failure here, with the start of its message.
  for (const file of report.testResults ?? []) {
    const failures = (file.assertionResults ?? []).filter((test) => test.status === "failed");
    if (failures.length === 0 && file.status === "failed")
      console.log(`  FAILED ${path.relative(process.cwd(), file.name)}: ${firstLine(file.message)}`);
    for (const test of failures)
      console.log(
        `  FAILED ${path.relative(process.cwd(), file.name)} › ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`,
      );
  }
}
if (existsSync(path.resolve(out, "playwright.json"))) {
  const { stats } = JSON.parse(readFileSync(path.resolve(out, "playwright.json"), "utf8"));
  passed += stats.expected + stats.flaky;
  failed += stats.unexpected;
  console.log(`e2e: ${stats.expected + stats.flaky} passed, ${stats.unexpected} failed`);
}

function firstLine(message) {
  return (
    String(message ?? "")
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.slice(0, 300) ?? ""
  );
}

// Errors no test caught fail the vitest step with every test passed: say which (vitest.config.ts).
const unhandled = `${out}/unhandled-errors.txt`;
if (existsSync(unhandled))
  console.log(`\nerrors outside any test (${unhandled}):\n${readFileSync(unhandled, "utf8").slice(0, 6000)}`);

console.log("\nsteps:");
for (const step of steps)
  console.log(
    `  ${step.ok ? "ok  " : "FAIL"} ${step.name} (${step.seconds}s${step.ok ? "" : `, exit ${step.exit}`})`,
  );
// What this machine's settings left out, and why (vitest.config.ts decides; this says it).
const skipped = [];
if (!process.env.TEST_DATABASE_URL)
  skipped.push(
    "the integration suite on PostgreSQL and the *.pg.test.ts files (several processes on one database, the money attack, the database cut under load): TEST_DATABASE_URL is not set",
  );
if (!process.env.REDIS_URL)
  skipped.push("the *.redis.*test.ts files (rate limits shared by several processes): REDIS_URL is not set");
if (skipped.length > 0) {
  console.log("\nskipped suites:");
  for (const line of skipped) console.log(`  ${line}`);
}
const allOk = steps.every((step) => step.ok);
if (passed === 0) {
  console.log("no test was executed");
  process.exit(1);
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(allOk && failed === 0 ? 0 : 1);
