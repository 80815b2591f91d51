#!/usr/bin/env node
/**
 * A web feature imports only `lib`, `components`, the test helpers and its own files
 * (docs/decisions/079): what two features share lives in lib/ or components/, and the app shell
 * (apps/web/src/app) composes features. Tests may also use the app's query client and router.
 * Run by `npm run lint`; exits 1 naming each import that breaks the rule.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s(?:[^'"]*?\sfrom\s)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

/** The imports of one source text: every module specifier of an import, export-from or import(). */
export function importsOf(text) {
  const found = [];
  for (const match of text.matchAll(IMPORT)) found.push(match[1] ?? match[2]);
  return found;
}

/**
 * The problems of one file at `file` (a path under `src`, the web app's src folder) with `text`:
 * each relative import that reaches another feature, or the app shell from a non-test file.
 */
export function featureImportProblems(src, file, text) {
  const relative = path.relative(src, file).split(path.sep);
  if (relative[0] !== "features" || relative.length < 3) return [];
  const feature = relative[1];
  const isTest = /\.test\.tsx?$/.test(file);
  const problems = [];
  for (const specifier of importsOf(text)) {
    if (!specifier.startsWith(".")) continue;
    const target = path.relative(src, path.resolve(path.dirname(file), specifier)).split(path.sep);
    const [top, name] = target;
    const allowed =
      top === "lib" ||
      top === "components" ||
      top === "test" ||
      (top === "features" && name === feature) ||
      (top === "app" && isTest);
    if (!allowed) {
      problems.push(
        `${path.relative(process.cwd(), file)}: imports "${specifier}" (${target.join("/")}); ` +
          `feature "${feature}" may import only lib/, components/ and its own files`,
      );
    }
  }
  return problems;
}

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx|js|jsx|mjs)$/.test(entry.name) ? [full] : [];
  });
}

/** Every problem under the web app's `src`. */
export function checkFeatureImports(src) {
  return sourceFiles(path.join(src, "features")).flatMap((file) =>
    featureImportProblems(src, file, readFileSync(file, "utf8")),
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../apps/web/src");
  const problems = checkFeatureImports(src);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(
      `\n${problems.length} cross-feature import(s): move what is shared into lib/ or components/.`,
    );
    process.exit(1);
  }
  console.log("Feature imports: every feature imports only lib/, components/ and its own files.");
}
