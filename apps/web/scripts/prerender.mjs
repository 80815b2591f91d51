// After `vite build`: renders the first-paint shells (src/shell.tsx) to dist/shells.json, which the
// server writes into `#root` of the landing page and the dashboard (apps/api/src/web.ts), and
// inlines the entry stylesheet into dist/index.html so that first paint waits for nothing but the
// page itself (docs/decisions/016-web-first-load.md).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "vite";

const webRoot = path.resolve(import.meta.dirname, "..");
const dist = path.join(webRoot, "dist");
// Inside the workspace, so the bundle's external imports (react, react-router...) resolve.
const outDir = path.join(webRoot, "node_modules/.cache/shell");

try {
  await build({
    root: webRoot,
    logLevel: "warn",
    build: { ssr: "src/shell.tsx", outDir, emptyOutDir: true, manifest: false, copyPublicDir: false },
  });
  const { renderShells } = await import(pathToFileURL(path.join(outDir, "shell.js")).href);
  const shells = renderShells();
  writeFileSync(path.join(dist, "shells.json"), JSON.stringify(shells));

  const indexFile = path.join(dist, "index.html");
  let html = readFileSync(indexFile, "utf8");
  html = html.replace(/<link rel="stylesheet" crossorigin href="\/([^"]+\.css)">/g, (_link, file) => {
    const css = readFileSync(path.join(dist, file), "utf8");
    if (css.includes("</style")) throw new Error(`${file} cannot be inlined`);
    return `<style>${css}</style>`;
  });
  writeFileSync(indexFile, html);
  const sizes = Object.entries(shells).map(
    ([route, shell]) => `${route} ${(shell.length / 1024).toFixed(1)} KB`,
  );
  console.log(`prerendered shells: ${sizes.join(", ")}; stylesheet inlined`);
} finally {
  rmSync(outDir, { recursive: true, force: true });
}
