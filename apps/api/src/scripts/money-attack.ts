import { parseArgs } from "node:util";
import { formatReport } from "../test/money-attack/report.ts";
import { runMoneyAttack } from "../test/money-attack/run.ts";

/**
 * `npm run test:money -- --seed N --minutes M`: the adversarial money test (issue 16) against
 * two real server processes on a fresh PostgreSQL database (TEST_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/test) and Redis (REDIS_URL, default redis://127.0.0.1:6379).
 * Prints the summary table and exits 1 on any violation; the same seed replays the same choices.
 */
const USAGE = "usage: npm run test:money -- --seed <integer> --minutes <number > 0> [--journal <file>]";
let values: { seed: string; minutes: string; journal?: string };
try {
  ({ values } = parseArgs({
    options: {
      seed: { type: "string", default: "1" },
      minutes: { type: "string", default: "1" },
      journal: { type: "string" },
    },
  }));
} catch (error) {
  // An unknown option (--help among them) is told in one line, not a stack trace.
  console.error(`${error instanceof Error ? error.message : error}\n${USAGE}`);
  process.exit(2);
}
const seed = Number(values.seed);
const minutes = Number(values.minutes);
if (!Number.isSafeInteger(seed) || !(minutes > 0)) {
  console.error(USAGE);
  process.exit(2);
}
const result = await runMoneyAttack({
  seed,
  minutes,
  adminUrl: process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test",
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  journalFile: values.journal,
  progress: (line) => console.log(`[money-attack] ${line}`),
});
console.log(formatReport(result));
process.exit(result.violations.length === 0 ? 0 : 1);
