/**
 * First paid call after start-up (issue 20): how long the first paid call of a freshly started
 * server takes next to its 100th, over several starts, and how long each start took.
 *
 * Not a test. A loopback OpenAI-compatible upstream (bench/gateway/upstream.ts) runs in its own
 * process. A set-up server makes a paid prompt app (price 1¢, its model sent to the upstream) and a
 * consumer with a funded wallet and an API key, through the real sign-up, card top-up and key
 * routes, then stops. Then, `starts` times: a fresh Promptmint process is started on the same data
 * (start-up = from spawn until it prints that it is running, which it does once it listens), and
 * 100 paid calls are made one after another on one keep-alive connection, each timed from request
 * to the end of its answer; the first and the 100th are kept. Then the process is stopped (SIGTERM,
 * its lease goes back to the wallet) before the next start.
 *
 * measureFirstCall is also called by bench/gateway/run.ts. Alone: `node bench/gateway/first-call.ts`
 * prints a small table. Env: FIRST_CALL_DATABASE_URL (the server's DATABASE_URL; "" or "pglite" for
 * embedded PGlite; default: a scratch database `pm_firstcall_…` made on 127.0.0.1:5432 and dropped
 * after), FIRST_CALL_STARTS (5), FIRST_CALL_PORT (4280; the upstream listens on the next port),
 * FIRST_CALL_NODE_ARGS (node flags; default those of `npm start`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createCaller, fundWallet } from "../../apps/api/src/test/caller.ts";
import { createPromptApp } from "../../apps/api/src/test/live-app.ts";
import { databaseUrl, queryOnce } from "../lib/scratch-database.ts";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const CALLS = 100;
const PRICE_CENTS = 1;

export interface FirstCallOptions {
  /** The server's DATABASE_URL (an existing database; migrations run on start), or "" / "pglite" for embedded PGlite. */
  databaseUrl: string;
  /** How many fresh server processes to start and measure. */
  starts: number;
  /** Promptmint's port; the loopback upstream listens on port + 1. */
  port: number;
  /** Node flags of the server (default: those `npm start` gives it). */
  nodeArgs?: string[];
  /** Extra environment of the server. */
  env?: Record<string, string>;
}

export interface FirstCallResult {
  /** Per start: ms of the first paid call after the server listened. */
  first: number[];
  /** Per start: ms of the 100th paid call. */
  hundredth: number[];
  /** Per start: ms from spawning the process until it reported that it listens. */
  startupMs: number[];
}

