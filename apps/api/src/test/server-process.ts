import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { freePort } from "./server.ts";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A real server process (`node apps/api/src/main.ts`), as an operator runs it. */
export interface ServerProcess {
  name: string;
  port: number;
  baseUrl: string;
  child: ChildProcess;
  exited: Promise<void>;
  isAlive(): boolean;
  /** The last 20 kB of its stdout and stderr. */
  output(): string;
}

/**
 * Starts `node apps/api/src/main.ts` with a clean environment (PATH, HOME, TMPDIR and `env`) and
 * waits for /readyz. Give the `port` of a killed process to restart it where clients expect it;
 * a `logFile` keeps all of its output (appended, so restarts share one file).
 */
export async function startServerProcess(
  name: string,
  env: Record<string, string>,
  options: { port?: number; readyTimeoutMs?: number; logFile?: string } = {},
): Promise<ServerProcess> {
  const port = options.port ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;
  const inherited: Record<string, string> = {};
  for (const key of ["PATH", "HOME", "TMPDIR"]) {
    const value = process.env[key];
    if (value) inherited[key] = value;
  }
  const child = spawn(process.execPath, ["apps/api/src/main.ts"], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...inherited,
      NODE_ENV: "test",
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_URL: baseUrl,
      LOG_LEVEL: "warn",
      ...env,
    },
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
    if (options.logFile) appendFileSync(options.logFile, chunk);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  let alive = true;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      alive = false;
      resolve();
    });
    child.once("error", (error) => {
      output += `\nspawn error: ${error.message}`;
      alive = false;
      resolve();
    });
  });
  const server: ServerProcess = {
    name,
    port,
    baseUrl,
    child,
    exited,
    isAlive: () => alive,
    output: () => output,
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 45_000);
  while (Date.now() < deadline) {
    if (!alive) throw new Error(`server ${name} exited while starting:\n${output}`);
    const ready = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return server;
    await sleep(100);
  }
  child.kill("SIGKILL");
  throw new Error(`server ${name} not ready in time:\n${output}`);
}

/** SIGKILL (no shutdown hooks run) and wait, bounded, for the process to be gone. */
export async function killProcess(server: ServerProcess): Promise<void> {
  if (server.isAlive()) server.child.kill("SIGKILL");
  await Promise.race([server.exited, sleep(10_000)]);
  if (server.isAlive()) throw new Error(`server ${server.name} survived SIGKILL`);
}

/** SIGTERM: the server stops taking calls, finishes those in flight and closes its leases. */
export async function stopProcess(server: ServerProcess, timeoutMs = 20_000): Promise<void> {
  if (server.isAlive()) server.child.kill("SIGTERM");
  await Promise.race([server.exited, sleep(timeoutMs)]);
  if (server.isAlive()) await killProcess(server);
}
