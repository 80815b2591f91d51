// CI: the oldest Node.js the README promises starts the product with `npm start` and answers a
// first paid call (apps/api/src/scripts/first-paid-call.ts); an older Node is stopped by the one
// line of scripts/require-node.mjs before anything else runs. The rest of CI stays on Node 24.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const MINIMUM = "22.22.2";
const OLD_NODE = "/usr/bin/node";
const PORT = 3290;

const minimumBin = installNode(MINIMUM);
const onMinimum = { ...process.env, PATH: `${minimumBin}${path.delimiter}${process.env.PATH}` };
check(
  execFileSync("node", ["--version"], { env: onMinimum }).toString().trim() === `v${MINIMUM}`,
  "Node version",
);

const dataDir = mkdtempSync(path.join(os.tmpdir(), "pm-minimum-node-"));
const server = spawn("npm", ["start"], {
  env: { ...onMinimum, PORT: String(PORT), DATA_DIR: dataDir, NODE_ENV: "development" },
  stdio: ["ignore", "pipe", "pipe"],
  detached: true,
});
let output = "";
server.stdout.on("data", (chunk) => (output += chunk));
server.stderr.on("data", (chunk) => (output += chunk));
try {
  await waitForHealth(`http://127.0.0.1:${PORT}/api/health`, 240_000);
  const smoke = spawnSync("node", ["apps/api/src/scripts/first-paid-call.ts"], {
    env: { ...onMinimum, BASE_URL: `http://localhost:${PORT}` },
    encoding: "utf8",
  });
  process.stdout.write(smoke.stdout);
  process.stderr.write(smoke.stderr);
  check(smoke.status === 0, `first paid call on Node ${MINIMUM}`);
} catch (error) {
  console.error(output.slice(-4000));
  console.error(error.message);
  process.exitCode = 1;
} finally {
  process.kill(-server.pid, "SIGTERM");
}
if (process.exitCode) process.exit();

if (existsSync(OLD_NODE)) {
  const version = execFileSync(OLD_NODE, ["--version"]).toString().trim();
  const onOld = { ...process.env, PATH: `${path.dirname(OLD_NODE)}${path.delimiter}${process.env.PATH}` };
  const started = spawnSync("npm", ["start", "--silent"], { env: onOld, encoding: "utf8" });
  const lines = `${started.stdout}${started.stderr}`
    .split("\n")
    .filter((line) => line.trim() && !line.startsWith("npm warn"));
  check(started.status !== 0, `npm start on ${version} stops`);
  check(
    lines.length === 1 &&
      lines[0].startsWith("Promptmint needs Node.js 24.15+") &&
      lines[0].includes(version),
    `npm start on ${version} prints one line naming the version (got: ${JSON.stringify(lines)})`,
  );
  console.log(`npm start on ${version}: ${lines[0]}`);
}

/** The `node` package of that version in a cache directory (CI has only the npm registry). */
function installNode(version) {
  const dir = path.join(os.homedir(), ".cache", `node-${version}`);
  const bin = path.join(dir, "node_modules", ".bin");
  if (!existsSync(path.join(bin, "node"))) {
    mkdirSync(dir, { recursive: true });
    execFileSync(
      "npm",
      ["install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error", `node@${version}`],
      {
        cwd: dir,
        stdio: "inherit",
      },
    );
  }
  return bin;
}

async function waitForHealth(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`npm start exited with ${server.exitCode}`);
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the server did not answer ${url} within ${timeoutMs / 1000} s`);
}

function check(condition, what) {
  if (!condition) throw new Error(`minimum Node check failed: ${what}`);
}