/** Node flags of `npm start` (package.json), e.g. --max-semi-space-size=32. */
function startFlags(): string[] {
  const script = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).scripts.start as string;
  return (/node((?: --\S+)*) apps\/api\/src\/main\.ts/.exec(script)?.[1] ?? "").split(/\s+/).filter(Boolean);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function waitForPort(port: number, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve();
      });
      socket.once("error", () => {
        if (Date.now() > until) reject(new Error(`nothing listens on ${port} after ${timeoutMs} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

interface Server {
  child: ChildProcess;
  /** ms from spawn until the process printed that it is running. */
  startupMs: number;
  stop(): Promise<void>;
}

/** Starts Promptmint and resolves once it prints "Promptmint is running" (after it listens). */
function startServer(args: string[], env: Record<string, string>): Promise<Server> {
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, [...args, "apps/api/src/main.ts"], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output = (output + chunk).slice(-8000);
      if (output.includes("Promptmint is running")) {
        const startupMs = Number(process.hrtime.bigint() - t0) / 1e6;
        child.stdout?.off("data", onData);
        child.stdout?.resume();
        resolve({
          child,
          startupMs,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              child.once("exit", () => done());
              child.kill("SIGTERM");
            }),
        });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk) => {
      output = (output + chunk).slice(-8000);
    });
    child.once("exit", (code) =>
      reject(new Error(`Promptmint exited (${code}) before listening:\n${output}`)),
    );
  });
}

/** One POST on a keep-alive agent, timed with hrtime to the end of the answer: [status, ms, body]. */
function timedPost(
  url: string,
  headers: Record<string, string>,
  body: string,
  agent: http.Agent,
): Promise<[number, number, string]> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(url, { method: "POST", headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve([
          res.statusCode ?? 0,
          Number(process.hrtime.bigint() - t0) / 1e6,
          Buffer.concat(chunks).toString("utf8"),
        ]),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

const ok = (status: number) => status >= 200 && status < 300;

/** A paid prompt app, a consumer whose wallet is funded through the card flow, and its API key. */
async function setUpPaidApp(baseUrl: string): Promise<{ slug: string; apiKey: string }> {
  const creator = await createCaller(baseUrl, "First-call Creator");
  // 1¢ is below the starter model's floor (issue 32): priced once it runs on gpt-4o-mini.
  const { slug } = await createPromptApp(
    creator,
    {
      name: "First-call greeter",
      interaction_mode: "completion",
      visibility: "public",
      price_cents: PRICE_CENTS,
    },
    { model: "gpt-4o-mini" },
  );
  const live = await creator.api("PATCH", `/api/app/${slug}/update_status/`, { body: { status: "live" } });
  if (!ok(live.status)) throw new Error(`publish: ${live.status} ${JSON.stringify(live.body)}`);
  const consumer = await createCaller(baseUrl, "First-call Consumer");
  await fundWallet(consumer, 10_000);
  const key = await consumer.api("POST", "/api/keys/", { body: { name: "first-call" } });
  if (!ok(key.status)) throw new Error(`create key: ${key.status} ${JSON.stringify(key.body)}`);
  return { slug, apiKey: key.body.key as string };
}

export async function measureFirstCall(options: FirstCallOptions): Promise<FirstCallResult> {
  const { port } = options;
  const upstreamPort = port + 1;
  const pglite = options.databaseUrl === "" || options.databaseUrl === "pglite";
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pm-firstcall-"));
  const nodeArgs = options.nodeArgs ?? startFlags();
  const env: Record<string, string> = {
    NODE_ENV: "development",
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: pglite ? "" : options.databaseUrl,
    SECRET_KEY: "bench-secret-key-that-is-long-enough-0123456789",
    OPENAI_API_KEY: "sk-bench",
    OPENAI_BASE_URL: `http://127.0.0.1:${upstreamPort}/v1`,
    GATEWAY_RATE_LIMIT_PER_MINUTE: "1000000",
    GATEWAY_SPEND_PER_MINUTE_CENTS: "1000000000",
    LOG_LEVEL: "warn",
    ...options.env,
  };
  const upstream = spawn(process.execPath, ["bench/gateway/upstream.ts", String(upstreamPort), "0"], {
    cwd: root,
    stdio: "ignore",
  });
  const result: FirstCallResult = { first: [], hundredth: [], startupMs: [] };
  let server: Server | undefined;
  try {
    await waitForPort(upstreamPort);
    const baseUrl = `http://127.0.0.1:${port}`;
    server = await startServer(nodeArgs, env);
    const { slug, apiKey } = await setUpPaidApp(baseUrl);
    await server.stop();
    server = undefined;

    const url = `${baseUrl}/api/v1/chat/completions`;
    const headers = { "content-type": "application/json", authorization: `Bearer ${apiKey}` };
    const body = JSON.stringify({
      model: slug,
      messages: [{ role: "user", content: "Say hello in five words." }],
    });
    for (let start = 0; start < options.starts; start++) {
      server = await startServer(nodeArgs, env);
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const times: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        const [status, ms, text] = await timedPost(url, headers, body, agent);
        if (status !== 200)
          throw new Error(`call ${i + 1} after start ${start + 1} answered ${status}: ${text}`);
        times.push(ms);
      }
      agent.destroy();
      result.startupMs.push(server.startupMs);
      result.first.push(times[0] as number);
      result.hundredth.push(times[CALLS - 1] as number);
      await server.stop();
      server = undefined;
    }
    return result;
  } finally {
    await server?.stop();
    upstream.kill("SIGTERM");
    // Give PGlite's files a moment to be released before they are removed.
    await sleep(100);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** The table printed when this file is run alone. */
export function formatFirstCall(label: string, r: FirstCallResult): string {
  const row = (name: string, xs: number[]) =>
    `| ${name} | ${xs.map((x) => x.toFixed(1)).join(" · ")} | ${median(xs).toFixed(1)} |`;
  return [
    `${label}`,
    "| | per start (ms) | median (ms) |",
    "|---|---|---:|",
    row("start-up", r.startupMs),
    row("1st paid call", r.first),
    row("100th paid call", r.hundredth),
  ].join("\n");
}

async function main() {
  const starts = Number(process.env.FIRST_CALL_STARTS ?? 5);
  const port = Number(process.env.FIRST_CALL_PORT ?? 4280);
  const given = process.env.FIRST_CALL_DATABASE_URL;
  const nodeArgs = process.env.FIRST_CALL_NODE_ARGS?.split(/\s+/).filter(Boolean);
  if (given !== undefined) {
    const r = await measureFirstCall({ databaseUrl: given, starts, port, nodeArgs });
    console.log(formatFirstCall(given && given !== "pglite" ? "PostgreSQL" : "PGlite", r));
    return;
  }
  // A scratch database, dropped afterwards.
  const admin = "postgres://postgres@127.0.0.1:5432/test";
  const name = `pm_firstcall_${process.pid}_${Date.now()}`;
  const adminQuery = (text: string) => queryOnce(admin, text);
  await adminQuery(`create database ${name}`);
  try {
    const r = await measureFirstCall({ databaseUrl: databaseUrl(admin, name), starts, port, nodeArgs });
    console.log(formatFirstCall(`PostgreSQL (${os.cpus().length} cores, Node ${process.version})`, r));
  } finally {
    await adminQuery(`drop database if exists ${name} with (force)`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
