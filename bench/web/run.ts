/**
 * Web budgets (issue 8, item 4): "production build served by the real server; Lighthouse (npm
 * `lighthouse` with Debian Chromium) on the landing page and, signed in, the dashboard; JS
 * shipped on first load per route (gzip) from the build manifest."
 *
 * Not a test: it builds the web app, measures first-load JS per route from Vite's manifest,
 * starts the real server (fresh PGlite), runs Lighthouse (mobile and desktop profiles) on /
 * signed out and on /dashboard after a real sign-up, prints a
 * table and rewrites the "## Web budgets (issue 8)" section of bench/RESULTS.md.
 * Run with `npm run bench:web`.
 *
 * Env: BENCH_PORT (default 4300), CHROMIUM_PATH (default /usr/bin/chromium),
 *      BENCH_SKIP_BUILD=1 to reuse apps/web/dist, BENCH_LHR_DIR to keep each Lighthouse report, BENCH_RUNS (Lighthouse runs per page, default 3;
 *      the median score is kept, as Lighthouse's docs advise).
 */
import { type ChildProcess, execSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { type BrowserContext, chromium } from "@playwright/test";
import lighthouse, { type Config } from "lighthouse";
import desktopConfig from "lighthouse/core/config/desktop-config.js";
import { loadAverage, machineSummary, writeResultsSection } from "../lib/results.ts";

const root = path.resolve(import.meta.dirname, "../..");
const dist = path.join(root, "apps/web/dist");
const port = Number(process.env.BENCH_PORT ?? 4300);
const baseURL = `http://localhost:${port}`;
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const runs = Number(process.env.BENCH_RUNS ?? 3);

const LIGHTHOUSE_TARGET = 95;
/** First-load JS budgets (KB gzip) of issue 8; other routes are reported without a budget. */
const budgets: Record<string, number> = { "/": 150, "/dashboard": 250 };

/** Routes and the module the router loads for each (apps/web/src/app/router.tsx); "" = eager. */
const routes: Array<[string, string]> = [
  ["/", ""],
  ["/login", ""],
  ["/dashboard", "src/features/applications/dashboard-page.tsx"],
  ["/applications/:slug", "src/features/applications/application-detail-page.tsx"],
  ["/applications/:slug/analytics", "src/features/analytics/application-analytics-page.tsx"],
  ["/analytics", "src/features/analytics/global-analytics-page.tsx"],
  ["/applications/:slug/billing", "src/features/billing/application-billing-page.tsx"],
  ["/prompts/:slug", "src/features/prompts/prompt-editor-page.tsx"],
  ["/prompt-builder", "src/features/prompts/prompt-builder-page.tsx"],
  ["/workflows/:slug", "src/features/workflows/workflow-editor-page.tsx"],
  ["/wallet", "src/features/wallet/wallet-page.tsx"],
];

interface ManifestChunk {
  file: string;
  imports?: string[];
  css?: string[];
  isEntry?: boolean;
}

function log(message: string) {
  console.log(`[bench:web] ${message}`);
}

/** Gzip size (level 9, as served: the build also writes .gz beside each file) of every file the route fetches before rendering. */
function firstLoad(manifest: Record<string, ManifestChunk>, module: string) {
  const files = new Set<string>();
  const visit = (key: string) => {
    const chunk = manifest[key];
    if (!chunk || files.has(chunk.file)) return;
    files.add(chunk.file);
    for (const imported of chunk.imports ?? []) visit(imported);
  };
  visit("index.html");
  // The page's script (src/boot.ts) imports the app (src/main.tsx) on every route, after the first paint.
  visit("src/main.tsx");
  if (module) visit(module);
  let js = 0;
  for (const file of files) js += gzipSync(readFileSync(path.join(dist, file)), { level: 9 }).length;
  return { files: files.size, kb: js / 1024 };
}

async function waitForServer(url: string, server: ChildProcess) {
  for (let i = 0; i < 120; i++) {
    if (server.exitCode !== null) throw new Error(`the server exited with ${server.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`${url} did not answer within 60 s`);
}

interface Scores {
  performance: number;
  accessibility: number;
  fcp: number;
  lcp: number;
  tbt: number;
  cls: number;
}

/** Lighthouse's two stock profiles: mobile (its default) and desktop. */
const profiles: Array<[string, Config | undefined]> = [
  ["mobile", undefined],
  ["desktop", desktopConfig],
];

async function audit(
  context: BrowserContext,
  url: string,
  debuggingPort: number,
  config: Config | undefined,
): Promise<Scores> {
  const all: Scores[] = [];
  for (let i = 0; i < runs; i++) {
    await clearHttpCache(context);
    const result = await lighthouse(
      url,
      {
        port: debuggingPort,
        output: "json",
        logLevel: "error",
        onlyCategories: ["performance", "accessibility"],
        // Keep the signed-in session (localStorage); the HTTP cache is cleared before (clearHttpCache).
        disableStorageReset: true,
      },
      config,
    );
    const lhr = result?.lhr;
    if (!lhr) throw new Error(`Lighthouse returned nothing for ${url}`);
    if (lhr.runtimeError) throw new Error(`Lighthouse: ${lhr.runtimeError.message}`);
    if (!lhr.finalDisplayedUrl.startsWith(url)) {
      throw new Error(`Lighthouse ended on ${lhr.finalDisplayedUrl}, not ${url}: was the page redirected?`);
    }
    if (process.env.BENCH_LHR_DIR) {
      const name = `${new URL(url).pathname.replaceAll("/", "_") || "_"}-${config ? "desktop" : "mobile"}-${i}.json`;
      writeFileSync(path.join(process.env.BENCH_LHR_DIR, name), JSON.stringify(lhr));
    }
    const metric = (id: string) => lhr.audits[id]?.numericValue ?? Number.NaN;
    all.push({
      performance: Math.round((lhr.categories.performance?.score ?? 0) * 100),
      accessibility: Math.round((lhr.categories.accessibility?.score ?? 0) * 100),
      fcp: metric("first-contentful-paint"),
      lcp: metric("largest-contentful-paint"),
      tbt: metric("total-blocking-time"),
      cls: metric("cumulative-layout-shift"),
    });
    const failing = Object.values(lhr.audits)
      .filter((a) => a.score !== null && a.score < 1 && a.scoreDisplayMode === "binary")
      .map((a) => a.id);
    if (failing.length > 0 && i === 0) log(`${url}: audits not passed: ${failing.join(", ")}`);
  }
  all.sort((a, b) => a.performance - b.performance);
  return all[Math.floor(all.length / 2)] as Scores;
}

/**
 * Every run starts with an empty HTTP cache, as a first visit does. Lighthouse's own reset would
 * also clear localStorage, which holds the signed-in session, so it is off (disableStorageReset).
 */
async function clearHttpCache(context: BrowserContext) {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.clearBrowserCache");
  await cdp.detach();
  await page.close();
}

async function main() {
  if (!process.env.BENCH_SKIP_BUILD) {
    log("building the web app");
    execSync("npm run build", { cwd: root, stdio: "inherit" });
  }
  const manifest = JSON.parse(readFileSync(path.join(dist, ".vite/manifest.json"), "utf8"));
  const sizes = routes.map(([route, module]) => ({ route, ...firstLoad(manifest, module) }));

  const dataDir = mkdtempSync(path.join(os.tmpdir(), "pm-bench-web-"));
  const profileDir = mkdtempSync(path.join(os.tmpdir(), "pm-bench-chromium-"));
  const server = spawn(process.execPath, ["apps/api/src/main.ts"], {
    cwd: root,
    env: { ...process.env, PORT: String(port), PUBLIC_URL: baseURL, DATA_DIR: dataDir, LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const debuggingPort = port + 1;
  try {
    await waitForServer(`${baseURL}/readyz`, server);
    const context = await chromium.launchPersistentContext(profileDir, {
      executablePath: chromiumPath,
      // Chromium's own headless mode: Lighthouse needs a page that paints (NO_FCP otherwise).
      headless: false,
      args: [
        "--headless=new",
        `--remote-debugging-port=${debuggingPort}`,
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-dev-shm-usage",
      ],
    });
    try {
      const scores: Array<{ page: string; profile: string; scores: Scores }> = [];
      const auditAll = async (page: string) => {
        for (const [profile, config] of profiles) {
          log(`Lighthouse ${profile} on ${page}`);
          scores.push({
            page,
            profile,
            scores: await audit(context, `${baseURL}${page}`, debuggingPort, config),
          });
        }
      };
      await auditAll("/");

      log("signing up through the embedded issuer");
      const page = await context.newPage();
      await page.goto(`${baseURL}/register`);
      await page.getByRole("button", { name: "Create Account" }).click();
      await page.getByLabel("Display name").fill("Bench Creator");
      await page.getByLabel("Email").fill(`bench-${Date.now()}@example.com`);
      await page.getByLabel("Password").fill("Sturdy-pass-42");
      await page.getByRole("button", { name: "Create account" }).click();
      await page.waitForURL(`${baseURL}/dashboard`);
      await page.getByRole("heading", { name: "Dashboard", level: 1 }).waitFor();
      await page.close();

      await auditAll("/dashboard");
      report(sizes, scores);
    } finally {
      await context.close();
    }
  } finally {
    server.kill("SIGTERM");
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(profileDir, { recursive: true, force: true });
  }
}

function report(
  sizes: Array<{ route: string; files: number; kb: number }>,
  scores: Array<{ page: string; profile: string; scores: Scores }>,
) {
  const pass = (ok: boolean) => (ok ? "PASS" : "FAIL");
  const lines = [
    "## Web budgets (issue 8)",
    "",
    `Run ${new Date().toISOString()} with \`npm run bench:web\` (bench/web/run.ts).`,
    "",
    `- Machine: ${machineSummary()}; Chromium ${chromiumVersion()}.`,
    `- Load average (1/5/15 min) at the end: ${loadAverage()}.`,
    "- Production build served by the real server (brotli/gzip precompressed, hashed assets immutable).",
    `- Lighthouse ${lighthouseVersion()}, both stock profiles: mobile (simulated slow 4G, 4x CPU slowdown)` +
      ` and desktop; median of ${runs} runs per page and profile by performance score. / is audited signed out,` +
      " /dashboard after a real sign-up.",
    "",
    "| Page | Profile | Performance | Accessibility | FCP (ms) | LCP (ms) | TBT (ms) | CLS | Target | Result |",
    "|---|---|---:|---:|---:|---:|---:|---:|---|---|",
    ...scores.map(({ page, profile, scores: s }) => {
      const ok = s.performance >= LIGHTHOUSE_TARGET && s.accessibility >= LIGHTHOUSE_TARGET;
      return `| ${page} | ${profile} | ${s.performance} | ${s.accessibility} | ${s.fcp.toFixed(0)} | ${s.lcp.toFixed(0)} | ${s.tbt.toFixed(0)} | ${s.cls.toFixed(3)} | both ≥ ${LIGHTHOUSE_TARGET} | ${pass(ok)} |`;
    }),
    "",
    "First-load JavaScript per route (entry chunk + the route's chunk and their static imports, gzip -9):",
    "",
    "| Route | Files | JS (KB gzip) | Budget | Result |",
    "|---|---:|---:|---:|---|",
    ...sizes.map(({ route, files, kb }) => {
      const budget = budgets[route];
      return `| ${route} | ${files} | ${kb.toFixed(1)} | ${budget ? `≤ ${budget}` : "—"} | ${budget ? pass(kb <= budget) : "—"} |`;
    }),
    "",
  ];
  const section = lines.join("\n");
  console.log(`\n${section}`);
  writeResultsSection("## Web budgets (issue 8)", section);
  log("wrote bench/RESULTS.md");
}

function chromiumVersion(): string {
  try {
    return execSync(`${chromiumPath} --version`, { encoding: "utf8" })
      .trim()
      .replace(/^Chromium /, "");
  } catch {
    return "?";
  }
}

function lighthouseVersion(): string {
  return JSON.parse(readFileSync(path.join(root, "node_modules/lighthouse/package.json"), "utf8")).version;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
