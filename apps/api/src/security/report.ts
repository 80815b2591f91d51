import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";

const dir = path.resolve(import.meta.dirname, "../../../../.tmp/security");

/** Appends one figure for the `npm run test:security` summary table (see scripts/security-summary.mjs). */
export function recordSecurityFigure(name: string, value: number): void {
  mkdirSync(dir, { recursive: true });
  appendFileSync(path.join(dir, "figures.jsonl"), `${JSON.stringify({ name, value, at: Date.now() })}\n`);
}
