// `npm run test:security`: the security project alone, then its summary table.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";

rmSync(".tmp/security", { recursive: true, force: true });
const tests = spawnSync("npx", ["vitest", "run", "--project", "security"], { stdio: "inherit" });
const summary = spawnSync("node", ["scripts/security-summary.mjs"], { stdio: "inherit" });
process.exit(tests.status === 0 && summary.status === 0 ? 0 : 1);
